"""taskfs in a pseudo-terminal, as a person at a shell runs it: what it draws, and keys typed.

`spawn` starts `taskfs ARGS` with a pseudo-terminal (of a fixed size) as its stdin and stderr,
and as its stdout too unless `stdout_tty=False` (then stdout is a pipe, read at the end). The
process runs in its own session and is always killed, with anything it started, when the block
ends. Reads wait for what is expected with a deadline, never a fixed sleep.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]|\x1b\][^\x07]*\x07")


def plain(text: str) -> str:
    """What the terminal shows of `text`, without its control sequences."""
    return ANSI.sub("", text).replace("\r", "")


@dataclass
class Terminal:
    proc: subprocess.Popen[bytes]
    master: int
    seen: bytearray = field(default_factory=bytearray)

    @property
    def text(self) -> str:
        return self.seen.decode("utf-8", "replace")

    def _pump(self, wait: float) -> bool:
        """Read what is there (waiting up to `wait` s); False at end of output."""
        ready, _w, _x = select.select([self.master], [], [], wait)
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # EIO: every end of the terminal closed
            return False
        if not chunk:
            return False
        self.seen += chunk
        return True

    def wait_for(self, found: Callable[[str], bool], *, since: int = 0, timeout: float = 60) -> str:
        """Read until `found(output since offset `since`)`; that output. AssertionError with
        what was seen when the deadline passes or the output ends first."""
        deadline = time.monotonic() + timeout
        while True:
            now = self.seen[since:].decode("utf-8", "replace")
            if found(now):
                return now
            if time.monotonic() > deadline:
                raise AssertionError(f"not seen in {timeout} s; the terminal shows:\n{plain(now)}")
            if not self._pump(0.2) and not found(self.seen[since:].decode("utf-8", "replace")):
                raise AssertionError(f"the output ended; the terminal showed:\n{plain(now)}")

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def finish(self, timeout: float = 60) -> int:
        """Read to the end of the output; the exit status."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._pump(0.1)
        while self._pump(0):
            if not select.select([self.master], [], [], 0)[0]:
                break
        return self.proc.wait(timeout=max(1.0, deadline - time.monotonic()))

    def stdout(self) -> str:
        """What went to stdout when it is a pipe (`stdout_tty=False`), once the process ended."""
        assert self.proc.stdout is not None
        return self.proc.stdout.read().decode("utf-8", "replace")


@contextlib.contextmanager
def spawn(
    args: Sequence[str],
    cwd: Path,
    *,
    stdout_tty: bool = True,
    env: Mapping[str, str] | None = None,
    columns: int = 140,
    rows: int = 45,
) -> Iterator[Terminal]:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    environment = {**os.environ, "TERM": "xterm-256color", **(env or {})}
    environment.pop("NO_COLOR", None)
    environment.pop("COLUMNS", None)
    environment.pop("LINES", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskfs", *args],
        cwd=cwd,
        stdin=slave,
        stdout=slave if stdout_tty else subprocess.PIPE,
        stderr=slave,
        env=environment,
        start_new_session=True,
    )
    os.close(slave)
    terminal = Terminal(proc, master)
    try:
        yield terminal
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
        os.close(master)
