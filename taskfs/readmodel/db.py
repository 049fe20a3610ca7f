"""The read model's one store: a SQLite database per checkout, in its git dir
(`<git dir>/taskfs/cache/readmodel-vN.sqlite`), never committed, never shared between
worktrees, deletable at any time (issue 31).

It holds the ledger as HEAD holds it: one row per task folder HEAD has (`rows`: its projection,
`taskfs.readmodel.projection.Summary`, and a digest of the bytes it was read from), each task's
row in `ls` (`listing`, with whether `ready` offers it), the relations the rules look up by
key (`deps`, `children`, `follows`: the task each was reassigned or retried from, `entries`:
ownership entries filed by the first two segments of their place, `overlaps`), and in `meta`
the commit the rows are HEAD's view of. A row depends on committed files only, so the store
is fresh exactly when HEAD is that commit; a commit that moved HEAD names the task folders it
changed (`git diff`), and only those are read again
(`taskfs.store.index`, the writing side). Writers update the rows they change in their commit
step, in one transaction with the new HEAD.

This module is the store's one description (its schema) and its reading side: `answer` prints
`ls --json` and `ready --json` from it without loading anything but this package. A store that
is not what this version wrote, or that SQLite finds damaged, is thrown away and rebuilt, never
trusted.
"""

from __future__ import annotations

import marshal
import os
import sqlite3
import time

from taskfs import __version__
from taskfs.core import shapes
from taskfs.core.layout import checkout
from taskfs.readmodel.stamps import (
    CONFIG,
    cache_dir,
    file_digest,
    file_key,
    head_commit,
    newest,
    racy_margin,
    task_ids,
)

TYPE_CHECKING = False  # `typing` costs the hot path 3 ms to import; type checkers know this
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from taskfs.readmodel.projection import Summary
    from taskfs.readmodel.stamps import FileKey

    # Whether the store was brought up to HEAD (checkout, git dir): asked of the store when
    # HEAD moved since the rows were settled.
    CatchUp = Callable[[str, str], bool]

# 4: priority and labels, and each task's place in `ready` (issue 38); 3: the lineage
# (`follows`, issue 29); 2: when the last transition was made
FORMAT = 4
NAME = f"readmodel-v{FORMAT}.sqlite"

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID;
CREATE TABLE rows (
    id TEXT PRIMARY KEY,
    archived INTEGER NOT NULL,
    summary BLOB,
    digest BLOB
) WITHOUT ROWID;
CREATE TABLE listing (
    archived INTEGER NOT NULL,
    id TEXT NOT NULL,
    state TEXT NOT NULL,
    recipient TEXT,
    context TEXT NOT NULL,
    intake INTEGER NOT NULL,
    ready INTEGER NOT NULL,
    shown TEXT NOT NULL,
    rank TEXT NOT NULL,
    PRIMARY KEY (archived, id)
) WITHOUT ROWID;
CREATE INDEX listing_ready ON listing (rank) WHERE ready = 1;
CREATE INDEX listing_state ON listing (state, archived);
CREATE TABLE deps (dep TEXT NOT NULL, task TEXT NOT NULL, PRIMARY KEY (dep, task)) WITHOUT ROWID;
CREATE INDEX deps_task ON deps (task);
CREATE TABLE children (
    parent TEXT NOT NULL, task TEXT NOT NULL, PRIMARY KEY (parent, task)
) WITHOUT ROWID;
CREATE INDEX children_task ON children (task);
CREATE TABLE follows (
    before TEXT NOT NULL, task TEXT NOT NULL, PRIMARY KEY (before, task)
) WITHOUT ROWID;
CREATE INDEX follows_task ON follows (task);
CREATE TABLE discovered (
    source TEXT NOT NULL, task TEXT NOT NULL, PRIMARY KEY (source, task)
) WITHOUT ROWID;
CREATE INDEX discovered_task ON discovered (task);
CREATE TABLE entries (
    file TEXT NOT NULL,
    raw TEXT NOT NULL,
    task TEXT NOT NULL,
    place TEXT NOT NULL,
    PRIMARY KEY (file, raw, task)
) WITHOUT ROWID;
CREATE INDEX entries_task ON entries (task);
CREATE TABLE overlaps (a TEXT NOT NULL, b TEXT NOT NULL, PRIMARY KEY (a, b)) WITHOUT ROWID;
CREATE TABLE labels (label TEXT NOT NULL, task TEXT NOT NULL, PRIMARY KEY (label, task))
    WITHOUT ROWID;
