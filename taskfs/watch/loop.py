"""Running the watcher: `--once` (passes until nothing pending is left) or for good (a pass at
start, after each quiet spell following events, when files still being written may have
settled, and periodically), until SIGINT or SIGTERM.

A signal only sets a flag. The pass under way finishes the step it is in (a batch commit, a
check) and stops before the next, so a stop never leaves a half-done transition; a SIGKILL is
covered by the store's journal, finished or undone by the next writer. One watcher per
checkout: a second one is refused (`watcher_running`).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING

from taskfs.api.context import Context, LockHeld
from taskfs.errors import TaskfsError, fail
from taskfs.watch.events import Hint, Hints, start_observer
from taskfs.watch.log import ActionLog
from taskfs.watch.reconcile import PassResult, Reconciler, Settings

if TYPE_CHECKING:
    from taskfs.api.context import LoadedPolicy, Repository

# The longest a stop request waits to be noticed while the loop is idle.
_STOP_SLICE = 0.1
# Events keep coming: pass anyway once the first of them is this old.
_LONGEST_DEBOUNCE = 1.0
# --once gives a file that keeps changing this many settle intervals before leaving it.
ONCE_LOOKS = 40


@dataclass(frozen=True)
class Options:
    once: bool = False
    settings: Settings = field(default_factory=Settings)
    debounce: float = 0.1  # quiet time after the last event before a pass
    rescan: float = 30.0  # seconds between full rescans
    polling: bool = False
    poll_interval: float = 1.0


class Stop:
    """Set from a signal handler, so it takes no lock: the loop looks at it between steps."""

    def __init__(self) -> None:
        self.requested: str | None = None

    def __call__(self) -> bool:
        return self.requested is not None


class Wakeup:
    """Hints from the observer thread to the loop."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._hints: dict[Hint, None] = {}  # in arrival order, each once
        self._first = 0.0
        self._last = 0.0

    def notify(self, hint: Hint) -> None:
        with self._cv:
            now = time.monotonic()
            if not self._hints:
                self._first = now
            self._hints[hint] = None
            self._last = now
            self._cv.notify()

    def withdraw(self, hints: set[Hint]) -> None:
        with self._cv:
            for hint in hints:
                self._hints.pop(hint, None)

    def wait(self, timeout: float) -> None:
        with self._cv:
            if not self._hints:
                self._cv.wait(timeout)

    def take(self) -> list[Hint]:
        with self._cv:
            taken, self._hints = list(self._hints), {}
            return taken

    def settled(self, debounce: float, longest: float) -> bool | None:
        """None without hints; else whether they have been quiet for `debounce` seconds (or
        waited `longest`: a steady stream of files must not postpone every pass)."""
        with self._cv:
            if not self._hints:
                return None
            now = time.monotonic()
            return now - self._last >= debounce or now - self._first >= longest


def watch(context: Context, log: ActionLog, options: Options) -> int:
    """Run the watcher on the checkout; the exit status (0, or 1 when --once left errors
    behind)."""
    repo = context.repo
    policy = context.policy()
    if not repo.tasks_dir.is_dir():
        raise fail(
            "file_unreadable",
            path=repo.tasks_rel,
            reason="the tasks folder does not exist (run `taskfs init`)",
        )
    stop = Stop()
    try:
        with context.sole_lock("watch.lock", f"pid {os.getpid()}"), _signals(stop):
            _recover(repo, log)
            _started(log, repo, policy, options)
            if options.once:
                code = _once(repo, log, policy, options, stop)
            else:
                code = _forever(repo, log, policy, options, stop)
    except LockHeld as held:
        raise fail("watcher_running", owner=held.owner or "another process") from None
    log("stopped", reason=stop.requested or ("done" if options.once else "stopped"))
    return code


def _recover(repo: Repository, log: ActionLog) -> None:
    """Finish or undo what a killed writer left, before anything is read. When that cannot be
    done yet (a killed watcher's git may still hold the index), the next write does it."""
    try:
        with repo.writing():
            pass
    except TaskfsError as exc:
        log("error", stage="recovery", errors=",".join(exc.codes), reason=str(exc))


