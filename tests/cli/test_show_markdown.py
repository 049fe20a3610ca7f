"""`show --format markdown` for review (issue 18): the conversation in full, and which
acceptance runs were made in a fresh checkout (`check --fresh`)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import git, submit, taskfs


def test_markdown_has_the_conversation_and_marks_fresh_runs(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    asked = taskfs(
        "send",
        task,
        "Which module?\nLogin or signup?",
        "--agent",
        "builder",
        "--to",
        "planner",
        "--status",
        "needs_input",
        "--json",
    )
    question = asked.json["msg_id"]
    answered = taskfs(
        "send",
        task,
        "Login only.",
        "--agent",
        "planner",
        "--to",
        "builder",
        "--in-reply-to",
        question,
        "--json",
    )
    answer = answered.json["msg_id"]
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "login.py").write_text("ok = True\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "login")
    assert taskfs("check", task, "--agent", "builder", "--fresh").code == 0
    assert taskfs("check", task, "--agent", "builder").code == 0

    out = taskfs("show", task, "--format", "markdown").stdout
    talk = out.split("#### Conversation")[1]
    assert talk.index("Which module?") < talk.index("Login only.")
    assert "> Which module?\n> Login or signup?" in talk  # lines kept, not squashed
    assert "**builder → planner** · needs_input · " in talk
    # The answer names what it answers: who asked, what kind of message, how it began.
    answers = f"answers builder's needs_input “Which module? Login or signup?” (`{question[:8]}`)"
    assert f"**planner → builder** · {answers}" in talk
    assert f"`{answer[:8]}`" in talk
    runs = out.split("#### Evidence")[1].split("#### Conversation")[0]
    lines = [line for line in runs.splitlines() if line.startswith("✅")]
    assert len(lines) == 2
    assert "**fresh checkout**" in lines[0]  # the first run was --fresh
    assert "fresh" not in lines[1]
    assert all(" s · " in line and "0000" not in line.split(" s · ")[0] for line in lines)


def test_a_task_without_messages_has_no_conversation_section(repo: Path) -> None:
    task = submit(repo)
    out = taskfs("show", task, "--format", "markdown").stdout
    assert "#### Conversation" not in out
