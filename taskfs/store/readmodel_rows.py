"""Writing rows of the read model's store (`taskfs.readmodel.db`), with everything derived from
them: each task's row in `ls`, the relations the rules look up by key (`deps`, `children`,
`entries`), the overlaps between tasks' entries, and whether `ready` offers a task. Only the
rows that changed are written, and only the tasks whose readiness they can change are asked
again (`affected`); a rebuild writes every row (`rebuild`). Runs inside the caller's
transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, Mapping, Sequence

from taskfs.core import globs
from taskfs.core.readiness import claimable
from taskfs.errors import TaskfsError
from taskfs.readmodel import db
from taskfs.readmodel.projection import Summary
from taskfs.store.ledger_view import Ledger, file_of, interface_file

# A task's new row: its projection (None: its files cannot be read) and the digest of the
# bytes it was read from (None: not known; a writer about to append reads the task again).
Row = tuple["Summary | None", "bytes | None"]


def replace(conn: sqlite3.Connection, changed: Mapping[str, Row | None]) -> None:
    """Store the rows of `changed` (None: the task is gone) and keep everything derived from
    them right: their relations and overlaps, and whether `ready` offers each task whose
    readiness they can change."""
    if not changed:
        return
    ledger = Ledger(conn)
    ids = list(changed)
    before = {s.id: s for s in ledger.many(ids)}
    touched = _overlapping(conn, ids)
    edges = {t for t in ids if _edges(before.get(t)) != _edges(_summary(changed[t]))}
    _delete(conn, ids)
    gone = [t for t, row in changed.items() if row is None]
    for chunk in _chunks(gone):
        conn.execute(f"DELETE FROM texts WHERE task IN ({','.join('?' * len(chunk))})", chunk)
    for task_id, row in changed.items():
        if row is not None:
            _insert(conn, task_id, *row)
    live = [t for t in ids if (s := _summary(changed[t])) is not None and not s.archived]
    _store_overlaps(conn, live, everything=False)
    touched |= _overlapping(conn, ids)
    affected = set(ids) | touched | waiting_on(conn, ids) | _upstream(conn, edges)
    _settle_ready(conn, affected)


def rebuild(conn: sqlite3.Connection, rows: Mapping[str, Row]) -> None:
    """Every row anew (the store emptied first)."""
    for table in (
        "rows",
        "listing",
        "deps",
        "children",
        "follows",
        "discovered",
        "entries",
        "overlaps",
        "labels",
        "texts",
    ):
        conn.execute(f"DELETE FROM {table}")
    for task_id, (summary, digest) in sorted(rows.items()):
        _insert(conn, task_id, summary, digest)
    live = [t for t, (s, _d) in rows.items() if s is not None and not s.archived]
    _store_overlaps(conn, live, everything=True)
    _settle_ready(conn, None)


def _summary(row: Row | None) -> Summary | None:
    return None if row is None else row[0]


def _edges(summary: Summary | None) -> object:
    """What orders a task with others: its dependencies, its parent, and the task it follows
    (`taskfs.core.lineage`: what depends on that one is ordered after it too)."""
    if summary is None:
        return None
    env = summary.envelope
    return (env.depends_on, env.parent, env.follows, env.sender, env.command)


def _delete(conn: sqlite3.Connection, ids: list[str]) -> None:
    for chunk in _chunks(ids):
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM rows WHERE id IN ({marks})", chunk)
        conn.execute(f"DELETE FROM listing WHERE id IN ({marks})", chunk)
        conn.execute(f"DELETE FROM deps WHERE task IN ({marks})", chunk)
        conn.execute(f"DELETE FROM children WHERE task IN ({marks})", chunk)
        conn.execute(f"DELETE FROM follows WHERE task IN ({marks})", chunk)
        conn.execute(f"DELETE FROM discovered WHERE task IN ({marks})", chunk)
        conn.execute(f"DELETE FROM labels WHERE task IN ({marks})", chunk)
        conn.execute(f"DELETE FROM entries WHERE task IN ({marks})", chunk)
        conn.execute(f"DELETE FROM overlaps WHERE a IN ({marks})", chunk)
        conn.execute(f"DELETE FROM overlaps WHERE b IN ({marks})", chunk)


def _insert(
    conn: sqlite3.Connection, task_id: str, summary: Summary | None, digest: bytes | None
) -> None:
    archived = int(summary is not None and summary.archived)
    conn.execute(
        "INSERT INTO rows VALUES (?, ?, ?, ?)",
        (task_id, archived, db.dump_summary(summary), digest),
    )
    if summary is None:
        return
    env = summary.envelope
    if summary.listed:
        conn.execute(
            "INSERT INTO listing VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)",
            (
                archived,
                task_id,
                summary.state,
                env.recipient,
                env.context_id,
                int(summary.intake),
                db.shown_row(summary),
                summary.rank,
            ),
        )
    conn.executemany(
        "INSERT OR IGNORE INTO deps VALUES (?, ?)", [(dep, task_id) for dep in env.depends_on]
    )
    if env.parent is not None:
        conn.execute("INSERT OR IGNORE INTO children VALUES (?, ?)", (env.parent, task_id))
    if env.follows is not None:
        conn.execute("INSERT OR IGNORE INTO follows VALUES (?, ?)", (env.follows, task_id))
    conn.executemany(
        "INSERT OR IGNORE INTO labels VALUES (?, ?)", [(label, task_id) for label in env.labels]
    )
    if summary.text is not None:
        conn.execute("INSERT OR REPLACE INTO texts VALUES (?, ?)", (task_id, summary.text))
    if summary.discovered_from is not None:
        conn.execute(
            "INSERT OR IGNORE INTO discovered VALUES (?, ?)", (summary.discovered_from, task_id)
        )
    if archived:
        return  # an archived task is terminal: it is never a rival, and owns nothing
    conn.executemany(
        "INSERT OR IGNORE INTO entries VALUES (?, ?, ?, ?)",
        [_filed(raw, task_id) for raw in env.files_and_interfaces],
    )


def _filed(raw: str, task_id: str) -> tuple[str, str, str, str]:
    """The row of `entries` of an ownership entry: where it is filed (`ledger_view.near`),
    the entry, its task, its place."""
    if raw.startswith(globs.INTERFACE_PREFIX):
        return interface_file(raw), raw, task_id, ""
    place = globs.placement(raw)[0]
    return file_of(place), raw, task_id, "/".join(place)


def _store_overlaps(conn: sqlite3.Connection, ids: list[str], *, everything: bool) -> None:
    """Find and store the overlaps of the tasks `ids` (their entries already stored) with
    every task's, in both directions. Overlap is decided on the entries alone, whatever the
    tasks' states."""
    if not ids:
        return
    # A rebuild indexes every entry once; a change, however large (`new` of a thousand
    # envelopes), asks the store for the entries near its own.
    many = everything
    entries, index = _entries_of(conn, set(ids), index_all=many)
    ledger = Ledger(conn)
    pairs: set[tuple[str, str]] = set()
    for task_id in ids:
        own = entries.get(task_id, [])
        near = index
        if not many and own:
            near = globs.OwnershipIndex()
            for other, raw in ledger.near(own):
                near.add(other, raw)
        for other in _meeting(near, own) - {task_id}:
            pairs.update(((task_id, other), (other, task_id)))
    conn.executemany("INSERT OR IGNORE INTO overlaps VALUES (?, ?)", sorted(pairs))


