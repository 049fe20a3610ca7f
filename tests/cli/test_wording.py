"""Wording an agent can act on (issue 29): what a command says when there is nothing, or one,
or when the evidence it records cannot help."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import git, submit, taskfs, write_envelope


def test_bind_says_why_nothing_was_granted(repo: Path, tmp_path: Path) -> None:
    bare = submit(repo, id="bare")
    said = taskfs("bind", bare, "--agent", "builder").stdout
    assert "no tools granted: the envelope requests none (toolsAllowed)" in said
    asking = submit(repo, id="asking", toolsAllowed=["bash"], filesAndInterfaces=["x/**"])
    assert "there is no capability ledger here" in taskfs("bind", asking, "--agent", "b").stdout


def test_check_of_a_canceled_task_says_it_cannot_complete_it(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("move", task, "canceled", "--agent", "planner").code == 0
    text = taskfs("check", task, "--agent", "builder")
    assert f"{task} is canceled: this evidence cannot complete it" in text.stdout
    doc = taskfs("check", task, "--agent", "builder", "--json").json
    assert doc["state"] == "canceled"
    assert doc["notes"] == [f"{task} is canceled: this evidence cannot complete it"]


def test_one_is_said_in_the_singular(repo: Path, tmp_path: Path) -> None:
    path = tmp_path / "weak.yaml"
    write_envelope(path, objective="Fix login.")  # one warning: too short
    said = taskfs("lint", str(path)).stdout
    assert "1 contract checked, 1 warning" in said
    (repo / "notes.txt").write_text("x\n")
    git(repo, "add", "notes.txt")
    assert "(1 path): clean" in taskfs("guard", "--agent", "builder").stdout


def test_an_answered_question_is_no_longer_unread_and_shows_once_in_the_log(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    asked = taskfs("send", task, "which way?", "--agent", "builder", "--status", "needs_input")
    msg = asked.stdout.split(":", 1)[0]
    assert taskfs("inbox", "--agent", "planner", "--json").json["counts"]["unread"] == 1
    assert taskfs("send", task, "this way", "--agent", "planner", "--in-reply-to", msg).code == 0
    assert taskfs("inbox", "--agent", "planner", "--json").json["counts"]["unread"] == 0
    log = taskfs("log", task).stdout
    assert log.count("which way?") == 1
    assert log.count("this way") == 1
    assert "input_required  by builder: needs_input: which way?" in log
