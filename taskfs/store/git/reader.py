"""Reading git objects: one long-lived `git cat-file --batch` per command (`ObjectReader`), and
tree objects' bytes parsed (`parse_tree`, `tree_entries`)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

from taskfs.errors import fail
from taskfs.store.git.process import Process, argv, scrubbed_env

# What a reader that walks a whole ledger's trees asks of git: to map its packs a little at a
# time (the pages it touched count as its memory) and keep few deltas' bases.
LEAN = ("-c", "core.packedGitWindowSize=1m", "-c", "core.packedGitLimit=16m",
        "-c", "core.deltaBaseCacheLimit=4m")  # fmt: skip


class ObjectReader:
    """One long-lived `git cat-file --batch` for all reads of a command; closed after use.
    `lean`: for reading very many objects in little memory (`LEAN`)."""

    def __init__(self, git: Process, *, lean: bool = False) -> None:
        self._git = git
        self.digest_size = git._hash().digest_size  # of its object ids: SHA-1 or SHA-256
        self._proc = subprocess.Popen(
            argv(*(LEAN if lean else ()), "cat-file", "--batch"),
            cwd=git.root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=scrubbed_env(),
        )

    def read(self, name: str) -> tuple[str, bytes] | None:
        """(type, content) of the object `name` (any revision syntax), None when missing."""
        assert self._proc.stdin is not None
        assert self._proc.stdout is not None
        self._proc.stdin.write(name.encode() + b"\n")
        self._proc.stdin.flush()
        header = self._proc.stdout.readline().decode().split()
        if len(header) != 3:
            return None
        _oid, kind, size = header
        body = self._proc.stdout.read(int(size))
        self._proc.stdout.read(1)
        return kind, body

    def commit_tree(self, commit: str) -> str:
        found = self.read(commit)
        if found is None or found[0] != "commit":
            raise fail("git_failed", command="cat-file", reason=f"{commit} is not a commit")
        first = found[1].split(b"\n", 1)[0].decode()
        return first.split()[1]

    def tree(self, oid: str) -> Iterator[tuple[str, tuple[str, str]]]:
        found = self.read(oid)
        if found is None or found[0] != "tree":
            return
        yield from parse_tree(found[1], self._git._hash().digest_size)

    def tree_body(self, oid: str) -> bytes | None:
        """A tree object's bytes; None when `oid` is not a tree."""
        found = self.read(oid)
        return found[1] if found is not None and found[0] == "tree" else None

    def tree_body_at(self, revision_path: str) -> bytes | None:
        """The bytes of the tree `revision_path` names (e.g. `HEAD:tasks`); None if none."""
        found = self.read(revision_path)
        return found[1] if found is not None and found[0] == "tree" else None

    def tree_at(self, revision_path: str) -> list[tuple[str, tuple[str, str]]]:
        """The entries of the tree `revision_path` names (e.g. `HEAD:tasks`); [] if none."""
        found = self.read(revision_path)
        if found is None or found[0] != "tree":
            return []
        return list(parse_tree(found[1], self._git._hash().digest_size))

    def exists(self, revision_path: str) -> bool:
        return self.read(revision_path) is not None

    def close(self) -> None:
        if self._proc.stdin:
            self._proc.stdin.close()
        if self._proc.stdout:
            self._proc.stdout.close()
        self._proc.wait()


def parse_tree(body: bytes, digest_size: int) -> Iterator[tuple[str, tuple[str, str]]]:
    """(name, (mode, oid)) of each entry of a tree object's bytes (SHA-1 or SHA-256 ids)."""
    i = 0
    while i < len(body):
        space = body.index(b" ", i)
        nul = body.index(b"\0", space)
        mode = body[i:space].decode()
        name = body[space + 1 : nul].decode("utf-8", "surrogateescape")
        oid = body[nul + 1 : nul + 1 + digest_size].hex()
        yield name, (mode, oid)
        i = nul + 1 + digest_size


def tree_entries(body: bytes, digest_size: int) -> dict[bytes, bytes]:
    """A tree's entries in its order: each name (as git stores it) with the entry's bytes."""
    out: dict[bytes, bytes] = {}
    find, i = body.index, 0
    while i < len(body):
        nul = find(b"\0", i)
        end = nul + 1 + digest_size
        out[body[find(b" ", i) + 1 : nul]] = body[i:end]
        i = end
    return out