def _entries_of(
    conn: sqlite3.Connection, wanted: set[str], *, index_all: bool
) -> tuple[dict[str, list[str]], globs.OwnershipIndex[str]]:
    """The stored entries of the tasks `wanted`, and (`index_all`) every stored entry indexed."""
    entries: dict[str, list[str]] = {}
    index: globs.OwnershipIndex[str] = globs.OwnershipIndex()
    if index_all:
        for task, raw in conn.execute("SELECT task, raw FROM entries ORDER BY task, raw"):
            if task in wanted:
                entries.setdefault(task, []).append(raw)
            index.add(task, raw)
        return entries, index
    for chunk in _chunks(sorted(wanted)):
        marks = ",".join("?" * len(chunk))
        query = f"SELECT task, raw FROM entries WHERE task IN ({marks}) ORDER BY task, raw"
        for task, raw in conn.execute(query, chunk):
            entries.setdefault(task, []).append(raw)
    return entries, index


def _meeting(index: globs.OwnershipIndex[str], entries: list[str]) -> set[str]:
    """The tasks of `index` owning an entry that overlaps one of `entries`."""
    found: set[str] = set()
    for raw in entries:
        try:
            found.update(
                other for other, _entry, _witness in index.conflicts(globs.parse_entry(raw))
            )
        except (globs.EntryError, TaskfsError):
            continue  # an entry the envelope's own problems name
    return found


