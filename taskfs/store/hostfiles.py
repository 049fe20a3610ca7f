"""Reading and writing agent hosts' configuration files, and what `taskfs setup --remove`
needs to put them back byte for byte.

Before setup first changes a file it records the file's original bytes (or that there was no
file, and which folders it had to make) in a backup: under the git directory
(`.git/taskfs/setup/`) for a project's files, under `~/.config/taskfs/setup/` (or
`$XDG_CONFIG_HOME/taskfs/setup/`) for a user's. A later setup keeps that first original.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from taskfs.store import fs


def user_backup_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "taskfs" / "setup"


def read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def digest(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


def missing_dirs(path: Path) -> list[Path]:
    """The folders above `path` that do not exist yet, outermost first."""
    missing = []
    for parent in path.parents:
        if parent.exists():
            break
        missing.append(parent)
    return list(reversed(missing))


def write(path: Path, data: bytes) -> None:
    """Replace `path` atomically, keeping its permissions (a new file gets the umask's); a
    settings file that is a link (a dotfiles manager's) is replaced where it points, and the
    link stays (`fs.write_output`)."""
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        mode = 0o666 & ~mask
    fs.write_output(path, data, mode)


def delete(path: Path, made_dirs: list[str]) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    for folder in reversed(made_dirs):
        with contextlib.suppress(OSError):
            Path(folder).rmdir()  # only when empty


@dataclass(frozen=True)
class Backup:
    path: str
    original: bytes | None
    written: str | None
    agent: str | None
    made_dirs: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        original = None if self.original is None else base64.b64encode(self.original).decode()
        return {
            "path": self.path,
            "original": original,
            "written": self.written,
            "agent": self.agent,
            "madeDirs": list(self.made_dirs),
        }


class Backups:
    """One backup file per configuration file, named by a digest of its absolute path."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _file(self, path: Path) -> Path:
        return self.folder / (hashlib.sha256(str(path).encode()).hexdigest()[:24] + ".json")

    def get(self, path: Path) -> Backup | None:
        raw = read(self._file(path))
        if raw is None:
            return None
        try:
            data = json.loads(raw)
            original = data["original"]
            return Backup(
                path=str(data["path"]),
                original=None if original is None else base64.b64decode(original),
                written=data.get("written"),
                agent=data.get("agent"),
                made_dirs=tuple(data.get("madeDirs") or ()),
            )
        except (ValueError, KeyError, TypeError):
            return None

    def put(self, path: Path, backup: Backup) -> None:
        data = json.dumps(backup.to_json(), indent=2) + "\n"
        fs.replace(self._file(path), data.encode(), 0o600)

    def drop(self, path: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._file(path).unlink()
