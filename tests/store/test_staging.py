"""A change of many files (`new` of many envelopes): its blobs are stored by taskfs, in the
commit's pack, before git reads the files, so git writes no object of its own; and where git's
clean conversion may change a file (an `ident` attribute, line endings of a file with carriage
returns), the commit still takes the blob the index holds, so `git status` stays clean. A new
task's folder appears by one rename; a writer killed while writing one leaves nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from taskfs.store import fs
from taskfs.store.repository import Repository
from taskfs.store.writer import write_journal
from tests.helpers import git, taskfs, write_envelope

MANY = 40  # past the count from which a commit stores its blobs first (`staging.ADDED_BY_NAME`)


def _loose_objects(repo: Path) -> set[str]:
    objects = repo / ".git" / "objects"
    return {
        f"{folder.name}{entry.name}"
        for folder in objects.iterdir()
        if len(folder.name) == 2
        for entry in folder.iterdir()
    }


def test_a_new_of_many_envelopes_leaves_no_loose_object_and_a_clean_status(repo: Path) -> None:
    count = 130  # past `packs.PACKED_FROM` objects: one pack, not loose objects
    paths = [
        write_envelope(repo.parent / f"e{n}.yaml", id=f"e{n}", filesAndInterfaces=[f"src/{n}/**"])
        for n in range(count)
    ]
    before = _loose_objects(repo)
    assert taskfs("new", *map(str, paths), "--json").code == 0
    assert git(repo, "status", "--porcelain") == ""
    # Every blob, tree and the commit are in packs, but the commit object git-style loose:
    # nothing else was written loose (git wrote no blob of its own).
    added = _loose_objects(repo) - before
    assert added <= {git(repo, "rev-parse", "HEAD")}
    # What HEAD holds is what the working tree holds, file for file.
    for n in (0, count - 1):
        rel = f"tasks/e{n}/envelope.yaml"
        assert git(repo, "show", f"HEAD:{rel}") == (repo / rel).read_text().rstrip("\n")
    assert git(repo, "fsck", "--no-dangling") == ""
    assert taskfs("show", f"e{count - 1}", "--json").json["state"] == "submitted"


def test_many_files_under_an_ident_attribute_are_committed_as_git_stores_them(
    repo: Path,
) -> None:
    (repo / ".gitattributes").write_text("tasks/** ident\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "ident on the ledger")
    store = Repository.open(repo)
    with store.writing() as writer:
        for n in range(MANY):
            writer.add(f"tasks/t{n}/envelope.yaml", f"id: t{n}\nnote: $Id: stale $\n".encode())
        writer.commit("many with ident", "tester")
    assert git(repo, "status", "--porcelain") == ""
    # git's clean side collapses the keyword: the commit holds that, not the raw bytes.
    assert git(repo, "show", "HEAD:tasks/t3/envelope.yaml") == "id: t3\nnote: $Id$"


def test_many_files_taken_in_place_with_crlf_are_committed_as_git_stores_them(
    repo: Path,
) -> None:
    (repo / ".gitattributes").write_text("* text=auto\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "line endings")
    store = Repository.open(repo)
    for n in range(MANY):
        placed = repo / "tasks" / f"t{n}" / "envelope.yaml"
        placed.parent.mkdir()
        placed.write_bytes(f"id: t{n}\r\nkind: dropped\r\n".encode())
    with store.writing() as writer:
        for n in range(MANY):
            writer.include(f"tasks/t{n}/envelope.yaml")
        writer.commit("many in place", "tester")
    assert git(repo, "status", "--porcelain") == ""
    blob = subprocess.run(
        ["git", "cat-file", "-p", "HEAD:tasks/t5/envelope.yaml"],
        cwd=repo,
        capture_output=True,
        check=True,
    ).stdout
    assert blob == b"id: t5\nkind: dropped\n"  # bytes as stored: no carriage return


def test_files_added_to_a_task_folder_that_is_there_leave_its_other_files_alone(
    repo: Path,
) -> None:
    store = Repository.open(repo)
    theirs = repo / "tasks" / "t1" / "notes.txt"
    theirs.parent.mkdir(parents=True)
    theirs.write_text("theirs\n")
    with store.writing() as writer:
        writer.add("tasks/t1/envelope.yaml", b"mine\n")
        writer.add("tasks/t1/status/0001-submitted.yaml", b"state: submitted\n")
        writer.commit("beside", "tester")
    assert theirs.read_text() == "theirs\n"
    assert git(repo, "status", "--porcelain") == "?? tasks/t1/notes.txt"


def test_a_folder_is_created_whole_or_not_at_all(tmp_path: Path) -> None:
    target = tmp_path / "tasks" / "t1"
    files = {"a/b/deep.yaml": b"d\n", "a/x.yaml": b"x\n", "envelope.yaml": b"e\n"}
    fs.create_folder(target, {**files, "status/0001.yaml": b"s\n"})
    assert (target / "status" / "0001.yaml").read_bytes() == b"s\n"
    assert all((target / rel).read_bytes() == data for rel, data in files.items())
    assert (target / "envelope.yaml").stat().st_mode & 0o777 == 0o600
    # Someone filled the folder first: refused, theirs kept, no temporary folder left.
    with pytest.raises(FileExistsError):
        fs.create_folder(target, {"envelope.yaml": b"other\n"})
    assert (target / "envelope.yaml").read_bytes() == b"e\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["t1"]


def test_a_writer_killed_while_writing_a_new_task_folder_leaves_nothing(repo: Path) -> None:
    store = Repository.open(repo)
    paths = ["tasks/t1/envelope.yaml", "tasks/t1/status/0001-submitted.yaml"]
    write_journal(store, paths, "killed", "tester")
    half = repo / "tasks" / ".t1.0a1b2c3d4e5f.folder.tmp"  # made, then killed
    (half / "status").mkdir(parents=True)
    (half / "envelope.yaml").write_text("x\n")
    with store.writing():
        pass
    assert not half.exists()
    assert not (repo / "tasks" / "t1").exists()
    assert sorted(p.name for p in (repo / "tasks").iterdir()) == [".gitkeep"]
    assert git(repo, "log", "-1", "--format=%s") == "taskfs: init"
