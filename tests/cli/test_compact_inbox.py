"""The inbox is compact (issue 38, item 10): it cost 41% of an agent's tokens, because a
question appeared in both `questions` and `unread`, every record carried eight bookkeeping
keys, and an intake repeated its whole problem list. A record is now its id, task, sender,
status and text, shown once; `--full` gives every record whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers import submit, taskfs

COMPACT = {"msg_id", "task_id", "from", "status", "text"}


def inbox(agent: str, *extra: str) -> Any:
    result = taskfs("inbox", "--agent", agent, "--json", *extra)
    assert result.code == 0, result.stdout + result.stderr
    return result.json


def test_a_question_is_shown_once_as_a_compact_record(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    asked = taskfs("send", task, "log it?", "--agent", "builder", "--status", "needs_input")
    assert asked.code == 0
    noted = taskfs("send", task, "still on it", "--agent", "builder", "--status", "update")
    assert noted.code == 0
    box = inbox("planner")
    questions, unread = box["questions"], box["unread"]
    assert [q["text"] for q in questions] == ["log it?"]
    assert set(questions[0]) == COMPACT | {"asOwner"}
    # Unread, the note only: the question is not listed twice ...
    assert [m["text"] for m in unread] == ["still on it"]
    assert set(unread[0]) == COMPACT
    # ... though both count as unread, and the badge says so.
    assert box["counts"] == {**box["counts"], "unread": 2, "questions": 1}
    # The whole records, on request.
    full = inbox("planner", "--full")
    assert {m["text"] for m in full["unread"]} == {"log it?", "still on it"}
    assert {"delivery", "signed", "verified", "file", "at"} <= set(full["unread"][0])


def test_a_request_names_what_it_lacks_without_its_problem_list(repo: Path) -> None:
    opened = taskfs("intake", "open", "add a flag", "--agent", "alice", "--to", "bob", "--json")
    assert opened.code == 0, opened.stdout
    (request,) = inbox("bob")["requests"]
    assert request["from"] == "alice"
    assert request["text"] == "add a flag"
    assert "outputFormat" in request["missing"]
    assert "problems" not in request
    (mine,) = inbox("alice")["requested"]
    assert set(mine) == {"id", "to", "missing"}


def test_the_inbox_offers_to_claim_only_what_a_claim_would_take(repo: Path) -> None:
    """The team day: bob's inbox said `2 to claim` and `claim mul`, where `mul` waited on an
    unfinished task and its claim was refused (dependencies_unresolved)."""
    first = submit(repo, id="first", filesAndInterfaces=["src/first.py"])
    submit(repo, id="second", dependsOn=[first], filesAndInterfaces=["src/second.py"])
    text = taskfs("inbox", "--agent", "builder").stdout
    assert text.splitlines()[0].startswith("builder: 1 to claim")
    rows = [line.split() for line in text.splitlines()[1:]]
    assert ["claim", "first", "from", "planner"] in rows
    assert not any(r[:2] == ["claim", "second"] for r in rows)
    assert any(r[:2] == ["waits", "second"] and "first" in " ".join(r[2:]) for r in rows)
    box = taskfs("inbox", "--agent", "builder", "--json").json
    assert box["counts"]["toClaim"] == 1
    assert [(t["id"], t["ready"]) for t in box["toClaim"]] == [("first", True), ("second", False)]
    prime = taskfs("prime", "--agent", "builder").stdout
    assert "claim first" in prime
    assert "claim second" not in prime
    assert taskfs("claim", "second", "--agent", "builder", "--json").codes == [
        "dependencies_unresolved"
    ]
