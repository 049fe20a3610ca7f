"""A taskfs server (`a2a serve`, `mcp --http`) as a subprocess on a free loopback port.

The server prints the URL it listens on as its first line; the process (its whole process
group) is always killed when the block ends, whatever happened.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Served:
    url: str
    proc: subprocess.Popen[bytes]
    stderr: list[str] = field(default_factory=list)

    def kill(self) -> None:
        """kill -9, the server and anything it started."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)


@contextlib.contextmanager
def server(
    args: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None
) -> Iterator[Served]:
    """`taskfs ARGS` in `cwd`, once it printed its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskfs", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
        start_new_session=True,
    )
    served = Served("", proc)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode().strip()  # the bound URL; EOF if it failed
        if not line.startswith("http://"):
            served.kill()
            assert proc.stderr is not None
            raise AssertionError(f"the server did not start: {proc.stderr.read().decode()}")
        served.url = line
        yield served
    finally:
        served.kill()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
