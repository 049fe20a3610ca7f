"""Running `taskfs watch` as a real process in a test, and reading its log.

Nothing here sleeps for a fixed time: every wait polls for a condition and fails at a
deadline. Every process started is stopped (or killed) when the test ends.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

DEADLINE = 60.0
FAST = ("--settle", "0.1", "--debounce", "0.05", "--rescan", "600")


def poll(condition: Callable[[], Any], what: str, deadline: float = DEADLINE) -> Any:
    """The first true value of `condition()`, checked until `deadline` seconds have passed."""
    end = time.monotonic() + deadline
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


class Watcher:
    """One `taskfs watch` process; its log is a file the test reads."""

    count = 0

    def __init__(self, repo: Path, *args: str, env: dict[str, str] | None = None) -> None:
        Watcher.count += 1
        self.repo = repo
        self.log = repo.parent / f"watch-{Watcher.count}.log"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "taskfs", "watch", "-v", "--log", str(self.log), *FAST, *args],
            cwd=repo,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )

    def lines(self) -> list[str]:
        try:
            return self.log.read_text().splitlines()
        except FileNotFoundError:
            return []

    def actions(self, action: str) -> list[dict[str, str]]:
        """The fields of each log line of `action`."""
        return [fields(line) for line in self.lines() if line.split(" ")[1:2] == [action]]

    def wait_for(self, action: str, count: int = 1, **match: str) -> list[dict[str, str]]:
        def found() -> list[dict[str, str]] | None:
            if self.proc.poll() is not None:
                raise AssertionError(f"the watcher exited: {self.proc.returncode}\n{self.dump()}")
            hits = [f for f in self.actions(action) if all(f.get(k) == v for k, v in match.items())]
            return hits if len(hits) >= count else None

        try:
            return poll(found, f"{count} x {action} {match}")  # type: ignore[no-any-return]
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{self.dump()}") from None

    def started(self) -> Watcher:
        self.wait_for("pass", trigger="start")
        return self

    def stop(self, sig: int = signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"the watcher did not stop on {sig}\n{self.dump()}") from None
        self.out, self.err = (s.read().decode() for s in (self.proc.stdout, self.proc.stderr))
        return code

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.kill()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None and not stream.closed:
                stream.close()

    def dump(self) -> str:
        return "--- watcher log ---\n" + "\n".join(self.lines())


@contextmanager
def watching(repo: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Watcher]:
    watcher = Watcher(repo, *args, env=env)
    try:
        yield watcher.started()
    finally:
        watcher.close()


_FIELD = re.compile(r' ([A-Za-z][\w-]*)=("(?:[^"\\]|\\.)*"|\S*)')


def fields(line: str) -> dict[str, str]:
    """`key=value` pairs of a log line (JSON-quoted values unquoted)."""
    return {
        key: json.loads(value) if value.startswith('"') else value
        for key, value in _FIELD.findall(line)
    }


def processes_in(root: Path) -> list[str]:
    """The processes whose working folder is inside `root` (what a test must not leave)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if cwd == str(root) or cwd.startswith(f"{root}/"):
            found.append(f"{entry.name}: {cmd}")
    return found


def drop(path: Path, text: str) -> Path:
    """Save `text` the way careful editors and tools do: a temporary file, then a rename."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return path


def signal_name(sig: int) -> str:
    return signal.Signals(sig).name
