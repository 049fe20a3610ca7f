"""The calls in flight, and what ends them early.

- **A call the client cancels** (`notifications/cancelled`): the SDK cancels its handler and
  answers nothing, as the specification says. A tool that runs a command (`agent_check`) runs
  it in a worker thread; on cancellation the command's whole process group is killed and the
  worker writes nothing (`check_stopped` inside), and the handler waits for the worker before
  it lets go, so no write is left half done. Any other tool is quick and is let finish.
- **A stdio client that closes its end** (the host's way to shut a server down): every call
  already read is answered before the server exits; a running check is stopped the same way
  and answered `check_stopped`. Nothing is written after the answer.
- **Progress**: while a check runs, a client that sent a progress token gets a
  `notifications/progress` every second: the seconds elapsed, and what the command printed
  last.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread

TICK = 1.0  # seconds between two progress notifications
CLIENT_CANCELLED = "the client cancelled the call"
CLIENT_CLOSED = "the client closed the connection"


class Stopper:
    """Why a running command should stop (None: it goes on); set from any thread."""

    def __init__(self) -> None:
        self._why: str | None = None

    def stop(self, why: str) -> None:
        if self._why is None:
            self._why = why

    def __call__(self) -> str | None:
        return self._why


class Watch:
    """What a check has done so far, as its progress callbacks tell it (`checks.Progress`)."""

    def __init__(self) -> None:
        self._line = ""
        self._lock = threading.Lock()

    def started(self, what: str, command: str, timeout: float) -> None:
        with self._lock:
            self._line = f"{what}: {command}"

    def output(self, stream: str, chunk: bytes) -> None:
        lines = [x for x in chunk.decode("utf-8", errors="replace").splitlines() if x.strip()]
        if lines:
            with self._lock:
                self._line = lines[-1][:200]

    def line(self) -> str:
        with self._lock:
            return self._line


class Running:
    """The server's calls in flight: counted by the gate, stopped when the client goes."""

    def __init__(self) -> None:
        self.entered = 0
        self.left = 0
        self._stoppers: set[Stopper] = set()
        self.closed: str | None = None

    def enter(self) -> None:
        self.entered += 1

    def leave(self) -> None:
        self.left += 1

    @property
    def busy(self) -> bool:
        """Whether a handler is running now."""
        return self.left < self.entered

    def close(self) -> None:
        """The client closed its end: stop what runs long (it is answered `check_stopped`)."""
        self.closed = CLIENT_CLOSED
        for stopper in list(self._stoppers):
            stopper.stop(CLIENT_CLOSED)

    async def run(
        self,
        work: Callable[[Stopper, Watch], Any],
        progress: Callable[[float, str], Any] | None = None,
    ) -> Any:
        """`work(stop, watch)` in a worker thread, with progress every `TICK` seconds through
        `progress(elapsed, line)`. Cancelled, it stops the work and waits for the worker before
        the cancellation goes on."""
        stopper, watch = Stopper(), Watch()
        if self.closed is not None:
            stopper.stop(self.closed)
        self._stoppers.add(stopper)
        done = threading.Event()
        result: list[Any] = []

        def worker() -> None:
            try:
                result.append(work(stopper, watch))
            finally:
                done.set()

        started = time.monotonic()

        async def tick() -> None:
            while progress is not None:
                await anyio.sleep(TICK)
                try:
                    await progress(round(time.monotonic() - started, 3), watch.line())
                except Exception:  # a client gone deaf stops the ticks, never the work
                    return

        try:
            async with anyio.create_task_group() as group:
                group.start_soon(tick)
                await anyio.to_thread.run_sync(worker, abandon_on_cancel=True)
                group.cancel_scope.cancel()
            return result[0]
        except anyio.get_cancelled_exc_class():
            stopper.stop(self.closed or CLIENT_CANCELLED)
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(done.wait)
            raise
        finally:
            self._stoppers.discard(stopper)
