"""The identities a stored answer is checked against, and finding the checkout.

A file's identity is its `(ino, size, mtime, ctime)` (`FileKey`); a task's is that of its
`envelope.yaml` and `status/` folder (`Key`, taken through an open handle on the tasks folder:
`Folder`). Taskfs creates ledger files and never rewrites them, and git replaces files when it
checks out, merges or pulls, so every legitimate change changes an identity
(`taskfs.store.index` says what the two `stat` calls per task cannot see, and why).

Racily clean files: a file changed in the same clock tick as the `stat` that keyed it can keep
its key (git's "racily clean" problem). An identity younger than `racy_margin()` is checked
against the bytes it was derived from (`folder_digest`) instead.

Imports nothing but `os` (the hot path); `hashlib` and the id rule only where used.
"""

from __future__ import annotations

import os

from taskfs.core import layout

TYPE_CHECKING = False  # `typing` costs the hot path 3 ms to import; type checkers know this
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

# On-disk names the stamps are taken of: their one home is the leaf `taskfs.core.layout`.
CONFIG = layout.CONFIG_PATH
ENVELOPE = layout.ENVELOPE
STATUS = layout.STATUS
INTAKE = layout.INTAKE
EVIDENCE = layout.EVIDENCE
CACHE = layout.CACHE_DIR  # in the git dir
RACY_MARGIN_NS = 2_000_000_000  # coarser than any file system's timestamps we know of

# `(envelope: ino size mtime ctime, status/: ino mtime ctime)`; zeros for what is not there.
Key = tuple[int, int, int, int, int, int, int]
NO_KEY: Key = (0, 0, 0, 0, 0, 0, 0)
# A folder's or file's `(ino, size, mtime, ctime)`; zeros when it is not there.
FileKey = tuple[int, int, int, int]
NO_FILE: FileKey = (0, 0, 0, 0)
# What a task's row was derived from: its status file names, and digests of the envelope and
# of the status files (`folder_digest`).
FolderDigest = tuple[tuple[str, ...], bytes, bytes]


def racy_margin() -> int:
    # Settable for file systems with coarser timestamps (and for tests, which need not wait).
    configured = os.environ.get("TASKFS_RACY_MARGIN_MS")
    return int(configured) * 1_000_000 if configured and configured.isdigit() else RACY_MARGIN_NS


class Folder:
    """The tasks folder, open for `stat`s relative to it (no path walk per task where the
    platform allows)."""

    def __init__(self, path: str) -> None:
        self.fd: int | None = None
        self.prefix = path + "/"
        if os.stat in os.supports_dir_fd:
            try:
                self.fd = os.open(path, os.O_RDONLY)
                self.prefix = ""
            except OSError:
                pass

    def key(self, task_id: str) -> Key:
        """The identity of a task folder's `envelope.yaml` and `status/`."""
        try:
            env = os.stat(self.prefix + task_id + "/" + ENVELOPE, dir_fd=self.fd)
        except OSError:
            # No envelope: an intake's folder is keyed by its `intake/` (a request added or
            # a cancellation changes it); anything else has no key.
            try:
                intake = os.stat(self.prefix + task_id + "/" + INTAKE, dir_fd=self.fd)
            except OSError:
                return NO_KEY
            return (0, 0, 0, 0, intake.st_ino, intake.st_mtime_ns, intake.st_ctime_ns)
        try:
            status = os.stat(self.prefix + task_id + "/" + STATUS, dir_fd=self.fd)
        except OSError:
            return (env.st_ino, env.st_size, env.st_mtime_ns, env.st_ctime_ns, 0, 0, 0)
        return (
            env.st_ino,
            env.st_size,
            env.st_mtime_ns,
            env.st_ctime_ns,
            status.st_ino,
            status.st_mtime_ns,
            status.st_ctime_ns,
        )

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def newest(key: Sequence[int]) -> int:
    """The latest file time in a key (`Key` or `FileKey`): what its age is measured from."""
    return max(key[2], key[3], key[-2], key[-1])


def file_key(path: str) -> FileKey:
    try:
        st = os.stat(path)
    except OSError:
        return NO_FILE
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def head_identity(git_dir: str) -> tuple[FileKey, ...]:
    """The identities of the files that say which commit HEAD is: `HEAD`, the branch's loose
    ref and `packed-refs` (in a linked worktree, refs live in the common git dir)."""
    common = git_dir
    try:
        with open(git_dir + "/commondir", encoding="utf-8") as handle:
            common = os.path.normpath(os.path.join(git_dir, handle.read().strip()))
    except OSError:
        pass
    keys = [file_key(git_dir + "/HEAD")]
    try:
        with open(git_dir + "/HEAD", encoding="utf-8") as handle:
            text = handle.read().strip()
    except OSError:
        text = ""
    if text.startswith("ref: "):
        keys += [file_key(common + "/" + text[5:]), file_key(common + "/packed-refs")]
    return tuple(keys)


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


def status_names(folder: str) -> tuple[str, ...]:
    try:
        names = os.listdir(folder + "/" + STATUS)
    except OSError:
        return ()
    return tuple(sorted(n for n in names if n.endswith(".yaml") and not n.startswith(".")))


def folder_digest(folder: str, names: tuple[str, ...] | None = None) -> FolderDigest:
    """What a task folder holds, to the byte: its status file names, a digest of its envelope
    and a digest of its status files' names and bytes."""
    import hashlib

    names = status_names(folder) if names is None else names
    try:
        envelope = file_digest(folder + "/" + ENVELOPE)
    except OSError:
        envelope = b""
    status = hashlib.sha1(usedforsecurity=False)
    _digest_files(status, f"{folder}/{STATUS}", names)
    if not envelope:  # an intake's folder: what it holds is its intake files
        try:
            intake = sorted(os.listdir(f"{folder}/{INTAKE}"))
        except OSError:
            intake = []
        if intake:
            status.update(b"\2intake\0")
            _digest_files(status, f"{folder}/{INTAKE}", tuple(intake))
    return names, envelope, status.digest()


def _digest_files(into: Any, folder: str, names: tuple[str, ...]) -> None:
    for name in names:
        into.update(name.encode() + b"\0")
        try:
            with open(f"{folder}/{name}", "rb") as handle:
                into.update(handle.read())
        except OSError:
            into.update(b"\1unreadable")
        into.update(b"\0")


def cache_dir(git_dir: str) -> str:
    """Where the caches of a checkout live: in its git dir, never committed."""
    return f"{git_dir}/{CACHE}"


def dump(path: str, data: Any) -> None:
    """Write `data` (marshalled) to `path` atomically; one that cannot be written is left
    (a cache that cannot be written, in a read-only checkout, only costs speed)."""
    import marshal

    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as handle:
            handle.write(marshal.dumps(data))
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            return
