"""The write path's new parts: a commit that consumes a dropped file or takes one in place,
and the recovery of a writer killed at each step (simulated by writing its journal and the
files it would have made, then letting the next writer in)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from taskfs.errors import TaskfsError
from taskfs.store.git import process as git_module
from taskfs.store.repository import Repository
from taskfs.store.writer import write_journal
from tests.helpers import git, submit, taskfs


def test_a_commit_records_the_removal_of_a_tracked_file(repo: Path) -> None:
    (repo / "tasks" / "drop.yaml").write_text("dropped\n")
    git(repo, "add", "tasks/drop.yaml")
    git(repo, "commit", "-q", "-m", "pulled")
    store = Repository.open(repo)
    with store.writing() as writer:
        writer.add("tasks/t1/envelope.yaml", b"dropped\n")
        writer.remove("tasks/drop.yaml")
        writer.commit("take it in", "tester")
    assert not (repo / "tasks" / "drop.yaml").exists()
    assert git(repo, "status", "--porcelain") == ""
    changes = git(repo, "show", "--no-renames", "--name-status", "--format=", "HEAD")
    assert sorted(changes.splitlines()) == ["A\ttasks/t1/envelope.yaml", "D\ttasks/drop.yaml"]


def test_removing_the_last_file_of_a_folder_removes_the_folder_from_the_tree(repo: Path) -> None:
    (repo / "plans").mkdir()
    (repo / "plans" / "only.yaml").write_text("x\n")
    git(repo, "add", "plans")
    git(repo, "commit", "-q", "-m", "a plan")
    store = Repository.open(repo)
    with store.writing() as writer:
        writer.add("tasks/t1/envelope.yaml", b"x\n")
        writer.remove("plans/only.yaml")
        writer.commit("consume", "tester")
    assert "plans" not in git(repo, "ls-tree", "--name-only", "HEAD").splitlines()


def test_an_included_file_survives_a_failed_commit(repo: Path) -> None:
    folder = repo / "tasks" / "t1"
    folder.mkdir()
    (folder / "envelope.yaml").write_text("mine\n")
    (folder / "status").mkdir()
    (folder / "status" / "taken.yaml").write_text("someone else's\n")
    store = Repository.open(repo)
    with store.writing() as writer:
        writer.include("tasks/t1/envelope.yaml")
        writer.add("tasks/t1/status/new.yaml", b"s\n")
        writer.add("tasks/t1/status/taken.yaml", b"s\n")  # exists: the commit fails
        with pytest.raises(TaskfsError):
            writer.commit("fails", "tester")
        writer.add("tasks/t1/status/other.yaml", b"s\n")
        writer.commit("starts empty again", "tester")
    assert (folder / "envelope.yaml").read_text() == "mine\n"
    assert not (folder / "status" / "new.yaml").exists()
    assert (folder / "status" / "taken.yaml").read_text() == "someone else's\n"
    shown = git(repo, "show", "--name-only", "--format=", "HEAD").splitlines()
    assert shown == ["tasks/t1/status/other.yaml"]


def test_a_writer_killed_after_writing_everything_is_committed(repo: Path) -> None:
    (repo / "tasks" / "drop.yaml").write_text("dropped\n")
    git(repo, "add", "tasks/drop.yaml")
    git(repo, "commit", "-q", "-m", "pulled")
    placed = repo / "tasks" / "t2" / "envelope.yaml"
    placed.parent.mkdir()
    placed.write_text("in place\n")
    store = Repository.open(repo)
    paths = ["tasks/t1/envelope.yaml", "tasks/t2/status/s.yaml"]
    write_journal(
        store,
        paths,
        "killed\n\nTaskfs-Intake: t1 sha256:00 tasks/drop.yaml\n",
        "tester",
        included=["tasks/t2/envelope.yaml"],
        removed=["tasks/drop.yaml"],
    )
    for rel in paths:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("x\n")
    with store.writing():
        pass
    assert git(repo, "log", "-1", "--format=%s") == "killed"
    committed = git(repo, "show", "--no-renames", "--name-status", "--format=", "HEAD")
    assert sorted(committed.splitlines()) == [
        "A\ttasks/t1/envelope.yaml",
        "A\ttasks/t2/envelope.yaml",
        "A\ttasks/t2/status/s.yaml",
        "D\ttasks/drop.yaml",
    ]
    # the consumed file stays for the watcher, which knows its bytes were taken in
    assert (repo / "tasks" / "drop.yaml").exists()
    assert not list((store.state_dir() / "journal").iterdir())


def test_a_writer_killed_midway_leaves_nothing_not_even_a_folder(repo: Path) -> None:
    placed = repo / "tasks" / "t2" / "envelope.yaml"
    placed.parent.mkdir()
    placed.write_text("in place\n")
    store = Repository.open(repo)
    paths = ["tasks/t1/envelope.yaml", "tasks/t1/status/s.yaml", "tasks/t2/status/s.yaml"]
    write_journal(store, paths, "killed", "tester", included=["tasks/t2/envelope.yaml"])
    (repo / "tasks" / "t1" / "status").mkdir(parents=True)  # made, then killed
    (repo / "tasks" / "t1" / "envelope.yaml").write_text("x\n")
    (repo / "tasks" / "t1" / "status" / ".s.yaml.abc123.tmp").write_text("half")
    (repo / "tasks" / "t2" / "status").mkdir()
    with store.writing():
        pass
    assert not (repo / "tasks" / "t1").exists()
    assert not (repo / "tasks" / "t2" / "status").exists()
    assert placed.read_text() == "in place\n"  # what the user wrote is never undone
    assert (repo / "tasks").is_dir()
    assert git(repo, "log", "-1", "--format=%s") == "taskfs: init"


def test_ledger_trees_are_exactly_what_git_itself_would_write(repo: Path) -> None:
    # Names that sort differently as files and as folders ("a.b" < "a/" < "a0"), an executable
    # and a symlink of the user's: the trees taskfs writes must be the ones `git add` + `git
    # write-tree` make from the same files, entry order and modes included.
    for name in ("a.b", "a0", "tasks.txt", "tasks-x"):
        (repo / name).write_text(name)
    (repo / "a").mkdir()
    (repo / "a" / "inner").write_text("inner")
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "link").symlink_to("a.b")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the user's files")
    store = Repository.open(repo)
    for rel in ("tasks/b1/envelope.yaml", "tasks/a1/envelope.yaml", "tasks/a1/status/0001.yaml"):
        with store.writing() as writer:
            writer.add(rel, rel.encode())
            writer.commit(f"add {rel}", "tester")
        assert git(repo, "write-tree") == git(repo, "rev-parse", "HEAD^{tree}")
    git(repo, "fsck", "--strict", "--no-dangling")
    assert git(repo, "status", "--porcelain") == ""


def test_a_writer_waits_out_another_git_process_holding_the_index(repo: Path) -> None:
    # An editor's or an IDE's `git status` holds .git/index.lock for a moment; a claim made
    # in that moment waits for it instead of failing.
    task = submit(repo)
    lock = repo / ".git" / "index.lock"
    lock.write_bytes(b"")
    releaser = threading.Timer(0.4, lock.unlink)
    releaser.start()
    try:
        result = taskfs("claim", task, "--agent", "builder", "--json")
    finally:
        releaser.join()
    assert result.code == 0, result.stdout
    assert taskfs("show", task, "--json").json["state"] == "working"
    assert git(repo, "status", "--porcelain") == ""


def test_a_lock_left_by_a_crashed_git_is_named_and_nothing_is_half_written(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = submit(repo)
    head = git(repo, "rev-parse", "HEAD")
    monkeypatch.setattr(git_module, "INDEX_LOCK_WAIT_SECONDS", 0.3)
    (repo / ".git" / "index.lock").write_bytes(b"")
    result = taskfs("claim", task, "--agent", "builder", "--json")
    assert result.code == 1
    assert result.codes == ["git_failed"]
    assert "index.lock" in result.json["errors"][0]["message"]
    (repo / ".git" / "index.lock").unlink()
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""
    assert taskfs("show", task, "--json").json["state"] == "submitted"
    assert taskfs("claim", task, "--agent", "builder").code == 0
