"""The identities a stored answer is checked against, and finding the checkout.

A file's identity is its `(ino, size, mtime, ctime)` (`FileKey`): the stored `show` answers
are checked against those of the files they were read from (`taskfs.readmodel.show`), and the
read model's store against the settings file and the tasks folder (`taskfs.readmodel.db`);
its rows themselves are keyed by the commit HEAD names (`head_commit`), read from git's files.

Racily clean files: a file changed in the same clock tick as the `stat` that keyed it can keep
its key (git's "racily clean" problem). An identity younger than `racy_margin()` is checked
against the bytes it was derived from instead.

Imports nothing but `os` (the hot path); `hashlib` and the id rule only where used.
"""

from __future__ import annotations

import os

from taskfs.core import layout

TYPE_CHECKING = False  # `typing` costs the hot path 3 ms to import; type checkers know this
if TYPE_CHECKING:
    from collections.abc import Sequence

# On-disk names the stamps are taken of: their one home is the leaf `taskfs.core.layout`.
CONFIG = layout.CONFIG_PATH
ENVELOPE = layout.ENVELOPE
STATUS = layout.STATUS
EVIDENCE = layout.EVIDENCE
CACHE = layout.CACHE_DIR  # in the git dir
RACY_MARGIN_NS = 2_000_000_000  # coarser than any file system's timestamps we know of

# A folder's or file's `(ino, size, mtime, ctime)`; zeros when it is not there.
FileKey = tuple[int, int, int, int]
NO_FILE: FileKey = (0, 0, 0, 0)


def racy_margin() -> int:
    # Settable for file systems with coarser timestamps (and for tests, which need not wait).
    configured = os.environ.get("TASKFS_RACY_MARGIN_MS")
    return int(configured) * 1_000_000 if configured and configured.isdigit() else RACY_MARGIN_NS


def newest(key: Sequence[int]) -> int:
    """The latest file time in a key (`FileKey`): what its age is measured from."""
    return max(key[2], key[3], key[-2], key[-1])


def file_key(path: str) -> FileKey:
    try:
        st = os.stat(path)
    except OSError:
        return NO_FILE
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def common_dir(git_dir: str) -> str:
    """Where a checkout's refs live: its git dir, or in a linked worktree the common one."""
    try:
        with open(git_dir + "/commondir", encoding="utf-8") as handle:
            return os.path.normpath(os.path.join(git_dir, handle.read().strip()))
    except OSError:
        return git_dir


def head_identity(git_dir: str) -> tuple[FileKey, ...]:
    """The identities of the files that say which commit HEAD is: `HEAD`, the branch's loose
    ref and `packed-refs` (in a linked worktree, refs live in the common git dir)."""
    common = common_dir(git_dir)
    keys = [file_key(git_dir + "/HEAD")]
    try:
        with open(git_dir + "/HEAD", encoding="utf-8") as handle:
            text = handle.read().strip()
    except OSError:
        text = ""
    if text.startswith("ref: "):
        keys += [file_key(common + "/" + text[5:]), file_key(common + "/packed-refs")]
    return tuple(keys)


def head_commit(git_dir: str) -> str | None:
    """The commit HEAD names, read from git's files without running git (a detached HEAD, a
    loose ref, `packed-refs`); None when they name none (no commit yet) or say nothing this
    reads (the caller asks git then, or takes the slower path)."""
    common = common_dir(git_dir)
    try:
        with open(git_dir + "/HEAD", encoding="utf-8") as handle:
            text = handle.read().strip()
    except OSError:
        return None
    if not text.startswith("ref: "):
        return text if _is_oid(text) else None
    ref = text[5:]
    try:
        with open(common + "/" + ref, encoding="utf-8") as handle:
            found = handle.read().strip()
        return found if _is_oid(found) else None
    except OSError:
        pass
    try:
        with open(common + "/packed-refs", encoding="utf-8") as handle:
            for line in handle:
                oid, _space, name = line.rstrip("\n").partition(" ")
                if name == ref and _is_oid(oid):
                    return oid
    except OSError:
        return None
    return None


def _is_oid(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def file_digest(path: str) -> bytes:
    import hashlib

    try:
        with open(path, "rb") as handle:
            return hashlib.sha1(handle.read(), usedforsecurity=False).digest()
    except FileNotFoundError:
        return b""


def task_ids(tasks_dir: str) -> list[str]:
    """Every folder in the tasks folder whose name is a task id, sorted."""
    try:
        entries = list(os.scandir(tasks_dir))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(e.name for e in entries if e.is_dir() and layout.is_task_id(e.name))


def cache_dir(git_dir: str) -> str:
    """Where the caches of a checkout live: in its git dir, never committed."""
    return f"{git_dir}/{CACHE}"
