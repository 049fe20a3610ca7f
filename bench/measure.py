"""Timing whole processes: wall time from spawn to exit, and the child's peak memory.

Each measured operation is one or more commands run one after another (a bare `git add` then
`git commit` is two); its time is the wall time of all of them, its memory the largest peak
resident set of any of them.

Peak memory needs care: Linux starts a child's `ru_maxrss` at its parent's resident size at
`fork` (and `exec` keeps the larger), so every child of this ~40 MiB harness would report at
least 40 MiB. Memory is therefore taken in one extra run under GNU `/usr/bin/time -f %M`, a
small process whose child starts from its size; timed runs spawn the command directly. Where
`/usr/bin/time` is missing, the `wait4` figure is used and marked as an upper bound.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

Argv = Sequence[str]
TIMEOUT = 900.0


@dataclass
class Run:
    seconds: float
    peak_kib: int
    code: int
    stdout: bytes
    stderr: bytes
    cpu: float = 0.0  # user + system seconds of the commands and the children they waited for


@dataclass
class Op:
    """One operation of the table. `steps(i)` gives the commands of run i (runs are numbered
    from 0, the warm-up included, so an operation that changes the repository, like `claim`,
    can act on a different task each time); `check` looks at the warm-up's output."""

    name: str
    steps: Callable[[int], list[Argv]]
    cwd: Path
    check: Callable[[Run], str | None] | None = None
    runs: list[Run] = field(default_factory=list)
    error: str | None = None
    peak_kib: int | None = None

    @property
    def median(self) -> float | None:
        return statistics.median(r.seconds for r in self.runs) if self.runs else None

    @property
    def cpu_median(self) -> float | None:
        return statistics.median(r.cpu for r in self.runs) if self.runs else None

    @property
    def peak_mib(self) -> float | None:
        return None if self.peak_kib is None else self.peak_kib / 1024


TIME = Path("/usr/bin/time")
EXACT_MEMORY = TIME.is_file()


def run_steps(
    steps: Sequence[Argv], cwd: Path, env: dict[str, str], *, memory: bool = False
) -> Run:
    """Run the commands one after another; `memory` runs each under /usr/bin/time."""
    peak = 0
    cpu = 0.0
    code = 0
    out = b""
    err = b""
    started = time.perf_counter()
    for argv in steps:
        with tempfile.NamedTemporaryFile() as report, tempfile.TemporaryFile() as stdout:
            with tempfile.TemporaryFile() as stderr:
                wrapped = list(argv)
                if memory and EXACT_MEMORY:
                    wrapped = [str(TIME), "-f", "%M", "-o", report.name, *wrapped]
                proc = subprocess.Popen(
                    wrapped,
                    cwd=cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=stdout,
                    stderr=stderr,
                )
                code, usage = _wait(proc)
                stdout.seek(0)
                stderr.seek(0)
                out, err = stdout.read(), stderr.read()
            kib = usage.ru_maxrss
            if memory and EXACT_MEMORY:
                text = report.read().decode().strip().splitlines()
                kib = int(text[-1]) if text and text[-1].isdigit() else kib
        peak = max(peak, kib)
        cpu += usage.ru_utime + usage.ru_stime
        if code != 0:
            break
    return Run(time.perf_counter() - started, peak, code, out, err, cpu)


def _wait(proc: subprocess.Popen[bytes]) -> tuple[int, os.struct_rusage]:
    # A blocking wait4 returns the moment the child exits; a timer kills a runaway one.
    timer = threading.Timer(TIMEOUT, proc.kill)
    timer.start()
    try:
        _pid, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage


def measure(ops: Sequence[Op], runs: int, env: dict[str, str], log: Callable[[str], None]) -> None:
    """One warm-up run of every operation, then `runs` timed rounds in turn (round-robin, so
    that a slow minute of the machine touches every operation alike, not one), then one run
    for peak memory (numbered `runs + 1`)."""
    for op in ops:
        warm = run_steps(op.steps(0), op.cwd, env)
        problem = _problem(op, warm)
        if problem:
            op.error = problem
            log(f"  {op.name}: {problem}")
    for i in range(1, runs + 1):
        for op in ops:
            if op.error:
                continue
            result = run_steps(op.steps(i), op.cwd, env)
            if result.code != 0:
                op.error = f"exit {result.code} on run {i}: {_tail(result)}"
                log(f"  {op.name}: {op.error}")
                continue
            op.runs.append(result)
    for op in ops:
        if op.error:
            continue
        result = run_steps(op.steps(runs + 1), op.cwd, env, memory=True)
        if result.code == 0:
            op.peak_kib = result.peak_kib


def _problem(op: Op, warm: Run) -> str | None:
    if warm.code != 0:
        return f"exit {warm.code}: {_tail(warm)}"
    if op.check is not None:
        return op.check(warm)
    return None


def _tail(run: Run) -> str:
    text = (run.stderr or run.stdout).decode("utf-8", "replace").strip()
    return text[-300:]