def _started(log: ActionLog, repo: Repository, loaded: LoadedPolicy, options: Options) -> None:
    rules = len(loaded.policy.allow.commands)
    policy = (
        f"{loaded.path} ({rules} command patterns)"
        if loaded.found
        else f"none at {loaded.path}: no acceptance check is run by the watcher"
    )
    log(
        "watching",
        folder=repo.tasks_rel,
        mode="once" if options.once else "continuous",
        pid=os.getpid(),
        policy=policy,
    )


def _once(
    repo: Repository, log: ActionLog, policy: LoadedPolicy, options: Options, stop: Stop
) -> int:
    reconciler = Reconciler(repo, log, policy.policy, options.settings, stopping=stop)
    failed = 0
    result = PassResult((), None, 0, False)
    for look in range(ONCE_LOOKS):
        result = reconciler.pass_(full=look == 0)
        failed += result.failed
        if result.stopped or not result.waiting or stop():
            break
        _sleep(result.due or options.settings.settle, stop)
    for rel in result.waiting:
        log("deferred", path=rel, reason="still being written")
    return 1 if failed else 0


def _forever(
    repo: Repository, log: ActionLog, policy: LoadedPolicy, options: Options, stop: Stop
) -> int:
    wakeup = Wakeup()
    hints = Hints(repo.root, repo.tasks_rel, wakeup.notify, wakeup.withdraw)
    reconciler = Reconciler(
        repo, log, policy.policy, options.settings, stopping=stop, expect=hints.expect
    )
    observer = start_observer(
        repo.tasks_dir,
        hints,
        log,
        polling=options.polling,
        poll_interval=options.poll_interval,
    )
    try:
        # The first pass comes after the observer started, so nothing falls between the two.
        result = _pass(reconciler, log, "start", full=True)
        settle_at = _settle_at(result)
        next_rescan = time.monotonic() + options.rescan
        while not stop():
            now = time.monotonic()
            settled = wakeup.settled(options.debounce, _LONGEST_DEBOUNCE)
            if settled:
                result = _pass(reconciler, log, "events", hints=wakeup.take())
            elif settled is None and now >= next_rescan:
                result = _pass(reconciler, log, "rescan", full=True)
                next_rescan = time.monotonic() + options.rescan
            elif settled is None and now >= settle_at:
                result = _pass(reconciler, log, "settle")
            elif settled is False:
                _sleep(min(options.debounce, _STOP_SLICE), stop)
                continue
            else:
                wakeup.wait(min(_STOP_SLICE, max(0.0, min(next_rescan, settle_at) - now)))
                continue
            settle_at = _settle_at(result)
    finally:
        observer.stop()
        observer.join(timeout=10)
    return 0


def _settle_at(result: PassResult) -> float:
    return float("inf") if result.due is None else time.monotonic() + result.due


def _pass(
    reconciler: Reconciler,
    log: ActionLog,
    trigger: str,
    *,
    full: bool = False,
    hints: list[Hint] | None = None,
) -> PassResult:
    written = [rel for rel, removal in hints or () if not removal]
    removed = [rel for rel, removal in hints or () if removal]
    log.debug("pass", trigger=trigger, hints=written[:5] or None, gone=removed[:5] or None)
    return reconciler.pass_(full=full)


def _sleep(seconds: float, stop: Stop) -> None:
    end = time.monotonic() + max(0.0, seconds)
    while not stop() and (left := end - time.monotonic()) > 0:
        time.sleep(min(left, _STOP_SLICE))


@contextmanager
def _signals(stop: Stop) -> Iterator[None]:
    """SIGINT and SIGTERM ask for a stop instead of interrupting whatever runs."""

    def handler(number: int, _frame: FrameType | None) -> None:
        stop.requested = signal.Signals(number).name

    if threading.current_thread() is not threading.main_thread():
        yield  # signals can only be handled on the main thread; the caller stops us then
        return
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
