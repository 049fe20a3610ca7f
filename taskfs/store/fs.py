"""Writing files so that no reader ever sees half of one, and the one lock every writer takes.

Ledger files are append-only: `create_new` writes a temporary file in the same folder and
hard-links it into place, which fails if the name exists, so a file appears complete or not
at all and is never overwritten. `replace` is for the few files that are rewritten (config,
caches, reports). `repo_lock` serialises every ledger write of a checkout across processes;
the kernel drops it when a process dies, so a killed writer never leaves it held.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path


def _temp_beside(target: Path, data: bytes, *, durable: bool = True) -> Path:
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise
    return Path(name)


_FOLDER_TMP = ".folder.tmp"


def folder_temporaries(target: Path) -> list[Path]:
    """The temporary folders a `create_folder` of `target` killed midway may have left."""
    try:
        return sorted(target.parent.glob(f".{glob_escape(target.name)}.*{_FOLDER_TMP}"))
    except OSError:
        return []


def temporaries(target: Path) -> list[Path]:
    """The temporary files a writer of `target` killed midway may have left beside it."""
    try:
        return sorted(target.parent.glob(f".{glob_escape(target.name)}.*.tmp"))
    except OSError:
        return []


def prune(folder: Path, *, up_to: Path) -> None:
    """Remove `folder` and the folders above it while they are empty, up to (not including)
    `up_to`: an undone change leaves no empty task folder behind to pass for a taken id."""
    while folder != up_to and up_to in folder.parents:
        try:
            folder.rmdir()
        except FileNotFoundError:
            pass
        except OSError:  # not empty: the rest is someone's
            return
        folder = folder.parent


def glob_escape(name: str) -> str:
    return "".join(f"[{ch}]" if ch in "*?[" else ch for ch in name)


def create_new(target: Path, data: bytes, *, durable: bool = True) -> None:
    """Create `target` with `data`, atomically; FileExistsError if it already exists.
    `durable`: flushed to disk before it appears (a power cut cannot leave it empty)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_beside(target, data, durable=durable)
    try:
        os.link(tmp, target)
    finally:
        os.unlink(tmp)


def create_folder(target: Path, files: Mapping[str, bytes], *, durable: bool = True) -> None:
    """Create the folder `target` holding `files` (relative paths to bytes), atomically: they
    are written in a temporary folder beside it (`folder_temporaries`), which is renamed
    into place, so that a reader sees the whole folder or nothing; FileExistsError if
    `target` exists and holds anything. A new task's files cost a rename, not a temporary
    file and a link each. Files are created as `create_new` creates them (mode 0600).
    `durable`: each flushed to disk before the folder appears."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = f"{target.parent}{os.sep}.{target.name}.{os.urandom(6).hex()}{_FOLDER_TMP}"
        try:
            os.mkdir(tmp)
            break
        except FileExistsError:
            continue
        except FileNotFoundError:
            target.parent.mkdir(parents=True, exist_ok=True)
    try:
        made = {tmp}
        for rel, data in files.items():
            path = f"{tmp}{os.sep}{rel}"
            folder = os.path.dirname(path)
            if folder not in made:
                try:
                    os.mkdir(folder)
                except FileExistsError:
                    pass  # made on the way to a deeper one
                except FileNotFoundError:
                    os.makedirs(folder, exist_ok=True)
                made.add(folder)
            fd = os.open(path, flags, 0o600)
            try:
                _write_all(fd, data)
                if durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
        try:
            os.rename(tmp, target)
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                raise FileExistsError(
                    errno.EEXIST, os.strerror(errno.EEXIST), str(target)
                ) from None
            raise
    except BaseException:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def replace(target: Path, data: bytes, mode: int | None = None, *, durable: bool = True) -> None:
    """Write `target` atomically, replacing what was there."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_beside(target, data, durable=durable)
    try:
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_output(target: Path, data: bytes, mode: int | None = None) -> None:
    """Write a file a person named for output: a regular file (or none yet) is replaced
    atomically, through any link to it (the link stays a link); anything else that stands there
    (a FIFO, a device such as /dev/null, a link to one) is written through, never replaced by
    a regular file; a folder is refused (IsADirectoryError)."""
    real = Path(os.path.realpath(target))
    try:
        found = os.stat(real)
    except FileNotFoundError:
        replace(real, data, mode)
        return
    if stat.S_ISDIR(found.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(target))
    if stat.S_ISREG(found.st_mode):
        replace(real, data, mode)
        return
    with open(real, "wb") as handle:
        handle.write(data)


# The lock files this process holds (`repo_lock`): code that needs the lock and may run inside a
# writer that holds it already (the read model catching up) asks `holding` before taking it.
_held: set[str] = set()


@contextlib.contextmanager
def repo_lock(path: Path) -> Iterator[None]:
    """Hold the exclusive lock file `path` for the duration of the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _held.add(str(path))
        yield
    finally:
        _held.discard(str(path))
        os.close(fd)


@contextlib.contextmanager
def lock_within(path: Path, seconds: float) -> Iterator[bool]:
    """Hold the lock file `path` for the block when it can be taken within `seconds` (True),
    else run the block without it (False): another process holds it, or the lock file cannot
    be made (a read-only git dir). For work that can be done without the lock, only not
    saved (the read model catching up)."""
    import time

    if holding(path):
        yield True
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield False
        return
    try:
        until = time.monotonic() + seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= until:
                    yield False
                    return
                time.sleep(0.01)
        _held.add(str(path))
        try:
            yield True
        finally:
            _held.discard(str(path))
    finally:
        os.close(fd)


def holding(path: Path) -> bool:
    """Whether this process holds the lock file `path` (`repo_lock`)."""
    return str(path) in _held


class LockHeld(Exception):
    """Another process holds the lock; `owner` is what it wrote into the lock file."""

    def __init__(self, owner: str) -> None:
        super().__init__(owner)
        self.owner = owner


@contextlib.contextmanager
def sole_lock(path: Path, owner: str) -> Iterator[None]:
    """Hold the lock file `path` for the block, or raise `LockHeld` at once when another
    process holds it. `owner` (who we are, for that other process's message) is written into
    the file while we hold it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held_by = os.read(fd, 256).decode("utf-8", "replace").strip()
            raise LockHeld(held_by) from None
        os.ftruncate(fd, 0)
        os.write(fd, owner.encode())
        yield
    finally:
        os.close(fd)
