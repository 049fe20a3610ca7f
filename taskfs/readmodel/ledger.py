"""The ledger as the rules read it: every task's projection by id, read from the store row by
row as a rule asks (`taskfs.readmodel.view`), each row checked against the store's sealed root
before it is used, so that a writer reads the rows it needs and no others and no rule ever
rests on a row taskfs did not write (issues 31 and 36).

`Ledger` is a `Mapping[str, Summary]` over the store (archived tasks included: a dependency on
one is resolved like any other); `overlay` gives the same view with some tasks as a writer is
about to leave them (or gone), for the rules that decide on the ledger after a change. The
relations the rules look up by key (who depends on a task, which entries lie near an entry) are
read from the rows and the filed entries, checked alike.

A part of the store that does not check (`taskfs.readmodel.db.Damaged`) is handed to `recover`
when one is given: it rebuilds the store from git and hands back the rebuilt view, and the
question is asked again there, so a rule never ends in an internal error on a damaged store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from taskfs.core import globs
from taskfs.readmodel.db import ARCHIVED, FIELDS, FLAGS, ID, INTAKE, LISTED, READABLE, Damaged
from taskfs.readmodel.projection import Summary
from taskfs.readmodel.view import Row, View

# An entry's place is filed under its first two segments: a query meets only those files.
FILED_DEPTH = 2
T = TypeVar("T")


def file_of(names: Sequence[str]) -> str:
    """The file a path entry's place is filed in: its first two segments, joined by `/`
    (which no segment holds); "" for a place of none."""
    return "/".join(names[:FILED_DEPTH])


def interface_file(raw: str) -> str:
    """An interface entry is filed under its name as the globs compare it (normalised):
    interfaces are compared by name alone, so those that meet share a file."""
    try:
        return globs.INTERFACE_PREFIX + globs.parse_entry(raw).text
    except globs.EntryError:
        return raw  # an entry its envelope's problems name


def filed(raw: str) -> tuple[str, str, str]:
    """(file, entry, place) of an ownership entry as the store files it."""
    if raw.startswith(globs.INTERFACE_PREFIX):
        return interface_file(raw), raw, ""
    place = globs.placement(raw)[0]
    return file_of(place), raw, "/".join(place)


class Ledger(Mapping[str, Summary]):
    """The tasks HEAD holds, by id, each read from the store when first asked for."""

    def __init__(
        self,
        view: View,
        changes: Mapping[str, Summary | None] | None = None,
        memo: dict[str, Summary | None] | None = None,
        recover: Callable[[View], View] | None = None,
    ) -> None:
        self.view = view
        self._changes: dict[str, Summary | None] = dict(changes or {})
        self._memo: dict[str, Summary | None] = {} if memo is None else memo
        self._recover = recover

    def overlay(self, changes: Mapping[str, Summary | None]) -> Ledger:
        """This ledger with the tasks in `changes` as given (None: as if gone)."""
        return Ledger(self.view, {**self._changes, **changes}, self._memo, self._recover)

    def _checked(self, ask: Callable[[], T]) -> T:
        """`ask()`, asked again on the rebuilt store when a part it read did not check."""
        try:
            return ask()
        except Damaged:
            if self._recover is None:
                raise
            self.view = self._recover(self.view)
            self._memo.clear()
            return ask()

    def forget(self, task_ids: Iterable[str] | None) -> None:
        """Read `task_ids` (every task, when None) from the store again when next asked."""
        if task_ids is None:
            self._memo.clear()
            return
        for task_id in task_ids:
            self._memo.pop(task_id, None)

    def row(self, task_id: str) -> Row | None:
        return self._checked(lambda: self.view.row(task_id))

    def _stored(self, task_id: str) -> Summary | None:
        if task_id not in self._memo:
            row = self.row(task_id)
            self._memo[task_id] = None if row is None or not row.held else row.summary
        return self._memo[task_id]

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

    def _entries(self) -> list[tuple[Any, ...]]:
        return self._checked(lambda: list(self.view.entries()))

    def ids(self) -> list[str]:
        """Every readable task's id, in order."""
        stored = [e[ID] for e in self._entries() if e[FLAGS] & READABLE]
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
        self.many(self.ids())

    def many(self, task_ids: Iterable[str]) -> list[Summary]:
        """The tasks of `task_ids` that exist, read together."""
        ids = list(task_ids)
        wanted = [t for t in dict.fromkeys(ids) if t not in self._memo and t not in self._changes]
        if wanted:
            rows = self._checked(lambda: self.view.rows(wanted))
            for task_id in wanted:
                row = rows.get(task_id)
                self._memo[task_id] = None if row is None or not row.held else row.summary
        return [s for t in ids if (s := self.get(t)) is not None]

    # -- relations, by key --------------------------------------------------------------------

    def overlapping(self, task_id: str) -> tuple[str, ...]:
        """The tasks (any state, not archived) owning an entry that overlaps one of its own."""
        row = self.row(task_id)
        return row.overlaps if row is not None else ()

    def dependents(self, task_ids: Iterable[str]) -> set[str]:
        """The tasks that name one of `task_ids` in their `dependsOn`."""
        ids = list(task_ids)
        rows = self._checked(lambda: self.view.rows(ids))
        return {d for row in rows.values() for d in row.dependents}

    def children(self, task_ids: Iterable[str]) -> set[str]:
        """The tasks that name one of `task_ids` as their parent."""
        ids = list(task_ids)
        rows = self._checked(lambda: self.view.rows(ids))
        return {c for row in rows.values() for c in row.children}

    def following(self, task_id: str) -> list[str]:
        """The tasks whose envelopes name `task_id` as the task they were reassigned or
        retried from, in the order of their ids (`taskfs.core.lineage.Lineage` asks this
        instead of reading every task)."""
        row = self.row(task_id)
        found = list(row.followers) if row is not None else []
        if not self._changes:
            return sorted(found)
        kept = {t for t in found if t not in self._changes}
        kept.update(
            t for t, s in self._changes.items() if s is not None and s.envelope.follows == task_id
        )
        return sorted(kept)

    def discovered(self, task_id: str) -> list[str]:
        """The follow-ups found while working on `task_id` (`taskfs discover`): requests, and
        the tasks they became, in the order of their ids."""
        row = self.row(task_id)
        found = set(row.discovered) if row is not None else set()
        for other, summary in self._changes.items():
            found.discard(other)
            if summary is not None and summary.discovered_from == task_id:
                found.add(other)
        return sorted(found)

    def text(self, task_id: str) -> str | None:
        """What `ls --grep` searches of `task_id` (its objective, its request's words, its
        messages' texts, case folded), or None when it is not known."""
        summary = self.get(task_id)
        return None if summary is None else summary.text

    def all_discovered(self) -> dict[str, list[str]]:
        """Every task's follow-ups (`discovered`), by the task they were found in."""
        found: dict[str, list[str]] = {}
        for summary in self.values():
            if summary.discovered_from is not None:
                found.setdefault(summary.discovered_from, []).append(summary.id)
        return {source: sorted(ids) for source, ids in sorted(found.items())}

    def _listed(self, wanted: Callable[[tuple[Any, ...]], bool]) -> list[str]:
        return [e[ID] for e in self._entries() if e[FLAGS] & LISTED and wanted(e)]

    def in_state(self, state: str) -> list[str]:
        """The ids of the listed, unarchived tasks in `state`, in order."""
        return self._listed(lambda e: not e[FLAGS] & ARCHIVED and e[FIELDS][1] == state)

    def terminal_ids(self) -> list[str]:
        """The ids of the tasks (not requests) in a terminal state, not archived, in order."""
        from taskfs.core.lifecycle import TERMINAL

        return self._listed(
            lambda e: not e[FLAGS] & (ARCHIVED | INTAKE) and e[FIELDS][1] in TERMINAL
        )

    def intake_ids(self) -> list[str]:
        return [e[ID] for e in self._entries() if e[FLAGS] & INTAKE]

    def is_archived(self, task_id: str) -> bool:
        entry = self._checked(lambda: self.view.entry(task_id))
        return entry is not None and bool(entry[FLAGS] & ARCHIVED)

    def archived_commit(self, task_id: str) -> str | None:
        """Where an archived task's files are: the commit whose tree holds them."""
        row = self.row(task_id)
        if row is None or row.summary is None or not row.summary.archived:
            return None
        return row.commit

    def near(self, queries: Sequence[str]) -> list[tuple[str, str]]:
        """(task, entry) of every stored entry the entries `queries` can overlap: an interface
        entry of the same name as an interface query (interfaces are compared by name alone,
        and never with paths), and every path entry whose place agrees with a path query's
        (one is a prefix of the other, segment by segment: the ownership index never meets
        any other). The ownership index decides which of them overlap."""
        return self._checked(lambda: self._near(queries))

    def _near(self, queries: Sequence[str]) -> list[tuple[str, str]]:
        prefix = globs.INTERFACE_PREFIX
        files: set[str] = set()
        ranges: set[str] = set()
        wanted: list[tuple[str, ...]] = []
        everything = False
        for query in queries:
            if query.startswith(prefix):
                files.add(interface_file(query))
                continue
            place = tuple(globs.placement(query)[0])
            if not place:
                everything = True  # no literal prefix: it meets every path entry
                continue
            wanted.append(place)
            files.update(file_of(place[:i]) for i in range(len(place) + 1))
            if len(place) < FILED_DEPTH:
                ranges.add(place[0] + "/")  # and every second segment below it
        if everything:
            files.update(f for f in self.view.files() if not f.startswith(prefix))
        for start in ranges:
            files.update(self.view.files(start))
        out: dict[tuple[str, str], None] = {}
        agrees = _Agreement(wanted)
        for _file, task, raw, place_text in self.view.filed(files):
            if raw.startswith(prefix) or everything or agrees(place_text):
                out[(task, raw)] = None
        return list(out)


class _Agreement:
    """Whether a stored entry's place agrees with one of the places `wanted`: one is a prefix
    of the other, segment by segment. Asked by set lookups along the place, so that the
    places of a whole batch (a thousand) cost no more per entry than one."""

    def __init__(self, wanted: list[tuple[str, ...]]) -> None:
        self._wanted = set(wanted)
        self._above = {p[:i] for p in wanted for i in range(len(p) + 1)}  # a prefix of one

    def __call__(self, place_text: str) -> bool:
        place = tuple(place_text.split("/")) if place_text else ()
        if place in self._above:  # the entry's place is a prefix of a wanted one
            return True
        return any(place[:i] in self._wanted for i in range(len(place) + 1))
