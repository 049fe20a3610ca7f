"""`taskfs prime`: the start-up text for an agent, short enough for any context."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import submit, taskfs

# A generous reading of "well under 2,000 tokens": English runs near 4 characters and 0.75
# words per token, so these bounds sit near 1,000 tokens whichever way one counts.
MAX_CHARS = 4_000
MAX_WORDS = 700


def test_prime_names_the_agent_and_what_waits_for_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    waiting = submit(repo)
    asked = submit(repo, filesAndInterfaces=["docs/**"], **{"from": "builder", "to": "planner"})
    assert taskfs("claim", asked, "--agent", "planner").code == 0
    question = taskfs(
        "send", asked, "Which tone?", "--agent", "planner", "--status", "needs_input", "--json"
    )
    monkeypatch.setenv("TASKFS_AGENT", "builder")
    result = taskfs("prime")
    assert result.code == 0, result.stderr
    text = result.stdout
    assert "You are agent 'builder'" in text
    assert "builder: 1 to claim, 1 to answer, 0 to review" in text
    assert f"claim {waiting}" in text
    assert f"answer {question.json['msg_id']}" in text
    # The steps are the ones this agent needs now: it has a question to answer and a task
    # to claim, and holds nothing, so there is nothing to ask or complete yet.
    assert "taskfs send ID --in-reply-to MSG_ID" in text
    assert "taskfs claim ID" in text
    assert "--status needs_input" not in text
    assert len(text) < MAX_CHARS
    assert len(text.split()) < MAX_WORDS


def test_prime_without_an_agent_says_how_to_name_one(repo: Path) -> None:
    result = taskfs("prime", "--json")
    assert result.code == 0
    assert "TASKFS_AGENT" in result.json["text"]
    assert len(result.json["text"]) < MAX_CHARS


def test_prime_stays_short_with_a_full_inbox(repo: Path) -> None:
    for n in range(20):
        submit(repo, filesAndInterfaces=[f"m{n}/**"], objective="x " * 400)
    text = taskfs("prime", "--agent", "builder").stdout
    assert "builder: 20 to claim" in text
    assert len(text) < MAX_CHARS
    assert len(text.split()) < MAX_WORDS


def held_repo(repo: Path) -> dict[str, str]:
    """A repository where builder holds three tasks (one working, one waiting for an answer to
    its question, one canceled under it) and is offered two more, one blocked by the third."""
    ids = {}
    for name in ("work", "waits", "stopped", "blocker", "free"):
        ids[name] = submit(repo, id=f"t-{name}", filesAndInterfaces=[f"{name}/**"])
    ids["blocked"] = submit(
        repo, id="t-blocked", filesAndInterfaces=["b/**"], dependsOn=["t-waits"]
    )
    for name in ("work", "waits", "stopped"):
        assert taskfs("claim", ids[name], "--agent", "builder").code == 0
    asked = taskfs(
        "send",
        ids["waits"],
        "Should empty passwords log a warning?",
        "--agent",
        "builder",
        "--status",
        "needs_input",
        "--json",
    )
    assert asked.code == 0, asked.stdout
    ids["question"] = asked.json["msg_id"]
    canceled = taskfs(
        "send",
        ids["stopped"],
        "Plan changed: drop the legacy path.",
        "--agent",
        "planner",
        "--status",
        "canceled",
        "--json",
    )
    assert canceled.code == 0, canceled.stdout
    return ids


def test_a_fresh_agent_resumes_the_work_it_holds_first(repo: Path) -> None:
    ids = held_repo(repo)
    result = taskfs("prime", "--agent", "builder")
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    held = lines[lines.index("Resume first, the tasks you hold:") :][:4]
    assert held[1].startswith(f"- {ids['work']} (working): Fix the login bug")
    assert held[2].startswith(f"- {ids['waits']} waits for an answer to your question ")
    assert ids["question"] in held[2]
    assert "Should empty passwords log a warning?" in held[2]
    assert held[3].startswith(f"- STOP {ids['stopped']}: canceled by planner: Plan changed")
    # They come before anything else that waits: right after the badge line.
    assert lines.index("Resume first, the tasks you hold:") == 4
    text = result.stdout
    assert f"waits {ids['blocked']}" in text  # offered only once a claim would take it
    assert f"(blocked by {ids['waits']} (input_required))" in text
    assert text.index(f"claim {ids['free']}") < text.index(f"waits {ids['blocked']}")
    # Holding working tasks, it needs the steps of working: ask, progress, done.
    assert "taskfs check ID" in text
    assert "--status needs_input" in text
    assert len(text) < MAX_CHARS
    assert len(text.split()) < MAX_WORDS


def test_prime_for_mcp_names_the_tools_and_a_read_cancellation_drops_out(repo: Path) -> None:
    ids = held_repo(repo)
    text = taskfs("prime", "--agent", "builder", "--mcp").stdout
    assert "agent_check(task_id, text)" in text
    assert "agent_complete(task_id, artifacts)" in text
    assert "taskfs " not in text.replace("# taskfs", "")
    assert taskfs("read", "--agent", "builder", *_unread(ids["stopped"])).code == 0
    again = taskfs("prime", "--agent", "builder").stdout
    assert f"STOP {ids['stopped']}" not in again
    assert f"{ids['work']} (working)" in again


def _unread(task: str) -> list[str]:
    shown = taskfs("messages", task, "--json").json
    return [m["msg_id"] for m in shown["messages"] if m.get("status") == "canceled"]


def test_the_text_inbox_leads_with_held_work_and_lists_unread_cancellations_first(
    repo: Path,
) -> None:
    ids = held_repo(repo)
    assert taskfs("send", ids["work"], "Also cover the API path.", "--agent", "planner").code == 0
    lines = taskfs("inbox", "--agent", "builder").stdout.splitlines()
    assert lines[1].split() == ["holding", ids["work"], "working"]
    assert lines[2].split()[:2] == ["waiting", ids["waits"]]
    assert lines[3].split()[:2] == ["STOP", ids["stopped"]]
    unread = [line for line in lines if line.lstrip().startswith("unread")]
    assert len(unread) == 2
    assert f"canceled from planner on {ids['stopped']}: Plan changed" in unread[0]
    assert f"message from planner on {ids['work']}: Also cover the API path." in unread[1]
