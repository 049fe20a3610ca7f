"""The derived-state cache is an optimisation only (issue 9): deleting or corrupting it
changes no answer of `ls`, `ready` or `show`, and a corrupt cache is rebuilt, never trusted.

The cache lives in the checkout's private state folder (`<git dir>/taskfs/`, beside the
write lock and the crash journal). Until a cache exists there, these tests skip and say so.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import git, submit, taskfs

KEEP = {"lock", "journal"}  # the write lock and crash journal are not caches


def _answers(ids: list[str]) -> list[str]:
    out = []
    for args in (["ls", "--json"], ["ready", "--json"], *(["show", i, "--json"] for i in ids)):
        result = taskfs(*args)
        assert result.code == 0, result.stderr
        out.append(result.stdout)
    return out


def _cache_files(repo: Path) -> list[Path]:
    state = Path(git(repo, "rev-parse", "--absolute-git-dir")) / "taskfs"
    if not state.is_dir():
        return []
    return [
        p for p in state.rglob("*") if p.is_file() and p.relative_to(state).parts[0] not in KEEP
    ]


def _ledger(repo: Path) -> list[str]:
    first = submit(repo, id="a1", filesAndInterfaces=["src/a/**"])
    second = submit(repo, id="b2", filesAndInterfaces=["src/b/**"], dependsOn=["a1"])
    third = submit(repo, id="c3", filesAndInterfaces=["src/c/**"])
    assert taskfs("claim", third, "--agent", "builder").code == 0
    return [first, second, third]


def _corruptions() -> list[tuple[str, bytes | None]]:
    return [
        ("deleted", None),
        ("emptied", b""),
        ("garbage", b"\x00\xff{not json"),
        ("truncated", b'{"version": 1, "tasks": ['),
    ]


@pytest.mark.parametrize(("how", "content"), _corruptions())
def test_deleting_or_corrupting_the_cache_changes_no_answer(
    repo: Path, how: str, content: bytes | None
) -> None:
    ids = _ledger(repo)
    before = _answers(ids)
    files = _cache_files(repo)
    if not files:
        pytest.skip("taskfs keeps no cache yet (issue 9, phase two)")
    for path in files:
        if content is None:
            path.unlink()
        else:
            path.write_bytes(content)
    assert _answers(ids) == before, how
    # ... and a change made after the damage shows up: the damaged cache was not trusted.
    assert taskfs("claim", ids[0], "--agent", "builder").code == 0
    state = {t["id"]: t["state"] for t in taskfs("ls", "--json").json["tasks"]}
    assert state[ids[0]] == "working"


def test_a_change_made_behind_taskfs_back_is_seen(repo: Path) -> None:
    """A status file added by hand (as a merge would add it) shows at once, cache or not."""
    ids = _ledger(repo)
    _answers(ids)
    if not _cache_files(repo):
        pytest.skip("taskfs keeps no cache yet (issue 9, phase two)")
    source = repo / "tasks" / ids[2]
    copy = repo.parent / "copy"
    shutil.copytree(source, copy)
    shutil.rmtree(source)
    state = {t["id"] for t in taskfs("ls", "--json").json["tasks"]}
    assert ids[2] not in state
    shutil.copytree(copy, source)
    state = {t["id"]: t["state"] for t in taskfs("ls", "--json").json["tasks"]}
    assert state[ids[2]] == "working"
