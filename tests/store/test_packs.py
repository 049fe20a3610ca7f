"""A commit that makes many objects writes them as one pack (issue 36: a `new` of a thousand
envelopes made two thousand loose trees, a file each): git reads the pack as its own, `git fsck`
finds the repository whole, and the commit is the one loose objects would have made."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from taskfs.store.git import packs
from tests.helpers import git, taskfs, write_envelope


def _packs(repo: Path) -> set[str]:
    return {p.name for p in (repo / ".git" / "objects" / "pack").glob("pack-*.idx")}


def test_a_new_of_many_envelopes_is_one_pack_git_reads_whole(repo: Path, tmp_path: Path) -> None:
    files = [
        str(write_envelope(tmp_path / f"e{n}.yaml", id=f"many-{n}",
                           filesAndInterfaces=[f"src/many{n}/**"]))
        for n in range(160)
    ]  # fmt: skip
    before = _packs(repo)
    done = taskfs("new", *files, "--agent", "planner", "--json")
    assert done.code == 0, done.stdout + done.stderr
    made = _packs(repo) - before
    assert len(made) == 1
    pack = repo / ".git" / "objects" / "pack" / made.pop()
    verified = git(repo, "verify-pack", "-v", str(pack))
    assert " tree " in verified
    git(repo, "fsck", "--strict", "--no-dangling")
    assert git(repo, "status", "--porcelain") == ""
    listed = {t["id"] for t in taskfs("ls", "--json").json["tasks"]}
    assert {f"many-{n}" for n in range(160)} <= listed
    # The same tree git builds from its index of the same files.
    assert git(repo, "write-tree") == git(repo, "rev-parse", "HEAD^{tree}")


@pytest.mark.parametrize("new_hash", [hashlib.sha1, hashlib.sha256])
def test_a_pack_holds_exactly_the_objects_given(tmp_path: Path, new_hash: object) -> None:
    """Read back by git itself, in a repository of either object format."""
    fmt = "sha1" if new_hash is hashlib.sha1 else "sha256"
    repo = tmp_path / fmt
    repo.mkdir()
    git(repo, "init", "-q", f"--object-format={fmt}")
    objects: dict[str, tuple[str, bytes]] = {}
    ids = [packs.put(objects, new_hash, "blob", f"file {n}\n".encode() * n) for n in range(300)]
    packs.write_pack(repo / ".git" / "objects", objects, new_hash)
    for n, oid in enumerate(ids):
        assert git(repo, "cat-file", "-t", oid) == "blob"
        assert git(repo, "cat-file", "-p", oid) == (f"file {n}\n" * n).rstrip("\n")
    git(repo, "fsck", "--strict")
