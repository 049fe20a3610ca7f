"""File-system events as hints: which ones may mean work, and the observer that sends them.

Only the tasks folder is watched (watching the repository root makes every commit a flood of
events under .git), with an event filter, and an event only wakes the loop: the pass that
follows rescans. Changes the watcher is about to make itself are announced with `expect` and
do not wake it again. When the kernel's inotify limits are reached, the watcher falls back
to polling the folder.
"""

from __future__ import annotations

import errno
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from watchdog.events import (
    DirCreatedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

from taskfs.core import layout
from taskfs.watch.log import ActionLog

EVENTS: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileClosedEvent,
    FileMovedEvent,
    FileDeletedEvent,
    DirCreatedEvent,
    DirMovedEvent,
]
# How long an announced change of the watcher's own is expected to show up as events.
OWN_CHANGE_SECONDS = 5.0
LIMIT_ERRORS = frozenset({errno.ENOSPC, errno.EMFILE, errno.ENFILE, errno.ENOMEM})
# A path that may mean work (repository-relative), and whether it went away.
Hint = tuple[str, bool]


class Hints(FileSystemEventHandler):
    """Turns events into hints for the paths that may mean work: `notify((path, removal))`.

    The watcher's own changes are announced with `expect` once they are made: events that
    arrive later are dropped here, and those that came while it was writing are withdrawn
    from the queue with `withdraw`.
    """

    def __init__(
        self,
        root: Path,
        tasks_rel: str,
        notify: Callable[[Hint], None],
        withdraw: Callable[[set[Hint]], None] = lambda hints: None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._root = root
        self._tasks_rel = tasks_rel
        self._tasks = root / tasks_rel
        self._notify = notify
        self._withdraw = withdraw
        self._clock = clock
        self._lock = threading.Lock()
        self._expected: dict[Hint, float] = {}  # (path, removal) -> until

    def expect(self, removed: Sequence[str], written: Sequence[str]) -> None:
        """The watcher removed and wrote these (repository-relative) paths."""
        until = self._clock() + OWN_CHANGE_SECONDS
        own = {(rel, True) for rel in removed} | {(rel, False) for rel in written}
        with self._lock:
            for hint in own:
                self._expected[hint] = until
        self._withdraw(own)

    def on_any_event(self, event: FileSystemEvent) -> None:
        kind = event.event_type
        if kind == "moved":
            self._consider(_text(event.src_path), event.is_directory, removal=True)
            self._consider(_text(event.dest_path), event.is_directory, removal=False)
        else:
            self._consider(_text(event.src_path), event.is_directory, removal=kind == "deleted")

    def _consider(self, path: str, is_dir: bool, *, removal: bool) -> None:
        if not path:
            return
        try:
            parts = Path(path).relative_to(self._tasks).parts
        except ValueError:
            return
        if not layout.is_watch_hint(parts, is_dir) or (removal and is_dir):
            return
        rel = "/".join((self._tasks_rel, *parts))
        if not self._own(rel, removal):
            self._notify((rel, removal))

    def _own(self, rel: str, removal: bool) -> bool:
        now = self._clock()
        with self._lock:
            if len(self._expected) > 10_000:
                self._expected = {k: t for k, t in self._expected.items() if t > now}
            until = self._expected.get((rel, removal))
        return until is not None and now < until


def _text(path: Any) -> str:
    return path.decode("utf-8", "surrogateescape") if isinstance(path, bytes) else str(path)


def start_observer(
    folder: Path,
    handler: FileSystemEventHandler,
    log: ActionLog,
    *,
    polling: bool = False,
    poll_interval: float = 1.0,
    native: Callable[[], Any] = Observer,
) -> Any:
    """A started observer of `folder` (recursive): inotify, or polling when asked or when
    inotify's limits are reached."""
    if not polling:
        observer = native()
        try:
            observer.schedule(handler, str(folder), recursive=True, event_filter=EVENTS)
            observer.start()
        except OSError as exc:
            if exc.errno not in LIMIT_ERRORS:
                raise
            log("fallback", observer="polling", reason=f"inotify: {exc.strerror or exc}")
            _stop(observer)
        else:
            log.debug("observer", kind="inotify")
            return observer
    observer = PollingObserver(timeout=poll_interval)
    observer.schedule(handler, str(folder), recursive=True, event_filter=EVENTS)
    observer.start()
    log.debug("observer", kind="polling", interval=poll_interval)
    return observer


def _stop(observer: Any) -> None:
    try:
        observer.stop()
        if observer.is_alive():
            observer.join(timeout=5)
    except Exception:
        return
