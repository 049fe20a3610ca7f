"""The watcher's log: one line per action, on stderr or in a file, never on stdout.

    2025-01-31T12:00:00.123456Z submitted path=tasks/fix.yaml id=3kx9m2pq7v commit=1a2b3c4d5e6f

A line is the time, the action, then `key=value` pairs; a value with anything but plain
characters is written as a JSON string, so a line splits without ambiguity.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from datetime import datetime, timezone
from typing import TextIO

from taskfs.core.display import safe
from taskfs.core.layout import format_time

_BARE = re.compile(r"[A-Za-z0-9_./:@,+\-]+")


class ActionLog:
    def __init__(self, stream: TextIO | None = None, *, verbose: bool = False) -> None:
        self._stream = stream or sys.stderr
        self._lock = threading.Lock()
        self.verbose = verbose

    def __call__(self, action: str, **fields: object) -> None:
        parts = [format_time(datetime.now(timezone.utc)), action]
        parts += [f"{key}={_value(value)}" for key, value in fields.items() if value is not None]
        line = " ".join(parts) + "\n"
        with self._lock:
            self._stream.write(safe(line))
            self._stream.flush()

    def debug(self, action: str, **fields: object) -> None:
        if self.verbose:
            self(action, **fields)


def _value(value: object) -> str:
    text = ",".join(str(v) for v in value) if isinstance(value, list | tuple) else str(value)
    return text if _BARE.fullmatch(text) else json.dumps(text, ensure_ascii=False)