def _overlapping(conn: sqlite3.Connection, ids: Iterable[str]) -> set[str]:
    found: set[str] = set()
    for chunk in _chunks(list(ids)):
        marks = ",".join("?" * len(chunk))
        found.update(db.ids(conn, f"SELECT b FROM overlaps WHERE a IN ({marks})", chunk))
    return found


def waiting_on(conn: sqlite3.Connection, ids: Collection[str]) -> set[str]:
    """The tasks whose dependencies a change of `ids` can settle: those that depend on one of
    them, or on a task one of them follows, down the line (`taskfs.core.lineage`: a task
    depending on A is satisfied by A's completed successor)."""
    line = set(ids) | _reached(conn, ids, ("SELECT before FROM follows WHERE task IN ({})",))
    return Ledger(conn).dependents(line)


def affected_by(conn: sqlite3.Connection, ids: Collection[str]) -> set[str]:
    """The tasks whose readiness the absence of `ids` can change, besides their dependents:
    their rivals, and whatever their edges ordered."""
    return _overlapping(conn, ids) | _upstream(conn, ids)


def _upstream(conn: sqlite3.Connection, ids: Collection[str]) -> set[str]:
    """When the edges of `ids` changed (a task came, went, or was replaced), the tasks whose
    order with a rival can change: those that reach one of `ids` through `dependsOn`,
    `parent` or lineage links (a task leads to its successors), and their rivals."""
    found = _reached(
        conn,
        ids,
        (
            "SELECT task FROM deps WHERE dep IN ({})",
            "SELECT task FROM children WHERE parent IN ({})",
            "SELECT before FROM follows WHERE task IN ({})",
        ),
    )
    return found | _overlapping(conn, found)


def _reached(conn: sqlite3.Connection, ids: Collection[str], steps: Sequence[str]) -> set[str]:
    """Every task one or more `steps` lead to from `ids` (each a query of one column whose
    `{}` takes the ids asked about), asked until a step finds nothing new."""
    found: set[str] = set()
    frontier = set(ids)
    while frontier:
        step: set[str] = set()
        for chunk in _chunks(sorted(frontier)):
            marks = ",".join("?" * len(chunk))
            for query in steps:
                step.update(db.ids(conn, query.format(marks), chunk))
        frontier = step - found
        found |= step
    return found


def _settle_ready(conn: sqlite3.Connection, affected: Collection[str] | None) -> None:
    """Ask again whether `ready` offers each task of `affected` (every task when None): the
    claim's own rules (`taskfs.core.readiness.claimable`), on the stored rows."""
    ledger = Ledger(conn)
    if affected is None:
        ledger.load_all()
        asked = ledger.values()
        conn.execute("UPDATE listing SET ready = 0")
    else:
        asked = ledger.many(sorted(affected))
        for chunk in _chunks(sorted(affected)):
            marks = ",".join("?" * len(chunk))
            conn.execute(f"UPDATE listing SET ready = 0 WHERE id IN ({marks})", chunk)
    ready = [task.id for task in claimable(ledger, among=asked) if task.listed]
    for chunk in _chunks(ready):
        marks = ",".join("?" * len(chunk))
        conn.execute(f"UPDATE listing SET ready = 1 WHERE archived = 0 AND id IN ({marks})", chunk)


def _chunks(items: list[str], size: int = 500) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