CREATE INDEX labels_task ON labels (task);
CREATE TABLE texts (task TEXT PRIMARY KEY, text TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX overlaps_b ON overlaps (b);
"""

# meta keys
HEAD, TASKS_REL, SETTINGS, FOLDER, STATES, VERSION = (
    "head",
    "tasks_rel",
    "settings",
    "folder",
    "states",
    "version",
)
TERMINAL_SQL = "('completed', 'failed', 'canceled', 'rejected')"  # core.lifecycle.TERMINAL


def path(git_dir: str) -> str:
    return f"{cache_dir(git_dir)}/{NAME}"


def connect(where: str) -> sqlite3.Connection:
    """The store at `where` (made if missing); sqlite3.Error when it cannot be opened."""
    conn = sqlite3.connect(where, timeout=60, isolation_level=None, check_same_thread=False)
    # A cache: a crash may lose it whole (it is rebuilt), never half of a transaction.
    conn.execute("PRAGMA synchronous = OFF")
    return conn


def intact(where: str) -> bool:
    """Whether the file at `where` is whole as SQLite last wrote it, as far as its header can
    tell without reading the rest: the header's own magic, and as many pages as it counts (a
    file cut short, or written over, is not). SQLite names the damage it meets in the pages."""
    if os.path.exists(where + "-journal"):
        return True  # a transaction in flight, or one to roll back: SQLite's to settle
    try:
        with open(where, "rb") as handle:
            header = handle.read(100)
            size = os.fstat(handle.fileno()).st_size
    except OSError:
        return not os.path.exists(where)
    if len(header) < 100 or not header.startswith(b"SQLite format 3\0"):
        return size == 0  # a file SQLite has not written yet
    page = int.from_bytes(header[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(header[28:32], "big")
    counted = header[24:28] == header[92:96]  # the count is valid for this version
    return not counted or size == page * pages


def create(conn: sqlite3.Connection) -> None:
    """Lay the schema down in an empty store (inside the caller's transaction)."""
    for statement in SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {FORMAT}")


def read_meta(conn: sqlite3.Connection) -> dict[str, Any] | None:
    """The store's meta values, unmarshalled; None when it is not a store this version wrote
    (empty, another format, another taskfs) or cannot be read."""
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] != FORMAT:
            return None
        found = {key: marshal.loads(value) for key, value in conn.execute("SELECT * FROM meta")}
    except (sqlite3.Error, ValueError, EOFError, TypeError):
        return None
    if found.get(VERSION) != __version__:
        return None
    return found


def write_meta(conn: sqlite3.Connection, **values: Any) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO meta VALUES (?, ?)",
        [(key, marshal.dumps(value)) for key, value in values.items()],
    )


# -- the rows' serialisation ---------------------------------------------------------------------


def shown_row(summary: Summary) -> str:
    """A task's row in `ls` and `ready` as JSON text (contract section 4), rendered once per
    change of its files."""
    import json

    return json.dumps(summary.row(), ensure_ascii=False)


def dump_summary(summary: Summary | None) -> bytes | None:
    if summary is None:
        return None
    from taskfs.readmodel import projection

    return marshal.dumps(projection.encode(summary._replace(overlaps=(), text=None)))


def load_summary(data: bytes | None, overlaps: tuple[str, ...] = ()) -> Summary | None:
    """The projection `dump_summary` stored; ValueError when it is not one."""
    if data is None:
        return None
    from taskfs.readmodel import projection

    summary = projection.decode(marshal.loads(data))
    return summary._replace(overlaps=overlaps) if overlaps else summary


# -- reading: the listings (the hot path) --------------------------------------------------------


# The filters of `ls` (and `ready`), by option: each one is a condition on a task's listing row
# with one `?` for its value; a repeated option (`--label a --label b`) adds its condition once
# per value (all must hold). Both paths filter here: the fast path's stored rows and the full
# path's (`taskfs.store.index.listing`).
FILTERS: dict[str, str] = {
    "state": "state = ?",
    "to": "recipient = ?",
    "context": "context = ?",
    "labels": "id IN (SELECT task FROM labels WHERE label = ?)",
    "grep": "id IN (SELECT task FROM texts WHERE instr(text, ?) > 0)",
}


def searched(text: str) -> str:
    """Text as `ls --grep` compares it: case folded (`texts` holds it so)."""
    return text.casefold()


def listing_rows(
    conn: sqlite3.Connection, *, archived: bool = False, **filters: Any
) -> list[tuple[str, str]]:
    """(id, row text) of every task `ls` shows (with `archived`: every archived one instead),
    in the order of the ids, filtered as `ls` filters (`FILTERS`): an option not given shows
    every task."""
    where, args = filtered(archived, filters)
    return conn.execute(f"SELECT id, shown FROM listing WHERE {where} ORDER BY id", args).fetchall()


def listing_text(conn: sqlite3.Connection, **filters: Any) -> str:
    """The rows of `listing_rows` as the listing's JSON text, joined inside SQLite."""
    where, args = filtered(bool(filters.pop("archived", False)), filters)
    found = conn.execute(
        "SELECT group_concat(shown, ', ') FROM "
        f"(SELECT shown FROM listing WHERE {where} ORDER BY id)",
        args,
    ).fetchone()
    return found[0] or ""


def filtered(archived: bool, filters: dict[str, Any]) -> tuple[str, list[Any]]:
    where = ["archived = ?"]
    args: list[Any] = [1 if archived else 0]
    for option, value in filters.items():
        if value is None or option not in FILTERS:
            continue
        for one in value if isinstance(value, list | tuple) else [value]:
            where.append(FILTERS[option])
            args.append(searched(one) if option == "grep" else one)
    return " AND ".join(where), args


