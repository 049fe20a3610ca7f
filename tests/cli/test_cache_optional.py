"""The derived-state caches are an optimisation only (issue 9): deleting or corrupting them
changes no answer of `ls`, `ready` or `show`, and a damaged or stale cache is rebuilt, never
trusted.

The caches live in the checkout's private state folder (`<git dir>/taskfs/cache/`, beside the
write lock and the crash journal): the read model's store (`taskfs.readmodel.db`) and the stored
`show` answers (`taskfs.readmodel.show`).
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from taskfs.readmodel import db
from taskfs.readmodel import show as shown
from taskfs.readmodel.view import View
from taskfs.store import readmodel_store
from tests.helpers import git, submit, taskfs

KEEP = {"lock", "journal"}  # the write lock and crash journal are not caches


def _answers(ids: list[str]) -> list[str]:
    out = []
    for args in (["ls", "--json"], ["ready", "--json"], *(["show", i, "--json"] for i in ids)):
        result = taskfs(*args)
        assert result.code == 0, result.stderr
        out.append(result.stdout)
    return out


def _cache_files(repo: Path) -> dict[Path, bytes]:
    state = Path(git(repo, "rev-parse", "--absolute-git-dir")) / "taskfs"
    return {
        p: p.read_bytes()
        for p in sorted(state.rglob("*"))
        if p.is_file() and p.relative_to(state).parts[0] not in KEEP
    }


def _ledger(repo: Path) -> list[str]:
    first = submit(repo, id="a1", filesAndInterfaces=["src/a/**"])
    second = submit(repo, id="b2", filesAndInterfaces=["src/b/**"], dependsOn=["a1"])
    third = submit(repo, id="c3", filesAndInterfaces=["src/c/**"])
    assert taskfs("claim", third, "--agent", "builder").code == 0
    return [first, second, third]


def _warm(repo: Path, ids: list[str]) -> tuple[list[str], dict[Path, bytes]]:
    """The answers, with every cache written (asked twice: the second time from the caches)."""
    _answers(ids)
    before = _answers(ids)
    files = _cache_files(repo)
    names = {p.name for p in files} | {p.parent.name for p in files}
    # The caches exist: without them these tests would prove nothing.
    assert {db.NAME, shown.FOLDER} <= names, sorted(names)
    return before, files


CORRUPTIONS: dict[str, Callable[[bytes], bytes | None]] = {
    "deleted": lambda _data: None,
    "emptied": lambda _data: b"",
    "garbage": lambda _data: b"\x00\xff{not marshal",
    "truncated": lambda data: data[: len(data) // 2],
    "bytes flipped": lambda data: bytes(b ^ 0x5A for b in data),
}


@pytest.mark.parametrize("how", sorted(CORRUPTIONS))
def test_deleting_or_corrupting_the_cache_changes_no_answer(repo: Path, how: str) -> None:
    ids = _ledger(repo)
    before, files = _warm(repo, ids)
    readmodel_store.close()  # as a new process finds it
    for path, data in files.items():
        if not path.exists():
            continue  # SQLite's own side file, gone with the connection that made it
        damaged = CORRUPTIONS[how](data)
        if damaged is None:
            path.unlink()
        else:
            path.write_bytes(damaged)
    assert _answers(ids) == before, how
    # The store was written again, whole, sealed and readable, at HEAD.
    folder = Path(git(repo, "rev-parse", "--absolute-git-dir")) / "taskfs" / "cache"
    conn = sqlite3.connect(folder / db.NAME)
    state = db.read_state(conn)
    assert state is not None
    assert state.head == git(repo, "rev-parse", "HEAD")
    assert [e[db.ID] for e in View(conn, state).entries() if e[db.FLAGS] & db.HELD] == sorted(ids)
    conn.close()
    # ... and a change made after the damage shows up: the damaged cache was not trusted.
    assert taskfs("claim", ids[0], "--agent", "builder").code == 0
    state = {t["id"]: t["state"] for t in taskfs("ls", "--json").json["tasks"]}
    assert state[ids[0]] == "working"
    assert taskfs("show", ids[0], "--json").json["state"] == "working"


@pytest.mark.parametrize("margin", ["0", "2000"])
def test_a_stale_cache_put_back_is_not_trusted(
    repo: Path, margin: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Caches from before a claim, put back after it (well formed, only out of date), answer
    nothing: with no racy margin the files' identities catch it, with the default one their
    bytes do."""
    monkeypatch.setenv("TASKFS_RACY_MARGIN_MS", margin)
    ids = _ledger(repo)
    _before, files = _warm(repo, ids)
    assert taskfs("claim", ids[0], "--agent", "builder").code == 0
    after = _answers(ids)
    readmodel_store.close()
    for path, data in files.items():
        path.write_bytes(data)
    assert _answers(ids) == after
    assert taskfs("show", ids[0], "--json").json["state"] == "working"
    ready = [t["id"] for t in taskfs("ready", "--json").json["tasks"]]
    assert ids[0] not in ready


def test_a_change_made_behind_taskfs_back_is_seen(repo: Path) -> None:
    """A task folder taken away and put back by hand (as a checkout or merge would) shows at
    once, cache or not; so does a status file added by hand."""
    ids = _ledger(repo)
    _warm(repo, ids)
    source = repo / "tasks" / ids[2]
    copy = repo.parent / "copy"
    shutil.copytree(source, copy)
    shutil.rmtree(source)
    state = {t["id"] for t in taskfs("ls", "--json").json["tasks"]}
    assert ids[2] not in state
    assert taskfs("show", ids[2], "--json").code == 1
    shutil.copytree(copy, source)
    state = {t["id"]: t["state"] for t in taskfs("ls", "--json").json["tasks"]}
    assert state[ids[2]] == "working"
    # A transition made in another clone and merged in: the status file arrives by hand.
    assert taskfs("claim", ids[0], "--agent", "builder").code == 0
    status = repo / "tasks" / ids[0] / "status"
    newest = sorted(status.iterdir())[-1]
    moved = newest.read_bytes()
    newest.unlink()
    git(repo, "commit", "-q", "-am", "the claim, undone")
    _answers(ids)
    assert taskfs("show", ids[0], "--json").json["state"] == "submitted"
    newest.write_bytes(moved)
    git(repo, "add", str(newest))
    git(repo, "commit", "-q", "-m", "the claim, merged in")
    assert taskfs("show", ids[0], "--json").json["state"] == "working"
    state = {t["id"]: t["state"] for t in taskfs("ls", "--json").json["tasks"]}
    assert state[ids[0]] == "working"
