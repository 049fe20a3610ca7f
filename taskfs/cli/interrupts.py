"""SIGTERM and SIGHUP stop a long command the way Ctrl-C does.

By default they end Python at once, skipping every `finally`: a running acceptance check would
keep running with no limit and no one to kill it. Raised as an exception instead, they unwind
through the runner, which kills the command's processes, and nothing is recorded.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class Interrupted(KeyboardInterrupt):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


class _Once:
    """Raises on the first signal only: a second one must not cut short the cleanup the first
    started (killing the command's processes, reaping its daemons)."""

    def __init__(self) -> None:
        self.raised = False

    def __call__(self, signum: int, _frame: FrameType | None) -> None:
        if self.raised:
            return
        self.raised = True
        raise Interrupted(signum)


@contextlib.contextmanager
def like_sigint() -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP raise `Interrupted` (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    once = _Once()
    try:
        for signum in _SIGNALS:
            previous[signum] = signal.signal(signum, once)
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
