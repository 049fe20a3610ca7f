"""Building the store anew from every task, in memory that does not grow with the ledger
(issue 36: the first `ls` of 50,000 tasks without a store stays under 64 MiB).

The rows arrive one by one (`taskfs.store.index` reads them: the full reader, git) and go to
the store as they come; what is kept in memory meanwhile is small per task: its edges (which
tasks it depends on, was delegated from, follows), to turn them round, and the ids of the tasks
`ready` may offer. The overlaps between tasks' entries are then found file by file of the
entries the store filed (an entry only ever meets the entries filed under its own two leading
segments, one of them or none: `taskfs.readmodel.ledger.near`), readiness is asked of the
candidates a few hundred at a time, and the rows are written again with their relations while
the manifest is cut into chunks, one chunk in memory at a time. All in one transaction: a
rebuild killed midway leaves the empty store it started from (no root: rebuilt again).
"""

from __future__ import annotations

import gc
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping

from taskfs.core import globs
from taskfs.core.readiness import claimable
from taskfs.readmodel import db
from taskfs.readmodel.ledger import filed
from taskfs.readmodel.projection import Summary
from taskfs.readmodel.view import Row, entry_of

STEP = 500  # rows written, or candidates asked, at a time
FORGET = 1000  # rows read, or files compared, between two clearings of the memos


def rebuild(
    conn: sqlite3.Connection,
    state: db.State,
    rows: Iterable[tuple[str, Row]],
    settled: Callable[[db.State], db.State] = lambda state: state,
) -> db.State:
    """Fill the empty store at `conn` with `rows` (in any order, each without relations: they
    are found here) and root it at `state` as `settled` leaves it once every row is read;
    the new root."""
    conn.execute("PRAGMA cache_size = -1024")  # a mebibyte of pages: it spills, not grows
    with db.transaction(conn):
        edges, candidates = _first_pass(conn, rows)
        state = settled(state)
        relations = _turned(edges)
        del edges
        overlaps = _overlaps(conn)
        ready = _ready(conn, candidates, relations["followers"], overlaps)
        return _last_pass(conn, state, relations, overlaps, ready)


Edges = tuple[tuple[str, ...], str | None, str | None, str | None]


def _first_pass(
    conn: sqlite3.Connection, rows: Iterable[tuple[str, Row]]
) -> tuple[dict[str, Edges], list[str]]:
    """Write every row as it comes (its relations still unknown) and file its entries; the
    edges of each task (what it depends on, was delegated from, follows, was found while
    working on), and the tasks `ready` may offer (submitted, readable, taken in)."""
    edges: dict[str, Edges] = {}
    candidates: list[str] = []
    pending: list[tuple[str, bytes]] = []
    for count, (task_id, row) in enumerate(rows, 1):
        pending.append((task_id, row.encode()))
        summary = row.summary
        if summary is not None:
            env = summary.envelope
            found = summary.discovered_from
            if env.depends_on or env.parent is not None or env.follows is not None or found:
                edges[task_id] = (env.depends_on, env.parent, env.follows, found)
            if not summary.archived and row.held:
                db.file_entries(conn, task_id, [filed(raw) for raw in env.files_and_interfaces])
            if summary.state == "submitted" and summary.length and not summary.problems:
                candidates.append(task_id)
        if len(pending) >= STEP:
            db.put_rows(conn, pending)
            pending.clear()
        if count % FORGET == 0:
            _forget()
    db.put_rows(conn, pending)
    return edges, candidates


def _forget() -> None:
    """Let go of what reading and comparing so far left behind: the memos of the entries met,
    and the cycles of the full reader's models (the fast path runs without the collector)."""
    globs.forget()
    gc.collect()


def _turned(edges: Mapping[str, Edges]) -> dict[str, dict[str, list[str]]]:
    """Each task's edges the other way round: who depends on it, was delegated from it,
    follows it, was found while working on it."""
    out: dict[str, dict[str, list[str]]] = {
        "dependents": {}, "children": {}, "followers": {}, "discovered": {}
    }  # fmt: skip
    for task_id, (depends_on, parent, follows, source) in sorted(edges.items()):
        for dep in dict.fromkeys(depends_on):
            out["dependents"].setdefault(dep, []).append(task_id)
        if parent is not None:
            out["children"].setdefault(parent, []).append(task_id)
        if follows is not None:
            out["followers"].setdefault(follows, []).append(task_id)
        if source is not None:
            out["discovered"].setdefault(source, []).append(task_id)
    return out


def _overlaps(conn: sqlite3.Connection) -> dict[str, set[str]]:
    """The tasks whose entries overlap, both ways, found in one pass over the filed entries,
    file by file: the entries of a file of two segments meet those of its own file, of its
    first segment's file and of the file of no segment (an entry with no literal prefix); an
    interface meets the interfaces filed under its name. Only one file's entries, and those
    of the short files, are indexed at a time."""
    pairs: dict[str, set[str]] = {}
    short = db.filed_short(conn)
    for count, (file, own) in enumerate(db.filed_by_file(conn), 1):
        if count % FORGET == 0:
            _forget()
        index: globs.OwnershipIndex[str] = globs.OwnershipIndex()
        above = [] if _interface(file) else ["", file.split("/", 1)[0]] if "/" in file else [""]
        met = [*own, *(e for f in above if f != file for e in short.get(f, ()))]
        for task, raw in met:
            index.add(task, raw)
        _meet(index, own, pairs)
    return pairs


