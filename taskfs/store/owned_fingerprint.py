"""The fingerprint of the files a task owns, as they are in a working tree now.

The files are those git would consider: tracked ones (deleted ones included, as `missing`) and
untracked ones it does not ignore, matching one of the task's path globs. The ledger itself
(the tasks folder and `.taskfs/`) never counts: a check writes evidence there, and a task that
owns `**` would otherwise make its own evidence stale. The format is `core.evidence`'s.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator, Sequence

from taskfs.core import globs
from taskfs.core.evidence import FileKind, OwnedFingerprint, owned_fingerprint
from taskfs.store.git import Git

_CHUNK = 1024 * 1024


def owned_files(git: Git, entries: Sequence[str], ledger: Sequence[str]) -> OwnedFingerprint:
    """Fingerprint of the files under `git`'s working tree that the path `entries` match,
    leaving out everything below the `ledger` folders."""
    patterns = [e for e in map(globs.parse_entry, entries) if e.kind == "path"]
    skip = tuple(folder.rstrip("/") + "/" for folder in ledger)
    return owned_fingerprint(_hashed(git, patterns, skip))


def uncommitted_owned(git: Git, entries: Sequence[str], ledger: Sequence[str]) -> list[str]:
    """The files the path `entries` match whose working-tree content HEAD does not hold (the
    ledger folders left out, as in `owned_files`)."""
    patterns = [e for e in map(globs.parse_entry, entries) if e.kind == "path"]
    if not patterns:
        return []
    skip = tuple(folder.rstrip("/") + "/" for folder in ledger)
    return [
        path
        for path in git.uncommitted_files()
        if not path.startswith(skip) and any(globs.matches(p, path) for p in patterns)
    ]


def _hashed(
    git: Git, patterns: Sequence[globs.Entry], skip: tuple[str, ...]
) -> Iterator[tuple[bytes, FileKind, str]]:
    if not patterns:
        return
    for path in git.worktree_files(_below(patterns)):
        if path.startswith(skip) or not any(globs.matches(p, path) for p in patterns):
            continue
        kind, sha = _describe(os.path.join(git.root, path))
        yield path.encode("utf-8", "surrogateescape"), kind, sha


def _below(patterns: Sequence[globs.Entry]) -> list[str]:
    """The folders (or files) every path the patterns match lies at or below: their leading
    literal segments. None when a pattern starts with a wildcard (then every file is looked
    at), so that git lists the owned part of the tree, not all of it (the ledger's thousands
    of files included)."""
    below = []
    for pattern in patterns:
        names, _literal = globs.placement(pattern.text)  # the ownership index's own rule
        if not names:
            return []
        below.append("/".join(names))
    return below


def _describe(full: str) -> tuple[FileKind, str]:
    digest = hashlib.sha256()
    try:
        info = os.lstat(full)
    except FileNotFoundError:
        return "missing", digest.hexdigest()
    if stat.S_ISLNK(info.st_mode):
        digest.update(os.fsencode(os.readlink(full)))
        return "link", digest.hexdigest()
    if not stat.S_ISREG(info.st_mode):
        return "other", digest.hexdigest()
    try:
        with open(full, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
    except OSError:
        # Unreadable (permissions): it still counts, as a file whose content is unknown, and
        # reads as a change when it becomes readable.
        return "other", hashlib.sha256(b"unreadable").hexdigest()
    kind: FileKind = "exec" if info.st_mode & 0o111 else "file"
    return kind, digest.hexdigest()
