"""The store's content as the rules and the listings read it, every part checked against the
sealed root before it is used (`View`), and a change to it (`Batch`), kept in memory until it
is saved in one transaction (issue 36).

A `View` reads the manifest chunk by chunk and the rows one by one, as they are asked for, and
checks each against the digest the part above it names; anything that does not check raises
`taskfs.readmodel.db.Damaged`, and the caller rebuilds. A `Batch` answers as the store will
once it is saved, so that a command can answer from it even when it cannot be saved (another
process holds the store, a read-only `.git`): the store is then caught up by the next command
that can.

A row (`Row`) is everything the store keeps of one task id: its projection (`Summary`), the
key of the git objects it was read from, where an archived task's files are, and its relations
the other way round (which tasks depend on it, were delegated or follow from it, and which own
what it owns), kept in its own row so that a rule asking them reads one row it can check. An id
some task names that has no folder (a dependency not submitted yet) has a row too, holding only
its relations.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from taskfs.core.shapes import ROW_FIELDS
from taskfs.readmodel import db, projection, seal
from taskfs.readmodel.db import (
    ARCHIVED,
    DIGEST,
    FLAGS,
    HELD,
    ID,
    INTAKE,
    LISTED,
    OFFERED,
    READABLE,
    Damaged,
)
from taskfs.readmodel.projection import Summary


class Row(NamedTuple):
    """What the store keeps of one task id (see the module docstring)."""

    summary: Summary | None  # None: its files cannot be read, or it has no folder
    key: bytes | None = None  # the git objects its projection was read from (None: unknown)
    commit: str | None = None  # an archived task: the commit whose tree holds its files
    held: bool = True  # a folder HEAD holds, or an archived task (False: only named)
    dependents: tuple[str, ...] = ()  # the tasks naming it in their dependsOn
    children: tuple[str, ...] = ()  # the tasks naming it as their parent
    followers: tuple[str, ...] = ()  # the tasks reassigned or retried from it
    discovered: tuple[str, ...] = ()  # the follow-ups found while working on it (`discover`)
    overlaps: tuple[str, ...] = ()  # the tasks (any state, not archived) owning what it owns

    def encode(self) -> bytes:
        summary = None
        if self.summary is not None:
            summary = projection.encode(self.summary._replace(overlaps=()))
        return marshal.dumps((summary, *self[1:]))

    @classmethod
    def decode(cls, data: bytes) -> Row:
        fields = marshal.loads(data)
        if type(fields) is not tuple or len(fields) != len(cls._fields):
            raise ValueError("not a row")
        summary = None if fields[0] is None else projection.decode(fields[0])
        key, commit, held, *relations = fields[1:]
        if not all(type(r) is tuple for r in relations) or type(held) is not bool:
            raise ValueError("not a row")
        if summary is not None and relations[-1]:
            summary = summary._replace(overlaps=relations[-1])
        return cls(summary, key, commit, held, *relations)

    @property
    def empty(self) -> bool:
        """Only named, and by no one any more: the row can go."""
        return not self.held and not (
            self.dependents or self.children or self.followers or self.discovered
        )


def entry_of(task_id: str, row: Row, data: bytes, ready: int) -> db.Entry:
    """A row's entry in the manifest; `ready`: how `ready` offers it (`OFFERED`'s flags, 0 when
    it does not)."""
    summary = row.summary
    listed = summary is not None and summary.listed and row.held
    flags = (HELD if row.held and not (summary and summary.archived) else 0) | (ready & OFFERED)
    if summary is not None:
        flags |= READABLE
    fields = shown = None
    if listed and summary is not None:
        import json

        values = summary.row()
        fields = tuple(values.get(name) for name in ROW_FIELDS)
        shown = json.dumps(values, ensure_ascii=False)
        flags |= LISTED | (ARCHIVED if summary.archived else 0) | (INTAKE if summary.intake else 0)
    rank = summary.rank if listed and summary is not None else None
    return (task_id, seal.digest(data), flags, fields, shown, row.key, rank)


class View:
    """The store as its sealed root names it, read as asked (see the module docstring)."""

    def __init__(self, conn: Any, state: db.State, *, stored: bool = True) -> None:
        self.conn = conn
        self.state = state
        self.stored = stored  # False: an empty store, no root yet
        self.saved = True  # False: a change this command keeps in memory alone
        self.manifest = db.Chunks(conn, "chunks", state.chunks)
        self.buckets = db.Chunks(conn, "buckets", state.buckets)
        self._rows: dict[str, Row | None] = {}

    @property
    def head(self) -> str | None:
        return self.state.head

    @property
    def runners(self) -> bool:
        """Whether the commit the rows were read from holds runner keys (`State.runners`)."""
        return self.state.runners

    # -- the manifest ---------------------------------------------------------------------------

    def entry(self, task_id: str) -> db.Entry | None:
        entry = self.manifest.get(task_id)
        if entry is not None and len(entry) != db.ENTRY_WIDTH:
            raise Damaged(f"the manifest's entry of {task_id!r} is no entry")
        return entry

    def entries(self) -> Iterator[db.Entry]:
        """Every entry, in the order of the ids."""
        for entry in self.manifest.items():
            if len(entry) != db.ENTRY_WIDTH:
                raise Damaged(f"the manifest's entry of {entry[0]!r} is no entry")
            yield entry

    # -- rows ------------------------------------------------------------------------------------

    def row(self, task_id: str) -> Row | None:
        if task_id not in self._rows:
            self.rows([task_id])
        return self._rows.get(task_id)

    def rows(self, task_ids: Iterable[str]) -> dict[str, Row]:
        """The rows of those of `task_ids` the store has, each checked against its entry."""
        wanted = [t for t in dict.fromkeys(task_ids) if t not in self._rows]
        if wanted:
            entries = {t: e for t in wanted if (e := View.entry(self, t)) is not None}
            stored = db.read_rows(self.conn, sorted(entries))
            for task_id in wanted:
                entry = entries.get(task_id)
                data = stored.get(task_id)
                if entry is None:
                    if data is not None:
                        raise Damaged(f"a row no entry names: {task_id!r}")
                    self._rows[task_id] = None
                    continue
                if data is None or seal.digest(data) != entry[DIGEST]:
                    raise Damaged(f"the row of {task_id!r} is not the one the manifest names")
                try:
                    self._rows[task_id] = Row.decode(data)
                except Exception:
                    raise Damaged(f"the row of {task_id!r} does not decode") from None
        return {t: r for t in task_ids if (r := self._rows.get(t)) is not None}

    def ready(self, task_id: str) -> int:
        """How `ready` offers the task (`OFFERED`'s flags; 0: it does not)."""
        entry = View.entry(self, task_id)  # as stored
        return 0 if entry is None else int(entry[FLAGS]) & OFFERED

    # -- ownership entries -----------------------------------------------------------------------

    def files(self, below: str | None = None) -> list[str]:
        """The files ownership entries are filed in (those starting with `below`)."""
        if below is None:
            return [item[0] for item in self.buckets.items()]
        return [
            item[0] for item in self.buckets.between(below, below[:-1] + chr(ord(below[-1]) + 1))
        ]

    def filed(self, files: Iterable[str]) -> list[tuple[str, str, str, str]]:
        """(file, task, entry, place) of every entry filed in `files`, checked."""
        return db.read_entries(self.conn, self.buckets, files)


class Batch(View):
    """A change to a `View`: rows put or taken away, readiness asked again, entries filed, a
    new HEAD; read as the store will be once it is saved (`save`)."""

    def __init__(self, base: View) -> None:
        super().__init__(base.conn, base.state, stored=base.stored)
        self.base = base
        self.manifest = base.manifest
        self.buckets = base.buckets
        self._rows = dict(base._rows)
        self._put: dict[str, Row | None] = {}
        self._ready: dict[str, int] = {}
        self._filed: dict[str, list[tuple[str, str, str]] | None] = {}
        self._by_file: dict[str, dict[str, list[tuple[str, str]]]] = {}  # file -> task -> ...
        self.new_state = base.state
        self.saved = False

    @property
    def runners(self) -> bool:
        return self.new_state.runners

    # reading through the change
    def entry(self, task_id: str) -> db.Entry | None:
        if task_id in self._put or task_id in self._ready:
            row = self.row(task_id)
            if row is None:
                return None
            return entry_of(task_id, row, b"", self.ready(task_id))
        return super().entry(task_id)

    def row(self, task_id: str) -> Row | None:
        if task_id in self._put:
            return self._put[task_id]
        return super().row(task_id)

    def rows(self, task_ids: Iterable[str]) -> dict[str, Row]:
        ids = list(task_ids)
        found = super().rows([t for t in ids if t not in self._put])
        for task_id in ids:
            if task_id in self._put:
                row = self._put[task_id]
                if row is None:
                    found.pop(task_id, None)
                else:
                    found[task_id] = row
        return {t: found[t] for t in ids if t in found}

    def ready(self, task_id: str) -> int:
        if task_id in self._ready:
            return self._ready[task_id]
        if task_id in self._put and self._put[task_id] is None:
            return 0
        return View.ready(self, task_id)

    def entries(self) -> Iterator[db.Entry]:
        changed = set(self._put) | set(self._ready)
        mine = {t: e for t in changed if (e := self.entry(t)) is not None}
        merged = {e[ID]: e for e in super().entries() if e[ID] not in changed}
        merged.update(mine)
        for task_id in sorted(merged):
            yield merged[task_id]

    def files(self, below: str | None = None) -> list[str]:
        found = set(super().files(below))
        found.update(
            f for f, by in self._by_file.items() if by and (below is None or f.startswith(below))
        )
        return sorted(found)

    def filed(self, files: Iterable[str]) -> list[tuple[str, str, str, str]]:
        wanted = set(files)
        stored = [r for r in super().filed(wanted) if r[1] not in self._filed]
        for file in wanted:
            for task, entries in self._by_file.get(file, {}).items():
                stored += [(file, task, raw, place) for raw, place in entries]
        return sorted(stored)

    # changing
    def put(self, task_id: str, row: Row | None) -> None:
        self._put[task_id] = row
        self._rows[task_id] = row

    def set_ready(self, task_id: str, ready: int) -> None:
        if self.ready(task_id) != ready:
            self._ready[task_id] = ready

    def file(self, task_id: str, filed: Sequence[tuple[str, str, str]] | None) -> None:
        """The ownership entries of `task_id` are `filed` ((file, entry, place); None: none)."""
        for file, _raw, _place in self._filed.get(task_id) or ():
            self._by_file.get(file, {}).pop(task_id, None)
        self._filed[task_id] = list(filed) if filed else None
        for file, raw, place in filed or ():
            self._by_file.setdefault(file, {}).setdefault(task_id, []).append((raw, place))

    @property
    def changed(self) -> bool:
        return bool(self._put or self._ready or self._filed) or self.new_state is not self.state

    def save(self) -> db.State:
        """Store the change in one transaction; the new root. sqlite3.Error when the store
        cannot be written (busy, read-only, or changed since the change was made on it)."""
        rows: dict[str, bytes | None] = {}
        changed: dict[str, db.Entry | None] = {}
        for task_id in sorted(set(self._put) | set(self._ready)):
            row = self.row(task_id)
            if row is None or row.empty:
                rows[task_id] = None
                changed[task_id] = None
                continue
            if task_id not in self._put and (old := self.base.entry(task_id)) is not None:
                entry = entry_of(task_id, row, b"", self.ready(task_id))
                changed[task_id] = (task_id, old[DIGEST], *entry[2:])
                continue
            data = row.encode()
            rows[task_id] = data
            changed[task_id] = entry_of(task_id, row, data, self.ready(task_id))
        expect = self.state if self.base.stored else None
        return db.write(self.conn, self.new_state, changed, rows, self._filed, expect)