def _interface(file: str) -> bool:
    return file.startswith(globs.INTERFACE_PREFIX)


def _meet(
    index: globs.OwnershipIndex[str], own: list[tuple[str, str]], pairs: dict[str, set[str]]
) -> None:
    for task, raw in own:
        try:
            met = {other for other, _e, _w in index.conflicts(globs.parse_entry(raw))}
        except (globs.EntryError, Exception):  # an entry the envelope's own problems name
            continue
        for other in met - {task}:
            pairs.setdefault(task, set()).add(other)
            pairs.setdefault(other, set()).add(task)


class _Stored(Mapping[str, Summary]):
    """The rows written so far, as the readiness rules read them: each decoded when asked,
    with its overlaps and followers from what this rebuild found."""

    def __init__(
        self, conn: sqlite3.Connection, followers: Mapping[str, list[str]],
        overlaps: Mapping[str, set[str]],
    ) -> None:  # fmt: skip
        self.conn = conn
        self._followers = followers
        self._overlaps = overlaps
        self._memo: dict[str, Summary | None] = {}

    def __getitem__(self, task_id: str) -> Summary:
        if task_id not in self._memo:
            data = db.read_rows(self.conn, [task_id]).get(task_id)
            row = Row.decode(data) if data is not None else None
            summary = row.summary if row is not None and row.held else None
            if summary is not None and task_id in self._overlaps:
                summary = summary._replace(overlaps=tuple(sorted(self._overlaps[task_id])))
            self._memo[task_id] = summary
        found = self._memo[task_id]
        if found is None:
            raise KeyError(task_id)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._memo)

    def __len__(self) -> int:
        return len(self._memo)

    def following(self, task_id: str) -> list[str]:
        return list(self._followers.get(task_id, ()))


def _ready(
    conn: sqlite3.Connection,
    candidates: list[str],
    followers: Mapping[str, list[str]],
    overlaps: Mapping[str, set[str]],
) -> dict[str, int]:
    """The candidates a claim would succeed on now, and how `ready` offers each
    (`taskfs.readmodel.rows.offer`): the claim's own rules (`taskfs.core.readiness.claimable`),
    asked a few hundred at a time."""
    from taskfs.readmodel.rows import offer

    ready: dict[str, int] = {}
    for start in range(0, len(candidates), STEP):
        tasks = _Stored(conn, followers, overlaps)
        asked = [tasks[t] for t in candidates[start : start + STEP]]
        ready.update((t.id, offer(t, tasks)) for t in claimable(tasks, among=asked) if t.listed)
    return ready


def _last_pass(
    conn: sqlite3.Connection,
    state: db.State,
    relations: Mapping[str, Mapping[str, list[str]]],
    overlaps: Mapping[str, set[str]],
    ready: Mapping[str, int],
) -> db.State:
    """Write every row again with its relations (and a row for each id only named), and the
    manifest and the entries' digests in chunks, one chunk in memory at a time; the root."""
    named = set().union(*(r.keys() for r in relations.values()))
    chunks: list[tuple[str, bytes]] = []
    entries: list[db.Entry] = []
    for task_id, data in _merged(db.iter_rows(conn), sorted(named)):
        row = Row.decode(data) if data is not None else Row(None, held=False)
        row = row._replace(
            dependents=tuple(relations["dependents"].get(task_id, ())),
            children=tuple(relations["children"].get(task_id, ())),
            followers=tuple(relations["followers"].get(task_id, ())),
            discovered=tuple(relations["discovered"].get(task_id, ())),
            overlaps=tuple(sorted(overlaps.get(task_id, ()))),
        )
        if row.empty:
            continue
        encoded = row.encode()
        db.put_rows(conn, [(task_id, encoded)])
        entries.append(entry_of(task_id, row, encoded, ready.get(task_id, 0)))
        if len(entries) >= db.CHUNK:
            chunks.append(db.put_chunk(conn, "chunks", entries))
            entries = []
    if entries:
        chunks.append(db.put_chunk(conn, "chunks", entries))
    buckets = db.put_buckets(conn)
    state = state.replace(chunks=tuple(chunks), buckets=buckets)
    root = db.sealed_state(state)
    if root is None:
        raise sqlite3.OperationalError("no key to seal the store with")
    db.put_root(conn, root)
    return state


def _merged(
    stored: Iterator[tuple[str, bytes]], named: list[str]
) -> Iterator[tuple[str, bytes | None]]:
    """The stored rows, and each id only named (no row: None), in the order of the ids."""
    pending = iter(named)
    name = next(pending, None)
    for task_id, data in stored:
        while name is not None and name < task_id:
            yield name, None
            name = next(pending, None)
        if name == task_id:
            name = next(pending, None)
        yield task_id, data
    while name is not None:
        yield name, None
        name = next(pending, None)