def ready_rows(conn: sqlite3.Connection, **filters: Any) -> list[tuple[str, str | None, str]]:
    """(id, recipient, row text) of every task a claim would succeed on now, by anyone the
    recipient rule allows (`taskfs.core.shown.offered_to`), the most urgent first, then the
    oldest (`taskfs.core.shown.rank`, stored with each row); filtered as `ls` filters."""
    where, args = filtered(False, filters)
    return conn.execute(
        f"SELECT id, recipient, shown FROM listing WHERE ready = 1 AND {where} ORDER BY rank",
        args,
    ).fetchall()


def answer(
    command: str, options: dict[str, Any], agent: str | None, catch_up: CatchUp | None = None
) -> str | None:
    """`ls --json` (options `state`, `to`, `context`, `archived`) or `ready --json` (for
    `agent`), as the full path prints it, or None when the store cannot vouch for it: another
    HEAD than its rows' (after `catch_up`, when given, could not bring it there), other
    settings, or a task folder taken away by hand (the full path says what that changes)."""
    try:
        found = checkout(os.getcwd())
        if found is None:
            return None
        root, git_dir = found
        where = path(git_dir)
        if not os.path.exists(where) or not intact(where):
            return None
        conn = connect(where)
        try:
            return _answer(conn, root, git_dir, command, options, agent, catch_up)
        finally:
            conn.close()
    except Exception:  # a store that cannot be read is rebuilt by the full path, never trusted
        return None


def _answer(  # noqa: PLR0917 - the question and where it is asked
    conn: sqlite3.Connection,
    root: str,
    git_dir: str,
    command: str,
    options: dict[str, Any],
    agent: str | None,
    catch_up: CatchUp | None,
) -> str | None:
    meta = read_meta(conn)
    if meta is None or not settled_settings(root, meta):
        return None
    if options.get("state") not in (None, *meta[STATES]):
        return None  # the full path names the states there are
    if meta[HEAD] != head_commit(git_dir):
        if catch_up is None or not catch_up(root, git_dir):
            return None
        meta = read_meta(conn)
        if meta is None or meta[HEAD] != head_commit(git_dir):
            return None
    if not settled_folder(conn, root, meta):
        return None
    opening = shapes.listing_head()
    if command == "ready":
        from taskfs.core.shown import offered_to

        rows = [text for _id, to, text in ready_rows(conn, **options) if offered_to(to, agent)]
        return f"{opening}{', '.join(rows)}{shapes.LISTING_TAIL}"
    return f"{opening}{listing_text(conn, **options)}{shapes.LISTING_TAIL}"


def settled_settings(root: str, meta: dict[str, Any]) -> bool:
    """Whether the settings file (which says where the tasks folder is) is the one the rows
    were read under: its identity, or its bytes while the identity is too young to trust."""
    key, age, digest = meta[SETTINGS]
    if file_key(f"{root}/{CONFIG}") != key:
        return False
    return bool(age > racy_margin() or file_digest(f"{root}/{CONFIG}") == digest)


def settled_folder(conn: sqlite3.Connection, root: str, meta: dict[str, Any]) -> bool:
    """Whether every task folder the rows hold is in the working tree: the tasks folder's
    identity is the one stored (one `stat`), or a listing of it, when the identity changed or
    is too young to trust, names every row's folder (and the identity is stored again). A
    folder taken away by hand, which no commit took away, answers False: the full path hides
    it (`taskfs.store.index.hidden`)."""
    tasks_dir = f"{root}/{meta[TASKS_REL]}"
    stamp = time.time_ns()
    key = file_key(tasks_dir)
    stored, age = meta[FOLDER]
    if key == stored and age > racy_margin():
        return True
    if missing_folders(conn, tasks_dir):
        return False
    with _writing(conn):
        write_meta(conn, **{FOLDER: (key, stamp - newest(key))})
    return True


def missing_folders(conn: sqlite3.Connection, tasks_dir: str) -> set[str]:
    """The tasks HEAD holds (not archived) whose folders are not in the working tree."""
    present = set(task_ids(tasks_dir))
    held = {row[0] for row in conn.execute("SELECT id FROM rows WHERE archived = 0")}
    return held - present


class _writing:
    """A write transaction that waits for others (`BEGIN IMMEDIATE`), committed on success."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, kind: object, *_rest: object) -> None:
        self.conn.execute("ROLLBACK" if kind is not None else "COMMIT")


def writing(conn: sqlite3.Connection) -> _writing:
    return _writing(conn)


def ids(conn: sqlite3.Connection, query: str, args: Iterable[Any] = ()) -> list[str]:
    return [row[0] for row in conn.execute(query, tuple(args))]


def folder_identity(tasks_dir: str) -> tuple[FileKey, int]:
    """The tasks folder's identity and its age now (stored with rows that were checked against
    a listing of it)."""
    stamp = time.time_ns()
    key = file_key(tasks_dir)
    return key, stamp - newest(key)
