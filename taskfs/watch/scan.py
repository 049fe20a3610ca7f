"""One look at the tasks folder: the dropped files (with what their metadata says now) and
the refusal reports. Task folders, once they have a status file, are remembered and skipped:
a task never stops being one."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from taskfs.api.context import leftover_temporaries, transitions_of
from taskfs.core import layout
from taskfs.watch.settle import Look

if TYPE_CHECKING:
    from taskfs.api.context import Repository


@dataclass
class Found:
    drops: dict[str, Look] = field(default_factory=dict)  # repository-relative path -> look
    reports: set[str] = field(default_factory=set)
    # temporary files of reports whose writing was killed (only the watcher writes reports)
    leftovers: list[Path] = field(default_factory=list)


def scan(repo: Repository, known_tasks: set[str]) -> Found:
    found = Found()
    prefix = repo.tasks_rel + "/"
    try:
        entries = list(os.scandir(repo.tasks_dir))
    except (FileNotFoundError, NotADirectoryError):
        return found
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            if name.endswith(".tmp") and layout.REPORT_SUFFIX + "." in name:  # fs.replace's
                found.leftovers.append(Path(entry.path))
            continue
        if entry.is_dir(follow_symlinks=False):
            if name not in known_tasks:
                _look_into(repo, name, found, known_tasks)
        elif layout.is_drop([name]):
            _note(found, prefix + name, entry.path)
        elif layout.is_report([name]):
            found.reports.add(prefix + name)
    return found


def _look_into(repo: Repository, name: str, found: Found, known_tasks: set[str]) -> None:
    if transitions_of(repo, name):
        known_tasks.add(name)
        return
    folder = repo.tasks_dir / name
    rel = f"{repo.tasks_rel}/{name}/"
    _note(found, rel + layout.ENVELOPE, str(folder / layout.ENVELOPE))
    report = folder / layout.report_name(layout.ENVELOPE)
    if report.exists():
        found.reports.add(rel + report.name)
    found.leftovers += leftover_temporaries(report)


def _note(found: Found, rel: str, path: str) -> None:
    try:
        info = os.lstat(path)
    except OSError:
        return
    if stat.S_ISDIR(info.st_mode):
        return
    found.drops[rel] = Look(info.st_size, info.st_mtime_ns, info.st_ino)
