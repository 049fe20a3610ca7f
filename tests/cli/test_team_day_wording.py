"""Wording the team day found wrong (its log, /tmp/teamday/LOG.md): what a command says must be
what it did, and a value it refuses names the one meant."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import check, git, submit, taskfs


def test_a_refusal_names_who_made_the_transition_quoted_once(repo: Path) -> None:
    task = submit(repo, acceptanceCheck={"passFailCommand": "true", "endToEndVerification": "-"})
    assert taskfs("claim", task, "--agent", "builder").code == 0
    check(task)
    assert taskfs("complete", task, "--agent", "builder").code == 0
    refused = taskfs("claim", task, "--agent", "builder", "--json")
    assert (refused.code, refused.codes) == (1, ["transition_not_allowed"])
    message = refused.json["errors"][0]["message"]
    # It said "completed since 'builder''s transition": a name quoted, then a quote doubled.
    assert "since builder's transition" in message
    assert "''" not in message
    assert refused.json["errors"][0]["by"] == "builder"


def test_init_says_it_appended_to_a_gitignore_it_did_not_create(repo: Path) -> None:
    (repo / ".gitignore").write_text("LOG.md\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore the log")
    added = taskfs("init", "--gitignore", "--json")
    assert added.code == 0, added.stdout
    assert ".gitignore" not in added.json["created"]
    assert added.json["appended"] == [".gitignore"]
    assert "__pycache__/" in added.json["gitignore"]["added"]
    assert (repo / ".gitignore").read_text().startswith("LOG.md\n")
    # In words: appended, not created.
    (repo / ".gitignore").write_text("LOG.md\n")
    git(repo, "commit", "-q", "-am", "back to the log alone")
    said = taskfs("--lang", "en", "init", "--gitignore")
    assert said.code == 0
    assert said.stdout.splitlines()[0].startswith("appended to .gitignore: __pycache__/")
    assert "created .gitignore" not in said.stdout


def test_init_says_it_created_a_gitignore_there_was_none_of(tmp_path: Path) -> None:
    made = taskfs("init", "--gitignore", "--json", cwd=tmp_path)
    assert made.code == 0, made.stdout
    assert ".gitignore" in made.json["created"]
    assert made.json["appended"] == []


def test_an_unknown_state_names_the_one_meant(repo: Path) -> None:
    for command in (("ls",), ("ls", "--json")):
        said = taskfs("--lang", "en", *command, "--state", "done")
        assert said.code == 2, (command, said.stdout)
        assert "did you mean 'completed'?" in said.stderr + said.stdout
    refused = taskfs("ls", "--state", "done", "--json")
    assert refused.codes == ["usage"]
    near = taskfs("--lang", "en", "ls", "--state", "intak")
    assert "did you mean 'intake'?" in near.stderr
    # A word near no state names none, and lists them all, as before.
    far = taskfs("--lang", "en", "ls", "--state", "zzz")
    assert "did you mean" not in far.stderr
    assert "completed" in far.stderr


def test_a_refused_claim_names_the_holder_not_who_answered_its_question(repo: Path) -> None:
    # Team day 2: the builder claimed, asked, the planner answered (input_required -> working,
    # `by: planner`); another agent's claim was refused "already claimed by 'planner'".
    task = submit(repo, to=None)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    asked = taskfs("send", task, "--agent", "builder", "--status", "needs_input", "which?")
    assert asked.code == 0, asked.stderr
    answered = taskfs("send", task, "--agent", "planner", "--in-reply-to", "last", "this one")
    assert answered.code == 0, answered.stderr
    refused = taskfs("--lang", "en", "claim", task, "--agent", "reviewer", "--json")
    assert (refused.code, refused.codes) == (1, ["transition_not_allowed"])
    error = refused.json["errors"][0]
    assert (error["by"], error["holder"]) == ("planner", "builder")
    assert "claimed by 'builder'" in error["message"]
    assert "'planner'" not in error["message"]
