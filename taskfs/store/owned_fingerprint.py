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


def owned_now(
    git: Git, entries: Sequence[str], ledger: Sequence[str]
) -> tuple[OwnedFingerprint, list[str]]:
    """The fingerprint of the owned files (`owned_files`) and those of them whose working-tree
    content HEAD does not hold (tracked files edited, deleted or staged, and untracked files
    git does not ignore), both found below the owned paths only: one listing of them, HEAD's
    trees there, each file read once. The whole working tree is looked at only when an entry
    has no literal prefix."""
    patterns = [e for e in map(globs.parse_entry, entries) if e.kind == "path"]
    if not patterns:
        return owned_fingerprint(()), []
    skip = tuple(folder.rstrip("/") + "/" for folder in ledger)
    below = _below(patterns)
    at_head = {
        path: held for path, held in git.head_entries(below).items() if _owned(path, patterns, skip)
    }
    described: list[tuple[bytes, FileKind, str]] = []
    dirty: list[str] = []
    unsure: list[str] = []
    tracked = git.worktree_files_tracked(below)
    listed = sorted(p for p in tracked if _owned(p, patterns, skip))
    for path in listed:
        kind, sha, blob = _describe_with_blob(git, os.path.join(git.root, path))
        described.append((path.encode("utf-8", "surrogateescape"), kind, sha))
        held = at_head.get(path)
        if held is None or kind == "missing" or not tracked[path]:
            dirty.append(path)  # new, gone from the working tree, or gone from the index
        elif (held[0], held[1]) != (_MODES.get(kind), blob):
            unsure.append(path)  # git decides: a clean filter may make the same blob
    dirty += git.changed_since_head(unsure)
    dirty += [path for path in at_head if path not in set(listed)]  # removed from the index
    return owned_fingerprint(described), sorted(set(dirty))


_MODES = {"file": "100644", "exec": "100755", "link": "120000"}


def _owned(path: str, patterns: Sequence[globs.Entry], skip: tuple[str, ...]) -> bool:
    return not path.startswith(skip) and any(globs.matches(p, path) for p in patterns)


def _hashed(
    git: Git, patterns: Sequence[globs.Entry], skip: tuple[str, ...]
) -> Iterator[tuple[bytes, FileKind, str]]:
    if not patterns:
        return
    for path in git.worktree_files(_below(patterns)):
        if not _owned(path, patterns, skip):
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


def _describe_with_blob(git: Git, full: str) -> tuple[FileKind, str, str | None]:
    """`_describe`, and the id of the blob git would make of it as it is (None: not a plain
    file or link, or unreadable)."""
    try:
        info = os.lstat(full)
    except FileNotFoundError:
        return "missing", hashlib.sha256().hexdigest(), None
    if stat.S_ISLNK(info.st_mode):
        target = os.fsencode(os.readlink(full))
        return "link", hashlib.sha256(target).hexdigest(), git.blob_id(target)
    if not stat.S_ISREG(info.st_mode) or info.st_size > _CHUNK * 16:
        kind, sha = _describe(full)  # large files are read in pieces; git compares them
        return kind, sha, None
    try:
        with open(full, "rb") as handle:
            data = handle.read()
    except OSError:
        return "other", hashlib.sha256(b"unreadable").hexdigest(), None
    plain: FileKind = "exec" if info.st_mode & 0o111 else "file"
    return plain, hashlib.sha256(data).hexdigest(), git.blob_id(data)


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
