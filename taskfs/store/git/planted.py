"""What an acceptance command changed of git's own files, put back as it was.

A check run without a sandbox can write anything the operator can, `.git` included, and git
runs commands its files name: hooks, `core.fsmonitor`, filters, `core.sshCommand`, aliases,
an `include.path` naming any of them. taskfs pins those it never needs
(`taskfs.store.git.process.PINNED`); the others it cannot pin without breaking what users rely
on. So the files git reads them from are copied before the command runs (`Snapshot.take`) and
compared after it, and every change is undone before taskfs runs git again (`Snapshot.undo`),
which names them for the check's answer and evidence.

Watched: the configuration (`config`, `config.worktree`), `hooks/`, `info/` (attributes,
exclude) and `objects/info/alternates` of the checkout's git dir and of its common dir; the
operator's global and system configuration (and global attributes); and every file an
`include.path` named when the snapshot was taken. A file the command adds is removed, one it
changes or removes is written back as it was. What a snapshot cannot cover (the operator's
shell start-up files, programs on PATH) is why checks should run in the sandbox.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from taskfs.store import fs
from taskfs.store.git.process import Process

Change = Literal["added", "changed", "removed"]
# A file of git's settings larger than this is compared by digest and not copied: it is left as
# it is found (and named) rather than removed without a copy to put back.
_MOST = 16 * 1024 * 1024


@dataclass(frozen=True)
class Changed:
    path: str  # relative to the checkout when inside it (`.git/config`), else absolute
    change: Change


@dataclass(frozen=True)
class _Entry:
    """One path as it was: a regular file (its mode, digest and, when kept, its bytes), a link
    (its target), a folder, or something else (a FIFO, a socket)."""

    kind: Literal["file", "link", "dir", "other"]
    mode: int = 0
    digest: bytes = b""
    target: str = ""
    data: bytes | None = None

    def same(self, other: _Entry | None) -> bool:
        return other is not None and (self.kind, self.mode, self.digest, self.target) == (
            other.kind,
            other.mode,
            other.digest,
            other.target,
        )


class Snapshot:
    """The watched paths (`watched`) as they were when `take` ran."""

    def __init__(self, root: Path, roots: list[Path], entries: dict[Path, _Entry | None]) -> None:
        self._root = root
        self._roots = roots
        self._entries = entries

    @classmethod
    def take(cls, git: Process) -> Snapshot:
        roots = watched(git)
        entries: dict[Path, _Entry | None] = {}
        for path in roots:
            entries.update(_read_tree(path, keep=True))
        return cls(git.root, roots, entries)

    def undo(self) -> list[Changed]:
        """Put every watched path back as it was; what had changed, sorted by path."""
        now: dict[Path, _Entry | None] = {}
        for path in self._roots:
            now.update(_read_tree(path, keep=False))
        changes: list[Changed] = []
        # What was added goes first, deepest first (what a folder holds before the folder).
        for path in sorted(set(now) - set(self._entries), key=lambda p: -len(p.parts)):
            if now[path] is not None:
                _remove(path)
                changes.append(self._changed(path, "added"))
        # Then what was there is put back, shallowest first (a folder before what it holds).
        for path in sorted(self._entries, key=lambda p: len(p.parts)):
            was, is_now = self._entries[path], now.get(path)
            if (was is None and is_now is None) or (was is not None and was.same(is_now)):
                continue
            kind: Change = "added" if was is None else "removed" if is_now is None else "changed"
            changes.append(self._changed(path, kind))
            if was is not None and was.kind == "file" and was.data is None:
                continue  # too large to have been copied: left as found, and named
            if is_now is not None:
                _remove(path)
            if was is not None:
                _restore(path, was)
        return sorted(set(changes), key=lambda c: c.path)

    def _changed(self, path: Path, change: Change) -> Changed:
        try:
            shown = path.relative_to(self._root).as_posix()
        except ValueError:
            shown = str(path)
        return Changed(shown, change)


def watched(git: Process) -> list[Path]:
    """Every path a snapshot of `git`'s settings copies (folders whole), existing or not."""
    paths: list[Path] = []
    for folder in dict.fromkeys((git.git_dir, git.common_dir)):
        paths += [folder / name for name in ("config", "config.worktree", "hooks", "info")]
        paths.append(folder / "objects" / "info" / "alternates")
    paths += _operator_files()
    paths += [Path(p) for p in _included(git)]
    return list(dict.fromkeys(Path(os.path.abspath(p)) for p in paths))


def _operator_files() -> list[Path]:
    """Where git reads the operator's own settings (`git help config`, FILES)."""
    home = Path(os.path.expanduser("~"))
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "git"
    named = os.environ.get("GIT_CONFIG_GLOBAL")
    found = [Path(named)] if named else [home / ".gitconfig", xdg / "config"]
    found.append(xdg / "attributes")
    if not os.environ.get("GIT_CONFIG_NOSYSTEM"):
        found.append(Path(os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"))
    return found


def _included(git: Process) -> list[str]:
    """The files git reads settings from now, included ones among them."""
    proc = git.run_raw("config", "--list", "--show-origin", "--includes", "-z")
    found = []
    for item in proc.stdout.split(b"\0")[::2] if proc.returncode == 0 else ():
        origin = item.decode("utf-8", "surrogateescape")
        if origin.startswith("file:"):
            found.append(origin.removeprefix("file:"))
    return [path for path in dict.fromkeys(found) if os.path.isabs(path)]


def _read_tree(path: Path, *, keep: bool) -> Iterator[tuple[Path, _Entry | None]]:
    """`path` and, when it is a folder (not through a link), everything below it."""
    entry = _read(path, keep)
    yield path, entry
    if entry is not None and entry.kind == "dir":
        with contextlib.suppress(OSError):
            for child in sorted(os.listdir(path)):
                yield from _read_tree(path / child, keep=keep)


def _read(path: Path, keep: bool) -> _Entry | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISLNK(info.st_mode):
        return _Entry("link", target=os.readlink(path))
    if stat.S_ISDIR(info.st_mode):
        return _Entry("dir", mode=mode)
    if not stat.S_ISREG(info.st_mode):
        return _Entry("other", mode=mode)
    data = None
    if keep and info.st_size <= _MOST:
        with contextlib.suppress(OSError):
            data = path.read_bytes()
    digest = hashlib.sha256(data).digest() if data is not None else _digest(path)
    return _Entry("file", mode=mode, digest=digest, data=data)


def _digest(path: Path) -> bytes:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 16), b""):
                digest.update(chunk)
    except OSError:
        return b"unreadable"
    return digest.digest()


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def _restore(path: Path, entry: _Entry) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if entry.kind == "dir":
        path.mkdir(exist_ok=True)
        os.chmod(path, entry.mode)
    elif entry.kind == "link":
        os.symlink(entry.target, path)
    elif entry.kind == "file" and entry.data is not None:
        fs.replace(path, entry.data, entry.mode)
