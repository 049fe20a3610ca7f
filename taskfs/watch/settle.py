"""Reading only complete files: a file is ready when two looks, far enough apart, saw the same
size, modification time and inode (pure; the caller passes the looks and the clock)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Look:
    size: int
    mtime_ns: int
    inode: int


class Settler:
    def __init__(self, settle: float) -> None:
        self.settle = settle
        self._first: dict[str, tuple[Look, float]] = {}

    def ready(self, path: str, look: Look, now: float) -> bool:
        """Whether `path` looked like this at an earlier look at least `settle` seconds ago."""
        seen = self._first.get(path)
        if seen is None or seen[0] != look:
            self._first[path] = (look, now)
            return False
        return now - seen[1] >= self.settle

    def due(self, path: str, now: float) -> float:
        """How long until `path` can be ready, if it stays as it was last seen."""
        seen = self._first.get(path)
        return self.settle if seen is None else max(0.0, seen[1] + self.settle - now)

    def keep_only(self, paths: Iterable[str]) -> None:
        """Forget the files that are gone."""
        present = set(paths)
        for path in [p for p in self._first if p not in present]:
            del self._first[path]
