"""The ledger as the rules read it: every task's projection by id, read from the read model's
store row by row as a rule asks (`taskfs.readmodel.db`), so that a writer reads the rows it
needs and no others (issue 31).

`Ledger` is a `Mapping[str, Summary]` over the store (archived tasks included: a dependency on
one is resolved like any other); `overlay` gives the same view with some tasks as a writer is
about to leave them (or gone), for the rules that decide on the ledger after a change. The
relations the rules look up by key (who depends on a task, which entries lie near an entry)
are asked of the store's indexes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from taskfs.core import globs
from taskfs.readmodel import db
from taskfs.readmodel.projection import Summary

# An entry's place is filed under its first two segments: a query meets only those files.
FILED_DEPTH = 2


def file_of(names: Sequence[str]) -> str:
    """The file a path entry's place is filed in: its first two segments, joined by `/`
    (which no segment holds); "" for a place of none."""
    return "/".join(names[:FILED_DEPTH])


def interface_file(raw: str) -> str:
    """An interface entry is filed by itself: interfaces are compared by name alone."""
    return raw


class Ledger(Mapping[str, Summary]):
    """The tasks HEAD holds, by id, each read from the store when first asked for."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        changes: Mapping[str, Summary | None] | None = None,
        memo: dict[str, Summary | None] | None = None,
    ) -> None:
        self.conn = conn
        self._changes: dict[str, Summary | None] = dict(changes or {})
        self._memo: dict[str, Summary | None] = {} if memo is None else memo

    def overlay(self, changes: Mapping[str, Summary | None]) -> Ledger:
        """This ledger with the tasks in `changes` as given (None: as if gone)."""
        return Ledger(self.conn, {**self._changes, **changes}, self._memo)

    def _stored(self, task_id: str) -> Summary | None:
        if task_id in self._memo:
            return self._memo[task_id]
        found = self.conn.execute("SELECT summary FROM rows WHERE id = ?", (task_id,)).fetchone()
        summary = None
        if found is not None and found[0] is not None:
            summary = db.load_summary(found[0], self.overlapping(task_id))
        self._memo[task_id] = summary
        return summary

    def __getitem__(self, task_id: str) -> Summary:
        summary = self._changes[task_id] if task_id in self._changes else self._stored(task_id)
        if summary is None:
            raise KeyError(task_id)
        return summary

    def __contains__(self, task_id: object) -> bool:
        return isinstance(task_id, str) and self.get(task_id) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids())

    def __len__(self) -> int:
        return len(self.ids())

    def ids(self) -> list[str]:
        """Every readable task's id, in order."""
        stored = db.ids(self.conn, "SELECT id FROM rows WHERE summary IS NOT NULL ORDER BY id")
        gone = {t for t, s in self._changes.items() if s is None}
        added = {t for t, s in self._changes.items() if s is not None}
        return sorted((set(stored) - gone) | added)

    def values(self) -> list[Summary]:  # type: ignore[override]
        """Every task, read in one pass (a rule that needs them all: a full listing)."""
        self.load_all()
        return [self[task_id] for task_id in self.ids()]

    def items(self) -> list[tuple[str, Summary]]:  # type: ignore[override]
        return [(summary.id, summary) for summary in self.values()]

    def load_all(self) -> None:
        overlaps: dict[str, list[str]] = {}
        for a, b in self.conn.execute("SELECT a, b FROM overlaps ORDER BY a, b"):
            overlaps.setdefault(a, []).append(b)
        query = "SELECT id, summary FROM rows WHERE summary IS NOT NULL"
        for task_id, data in self.conn.execute(query):
            if task_id not in self._memo:
                self._memo[task_id] = db.load_summary(data, tuple(overlaps.get(task_id, ())))

    def many(self, task_ids: Iterable[str]) -> list[Summary]:
        """The tasks of `task_ids` that exist, read together."""
        wanted = [t for t in dict.fromkeys(task_ids) if t not in self._memo]
        for chunk in _chunks(wanted):
            marks = ",".join("?" * len(chunk))
            overlaps: dict[str, list[str]] = {}
            query = f"SELECT a, b FROM overlaps WHERE a IN ({marks}) ORDER BY a, b"
            for a, b in self.conn.execute(query, chunk):
                overlaps.setdefault(a, []).append(b)
            query = f"SELECT id, summary FROM rows WHERE id IN ({marks})"
            for task_id, data in self.conn.execute(query, chunk):
                self._memo[task_id] = db.load_summary(data, tuple(overlaps.get(task_id, ())))
            for task_id in chunk:
                self._memo.setdefault(task_id, None)
        return [s for t in task_ids if (s := self.get(t)) is not None]

    # -- relations, by key --------------------------------------------------------------------

    def overlapping(self, task_id: str) -> tuple[str, ...]:
        """The tasks (any state, not archived) owning an entry that overlaps one of its own."""
        query = "SELECT b FROM overlaps WHERE a = ? ORDER BY b"
        return tuple(db.ids(self.conn, query, (task_id,)))

    def dependents(self, task_ids: Iterable[str]) -> set[str]:
        """The tasks that name one of `task_ids` in their `dependsOn`."""
        found: set[str] = set()
        for chunk in _chunks(list(task_ids)):
            marks = ",".join("?" * len(chunk))
            found.update(db.ids(self.conn, f"SELECT task FROM deps WHERE dep IN ({marks})", chunk))
        return found

    def following(self, task_id: str) -> list[str]:
        """The tasks whose envelopes name `task_id` as the task they were reassigned or
        retried from, in the order of their ids (`taskfs.core.lineage.Lineage` asks this
        instead of reading every task)."""
        query = "SELECT task FROM follows WHERE before = ? ORDER BY task"
        found = db.ids(self.conn, query, (task_id,))
        if not self._changes:
            return found
        kept = {t for t in found if t not in self._changes}
        kept.update(
            t for t, s in self._changes.items() if s is not None and s.envelope.follows == task_id
        )
        return sorted(kept)

    def discovered(self, task_id: str) -> list[str]:
        """The follow-ups found while working on `task_id` (`taskfs discover`): requests, and
        the tasks they became, in the order of their ids."""
        query = "SELECT task FROM discovered WHERE source = ? ORDER BY task"
        return db.ids(self.conn, query, (task_id,))

    def text(self, task_id: str) -> str | None:
        """What `ls --grep` searches of `task_id` (`texts`), or None when it is not known."""
        found = self.conn.execute("SELECT text FROM texts WHERE task = ?", (task_id,)).fetchone()
        return None if found is None else str(found[0])

    def all_discovered(self) -> dict[str, list[str]]:
        """Every task's follow-ups (`discovered`), by the task they were found in."""
        found: dict[str, list[str]] = {}
        for source, task in self.conn.execute(
            "SELECT source, task FROM discovered ORDER BY source, task"
        ):
            found.setdefault(source, []).append(task)
        return found

    def in_state(self, state: str) -> list[str]:
        """The ids of the listed, unarchived tasks in `state`, in order."""
        query = "SELECT id FROM listing WHERE state = ? AND archived = 0 ORDER BY id"
        return db.ids(self.conn, query, (state,))

    def terminal_ids(self) -> list[str]:
        """The ids of the tasks (not requests) in a terminal state, not archived, in order."""
        query = (
            f"SELECT id FROM listing WHERE archived = 0 AND intake = 0 "
            f"AND state IN {db.TERMINAL_SQL} ORDER BY id"
        )
        return db.ids(self.conn, query)

    def intake_ids(self) -> list[str]:
        return db.ids(self.conn, "SELECT id FROM listing WHERE intake = 1 ORDER BY id")

    def is_archived(self, task_id: str) -> bool:
        found = self.conn.execute("SELECT archived FROM rows WHERE id = ?", (task_id,)).fetchone()
        return bool(found and found[0])

    def near(self, queries: Sequence[str]) -> list[tuple[str, str]]:
        """(task, entry) of every stored entry the entries `queries` can overlap: an interface
        entry of the same name as an interface query (interfaces are compared by name alone,
        and never with paths), and every path entry whose place agrees with a path query's
        (one is a prefix of the other, segment by segment: the ownership index never meets
        any other). The ownership index decides which of them overlap."""
        prefix = globs.INTERFACE_PREFIX
        files: set[str] = set()
        ranges: set[str] = set()
        wanted: list[tuple[str, ...]] = []
        everything = False
        for query in queries:
            if query.startswith(prefix):
                files.add(interface_file(query))
                files.add(interface_file(prefix + globs.parse_entry(query).text))
                continue
            place = tuple(globs.placement(query)[0])
            if not place:
                everything = True  # no literal prefix: it meets every path entry
                continue
            wanted.append(place)
            files.update(file_of(place[:i]) for i in range(len(place) + 1))
            if len(place) < FILED_DEPTH:
                ranges.add(place[0] + "/")  # and every second segment below it
        rows: list[tuple[str, str, str]] = []
        if everything:
            query = "SELECT task, raw, place FROM entries WHERE file NOT LIKE ? ESCAPE '\\'"
            rows += self.conn.execute(query, (_like(prefix) + "%",)).fetchall()
        else:
            for chunk in _chunks(sorted(files)):
                marks = ",".join("?" * len(chunk))
                query = f"SELECT task, raw, place FROM entries WHERE file IN ({marks})"
                rows += self.conn.execute(query, chunk).fetchall()
            for start in ranges:
                query = "SELECT task, raw, place FROM entries WHERE file >= ? AND file < ?"
                rows += self.conn.execute(query, (start, start[:-1] + "0")).fetchall()
        out: dict[tuple[str, str], None] = {}
        for task, raw, place_text in rows:
            if raw.startswith(prefix) or everything or _agrees(place_text, wanted):
                out[(task, raw)] = None
        if everything:  # the interface entries asked for, too
            for chunk in _chunks(sorted(files)):
                marks = ",".join("?" * len(chunk))
                query = f"SELECT task, raw FROM entries WHERE file IN ({marks})"
                out.update(dict.fromkeys(self.conn.execute(query, chunk).fetchall()))
        return list(out)


def _agrees(place_text: str, wanted: list[tuple[str, ...]]) -> bool:
    place = tuple(place_text.split("/")) if place_text else ()
    return any(place[: len(p)] == p or p[: len(place)] == place for p in wanted)


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _chunks(items: Sequence[Any], size: int = 500) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
