"""Bytecode under an owned folder is ignored, never committed (issue 38, item 9).

Running the tests leaves `__pycache__/*.pyc` beside the owned sources: untracked, they made the
check's tree dirty, and `complete` refused with `work_uncommitted` advising to commit them.
The advice now names `.gitignore`, and `taskfs init` offers one for the usual build outputs."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import git, submit, taskfs


def working_task_with_bytecode(repo: Path) -> str:
    task = submit(
        repo,
        filesAndInterfaces=["src/**"],
        acceptanceCheck={"passFailCommand": "test -f src/mod.py", "endToEndVerification": "e"},
    )
    assert taskfs("claim", task, "--agent", "builder").code == 0
    (repo / "src" / "__pycache__").mkdir(parents=True)
    (repo / "src" / "mod.py").write_text("X = 1\n")
    (repo / "src" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\x00bytecode")
    git(repo, "add", "src/mod.py")
    git(repo, "commit", "-q", "-m", "the work")
    return task


def test_the_advice_names_gitignore_and_init_offers_one(repo: Path) -> None:
    task = working_task_with_bytecode(repo)
    checked = taskfs("check", task, "--agent", "builder", "--json").json
    assert checked["workTree"] == "dirty"
    assert any(".gitignore" in note for note in checked["notes"])
    refused = taskfs("complete", task, "--agent", "builder", "--json")
    assert refused.codes == ["work_uncommitted"]
    message = refused.json["errors"][0]["message"]
    assert ".gitignore" in message
    assert "commit src/__pycache__" not in message
    # init offers the ignore file (and changes nothing without being asked) ...
    offered = taskfs("init", "--json").json
    assert "__pycache__/" in offered["gitignore"]["missing"]
    assert not (repo / ".gitignore").exists()
    assert "--gitignore" in taskfs("init").stdout
    # ... and writes it, committed, when asked; a second time adds nothing.
    added = taskfs("init", "--gitignore", "--json").json
    assert "__pycache__/" in added["gitignore"]["added"]
    assert "__pycache__/" in (repo / ".gitignore").read_text().splitlines()
    assert git(repo, "status", "--porcelain", "--", ".gitignore") == ""
    assert taskfs("init", "--gitignore", "--json").json["gitignore"]["added"] == []
    # The bytecode no longer counts: the check is clean and the task completes.
    again = taskfs("check", task, "--agent", "builder", "--json").json
    assert again["workTree"] == "clean", again
    assert taskfs("complete", task, "--agent", "builder").code == 0


def test_an_existing_gitignore_keeps_its_lines(repo: Path) -> None:
    (repo / ".gitignore").write_text("secrets.txt\n__pycache__\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore")
    added = taskfs("init", "--gitignore", "--json").json["gitignore"]["added"]
    assert "__pycache__/" not in added  # already named, without the slash
    lines = (repo / ".gitignore").read_text().splitlines()
    assert lines[:2] == ["secrets.txt", "__pycache__"]
    assert "node_modules/" in lines
