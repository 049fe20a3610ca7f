"""Events as hints, fed by hand (no observer thread): which wake the watcher, which do not,
and the fall-back to polling when inotify's limits are reached."""

from __future__ import annotations

import errno
import io
from pathlib import Path
from typing import Any

import pytest
from watchdog.events import (
    DirCreatedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
)
from watchdog.observers.polling import PollingObserver

from taskfs.watch.events import Hint, Hints, start_observer
from taskfs.watch.log import ActionLog
from taskfs.watch.loop import Wakeup

ROOT = Path("/repo")
TASKS = ROOT / "tasks"


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def hints_of(*events: FileSystemEvent, clock: Clock | None = None) -> list[Hint]:
    seen: list[Hint] = []
    handler = Hints(ROOT, "tasks", seen.append, clock=clock or Clock())
    for event in events:
        handler.dispatch(event)
    return seen


def test_a_drop_written_wakes_the_watcher() -> None:
    assert hints_of(FileCreatedEvent(str(TASKS / "fix.yaml"))) == [("tasks/fix.yaml", False)]
    assert hints_of(FileClosedEvent(str(TASKS / "fix.yaml"))) == [("tasks/fix.yaml", False)]


def test_an_atomic_save_wakes_it_through_the_move_destination() -> None:
    event = FileMovedEvent(str(TASKS / ".fix.yaml.tmp"), str(TASKS / "fix.yaml"))
    assert hints_of(event) == [("tasks/fix.yaml", False)]


def test_a_folder_moved_or_made_in_the_tasks_folder_wakes_it() -> None:
    assert hints_of(DirCreatedEvent(str(TASKS / "t1"))) == [("tasks/t1", False)]


@pytest.mark.parametrize(
    "event",
    [
        FileCreatedEvent(str(TASKS / ".fix.yaml.swp")),
        FileModifiedEvent(str(TASKS / "fix.yaml~")),
        FileCreatedEvent(str(TASKS / "4913")),
        FileCreatedEvent(str(TASKS / ".#fix.yaml")),
        FileCreatedEvent(str(TASKS / "fix+refused.yaml")),
        FileCreatedEvent(str(TASKS / "t1" / "status" / "0002-working-abcdefgh.yaml")),
        FileCreatedEvent(str(TASKS / "t1" / "evidence" / "x.yaml")),
        FileCreatedEvent(str(TASKS / "t1" / ".envelope.yaml.x1y2.tmp")),
        DirCreatedEvent(str(TASKS / "t1" / "status")),
        FileCreatedEvent(str(ROOT / ".git" / "index.lock")),
        FileCreatedEvent(str(ROOT / "tasks-other" / "x.yaml")),
    ],
)
def test_what_cannot_mean_work_does_not_wake_it(event: FileSystemEvent) -> None:
    assert hints_of(event) == []


def test_the_watchers_own_changes_do_not_wake_it() -> None:
    clock = Clock()
    seen: list[Hint] = []
    withdrawn: list[set[Hint]] = []
    handler = Hints(ROOT, "tasks", seen.append, withdrawn.append, clock=clock)
    handler.dispatch(FileCreatedEvent(str(TASKS / "t1" / "envelope.yaml")))  # while writing
    handler.expect(["tasks/fix.yaml"], ["tasks/t1", "tasks/t1/envelope.yaml"])
    assert withdrawn == [
        {("tasks/fix.yaml", True), ("tasks/t1", False), ("tasks/t1/envelope.yaml", False)}
    ]
    seen.clear()
    handler.dispatch(FileDeletedEvent(str(TASKS / "fix.yaml")))  # arriving late
    handler.dispatch(DirCreatedEvent(str(TASKS / "t1")))
    assert seen == []
    handler.dispatch(FileCreatedEvent(str(TASKS / "fix.yaml")))  # a new file, same name
    assert seen == [("tasks/fix.yaml", False)]
    clock.now += 60
    handler.dispatch(FileDeletedEvent(str(TASKS / "fix.yaml")))  # long after: not ours
    assert seen[-1] == ("tasks/fix.yaml", True)


def test_withdrawn_hints_leave_the_queue() -> None:
    wakeup = Wakeup()
    wakeup.notify(("tasks/t1/envelope.yaml", False))
    wakeup.notify(("tasks/new.yaml", False))
    wakeup.withdraw({("tasks/t1/envelope.yaml", False)})
    assert wakeup.take() == [("tasks/new.yaml", False)]
    assert wakeup.settled(0.1, 1.0) is None


class _Refusing:
    """An inotify observer on a machine whose inotify limits are used up."""

    stopped = False

    def schedule(self, *args: Any, **kwargs: Any) -> None:
        pass

    def start(self) -> None:
        raise OSError(errno.ENOSPC, "inotify watch limit reached")

    def stop(self) -> None:
        _Refusing.stopped = True

    def is_alive(self) -> bool:
        return False


def test_inotify_limits_fall_back_to_polling(tmp_path: Path) -> None:
    out = io.StringIO()
    handler = Hints(tmp_path, ".", lambda hint: None)
    observer = start_observer(tmp_path, handler, ActionLog(out), native=_Refusing)
    try:
        assert isinstance(observer, PollingObserver)
        assert " fallback observer=polling " in out.getvalue()
        assert _Refusing.stopped
    finally:
        observer.stop()
        observer.join()


def test_other_observer_errors_are_not_hidden(tmp_path: Path) -> None:
    class Broken(_Refusing):
        def start(self) -> None:
            raise OSError(errno.EACCES, "permission denied")

    with pytest.raises(OSError, match="permission denied"):
        start_observer(
            tmp_path, Hints(tmp_path, ".", lambda hint: None), ActionLog(), native=Broken
        )
