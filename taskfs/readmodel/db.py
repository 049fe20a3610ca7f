"""The read model's store: one SQLite file per checkout, in its git dir
(`<git dir>/taskfs/cache/readmodel-vN.sqlite`), never committed, never shared between
worktrees, deletable at any time (issues 31 and 36). This module is its one description (its
schema) and the only code that speaks SQL to it.

What it holds, and how a reader knows taskfs wrote it. The store is a tree of digests with one
seal at its root (`taskfs.readmodel.seal`), so that anything in it that does not decode, or that
someone rewrote (a row saying a dependency completed, a trigger that marks tasks ready), is
found the moment it is read, and the store is rebuilt instead of believed:

- `state`, one row, sealed: the commit HEAD named when the rows were settled (`head`), the
  tasks folder and the settings file it was read under, and the digests of the parts below;
- `chunks`: the manifest, every task id's entry in id order, cut into chunks of a few hundred
  (`Entry`: the digest of its row, what `ls` and `ready` answer of it, and the key of the git
  objects its row was read from); each chunk's digest is in `state`;
- `rows`: per task id, its projection and its relations (`taskfs.readmodel.view.Row`), each
  checked against the digest its manifest entry names;
- `entries`: every ownership entry of a live task, filed by the first two segments of its
  place; `buckets`: the digest of each file's entries, in chunks like the manifest's, each
  chunk's digest in `state`.

The root names chunks, not rows, so it stays small whatever the ledger's size; a change
rewrites the chunks it touches (`Chunks.patched`).

Nothing else may be in the file (`check_schema`): an object SQLite keeps that this version did
not make (a trigger, a view, an index) is damage. `Damaged` says a store is not what taskfs
wrote; whoever meets it rebuilds. SQLite's own errors (a file cut short, garbage, another
program's database) are `Damaged` too.

Imports nothing but the standard library and this package.
"""

from __future__ import annotations

import marshal
import sqlite3
from bisect import bisect_right
from itertools import chain

from taskfs import __version__
from taskfs.readmodel import seal
from taskfs.readmodel.stamps import cache_dir

TYPE_CHECKING = False  # `typing` costs the hot path 3 ms to import; type checkers know this
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence
    from typing import Any

    from taskfs.readmodel.stamps import FileKey

# 6: whether a completion stands (`Summary.stands`); 5: sealed (issue 36), with priority,
# labels, the place in `ready`, what `ls --grep` searches and the follow-ups found (issue 38);
# 3: the lineage (`follows`, issue 29)
FORMAT = 6
NAME = f"readmodel-v{FORMAT}.sqlite"
# Journal mode, chosen by measurement and by what damage does to it (bench/RESULTS.md): SQLite's
# rollback journal. In WAL a reader never waits for a writer, but every connection maps the
# `-shm` file into memory, and a process whose mapping outlives a truncation of that file (by
# a hand, a bad sync, a full disk) is killed by the kernel (SIGBUS), where every other damage
# costs a rebuild. A store another process holds is read as a private copy (`private_copy`).
JOURNAL = "DELETE"
BUSY_MS = 250  # the longest a command waits for the store before it answers without it

SCHEMA: dict[str, str] = {
    "state": "CREATE TABLE state (k INTEGER PRIMARY KEY CHECK (k = 0), data BLOB NOT NULL)",
    "chunks": "CREATE TABLE chunks (first TEXT PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID",
    "buckets": "CREATE TABLE buckets (first TEXT PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID",
    "rows": "CREATE TABLE rows (id TEXT PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID",
    "entries": (
        "CREATE TABLE entries (file TEXT NOT NULL, raw TEXT NOT NULL, task TEXT NOT NULL, "
        "place TEXT NOT NULL, PRIMARY KEY (file, raw, task)) WITHOUT ROWID"
    ),
    "entries_task": "CREATE INDEX entries_task ON entries (task)",
}

# A manifest entry, a plain tuple (marshal stores no other): (id, its row's digest, FLAGS, its
# row's fields in `ROW_FIELDS` order (None when not listed), its row in `ls` as JSON text (None
# when not listed), the key of the git objects it was read from (None when not known), its
# place in `ready` (`taskfs.core.shown.rank`; None when not listed)).
if TYPE_CHECKING:
    Entry = tuple[Any, ...]
ID, DIGEST, FLAGS, FIELDS, SHOWN, KEY, RANK = range(7)
ENTRY_WIDTH = 7
# HELD: a folder HEAD holds (not archived); READABLE: its files read into a projection.
# WORDS: `ready` offers it on the word of a row a claim checks against git first (an archived
# task's, a successor's link: `taskfs.core.readiness.rests_on_words`); the fast path leaves it
# to the full path, which asks the claim's checks (`taskfs.api.lifecycle.standing.offered`).
# RUNS: `ready` offers it on completions, each on a run that a runner trusted now must have
# signed where runner keys are trusted (`State.runners`, the operator's trust list): the one
# part of a completion not fixed once committed; then the full path asks it too.
HELD, LISTED, ARCHIVED, READY, INTAKE, READABLE, WORDS, RUNS = 1, 2, 4, 8, 16, 32, 64, 128
OFFERED = READY | WORDS | RUNS

STATE = b"state"


class Damaged(Exception):
    """The store is not what this version of taskfs wrote: rebuild it, never use it."""


class State:
    """What the sealed root of the store says (see the module docstring)."""

    # The fields in the order the root stores them (`fields`), and its slots.
    ORDER = ("version", "tasks_rel", "head", "settings", "folder", "chunks", "buckets", "runners")
    __slots__ = ORDER

    def __init__(  # noqa: PLR0917 - the root's fields, in the order it stores them
        self,
        version: str,
        tasks_rel: str,
        head: str | None,
        settings: tuple[FileKey, int, bytes],
        folder: tuple[FileKey, int],
        chunks: tuple[tuple[str, bytes], ...],
        buckets: tuple[tuple[str, bytes], ...],
        runners: bool = False,
    ) -> None:
        self.version = version
        self.tasks_rel = tasks_rel
        self.head = head
        self.settings = settings  # the settings file's identity, age and bytes' digest
        self.folder = folder  # the tasks folder's identity and age (0: list it to trust it)
        self.chunks = chunks  # (first id, digest) of each chunk of the manifest, in order
        self.buckets = buckets  # (first file, digest) of each chunk of the files' digests
        self.runners = runners  # whether `head` holds runner keys (a run must be signed: RUNS)

    def fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.ORDER)

    def replace(self, **changes: Any) -> State:
        return State(*(changes.get(n, getattr(self, n)) for n in self.ORDER))


def path(git_dir: str) -> str:
    return f"{cache_dir(git_dir)}/{NAME}"


# -- opening -----------------------------------------------------------------------------------


def connect(where: str, *, busy_ms: int = BUSY_MS) -> sqlite3.Connection:
    """The store at `where` (":memory:" for one in memory); sqlite3.Error when it cannot be
    opened. It waits at most `busy_ms` for another process that holds it."""
    conn = sqlite3.connect(
        where, timeout=busy_ms / 1000, isolation_level=None, check_same_thread=False
    )
    # A cache: a crash may lose it whole (it is rebuilt), never half of a transaction.
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA trusted_schema = OFF")
    return conn


def private_copy(where: str) -> sqlite3.Connection | None:
    """The store's file read as bytes into a connection of this process alone: when another
    process holds the file locked, or this one may not write beside it (a read-only `.git`).
    What the copy holds is checked like any store; None when there is no such file."""
    try:
        with open(where, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if not data:
        return None
    conn = connect(":memory:")
    try:
        conn.deserialize(data)  # type: ignore[attr-defined]
    except sqlite3.Error:
        conn.close()
        raise Damaged("not a store") from None
    return conn


class transaction:
    """One transaction on the store, the only way taskfs opens one (`immediate`: the writers'
    lock taken at once): committed when the block ends, rolled back when it raises (or COMMIT
    does: a busy store)."""

    def __init__(self, conn: sqlite3.Connection, *, immediate: bool = True) -> None:
        self._conn, self._begin = conn, "BEGIN IMMEDIATE" if immediate else "BEGIN"

    def __enter__(self) -> sqlite3.Connection:
        self._conn.execute(self._begin)
        return self._conn

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        try:
            if kind is None:
                self._conn.execute("COMMIT")
        finally:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")


def create(conn: sqlite3.Connection) -> None:
    """Lay the schema down in an empty store."""
    conn.execute(f"PRAGMA journal_mode = {JOURNAL}")
    with transaction(conn):
        for statement in SCHEMA.values():
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {FORMAT}")


def check_schema(conn: sqlite3.Connection) -> bool:
    """Whether the store holds exactly this version's tables and index, and nothing else
    (False for an empty file: a store not made yet). `Damaged` for anything else."""
    try:
        found = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
        ).fetchall()
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.Error as exc:
        raise Damaged(str(exc)) from None
    if not found and version == 0:
        return False
    if version != FORMAT or dict(found) != SCHEMA:
        raise Damaged("not this version's schema")
    return True


# -- the sealed root ---------------------------------------------------------------------------


def read_state(conn: sqlite3.Connection) -> State | None:
    """The store's root; None for a store with none yet (or another version's); `Damaged`
    when it is not one this version sealed."""
    try:
        found = conn.execute("SELECT data FROM state WHERE k = 0").fetchone()
    except sqlite3.Error as exc:
        raise Damaged(str(exc)) from None
    if found is None:
        return None
    blob = found[0]
    if blob == _last[1] and _last[0] is not None and _last[0] == seal.key():
        checked: State = _last[2]
        return checked  # the root this process checked already, under the same key
    data = seal.unwrap(STATE, blob) if type(blob) is bytes else None
    if data is None:
        raise Damaged("the store's root is not sealed by this checkout's key")
    try:
        fields = marshal.loads(data)
        state = State(*fields)
    except Exception:
        raise Damaged("the store's root does not decode") from None
    if state.version != __version__:
        return None
    _last[:] = [seal.key(), blob, state]
    return state


# The last root this process checked (the key, its sealed bytes, what they say): asked again of
# the same bytes under the same key, the seal is not checked twice.
_last: list[Any] = [None, None, None]


def sealed_state(state: State) -> bytes | None:
    return seal.wrap(STATE, marshal.dumps(state.fields()))


# -- reading the parts, checked against the root ------------------------------------------------

CHUNK = 256  # items per chunk: a change rewrites one chunk, a few kilobytes


class Chunks:
    """A sorted map kept in a chunk table (`chunks`: the manifest's entries by task id;
    `buckets`: the digests of the entries filed under each file, by file), each item a tuple
    whose first value is its key; every chunk is checked against the digest the root names
    (`refs`: (first key, digest) of each chunk, in order) when it is first read."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        table: str,
        refs: tuple[tuple[str, bytes], ...],
        *,
        keep: bool = True,
    ):
        self.conn = conn
        self.table = table
        self.refs = refs
        self.keep = keep  # False: a chunk read is not kept (a listing reads each once)
        self._firsts = [first for first, _digest in refs]
        self._loaded: dict[int, dict[str, tuple[Any, ...]]] = {}

    def _chunk(self, index: int) -> dict[str, tuple[Any, ...]]:
        found = self._loaded.get(index)
        if found is None:
            first, digest = self.refs[index]
            try:
                row = self.conn.execute(
                    f"SELECT data FROM {self.table} WHERE first = ?", (first,)
                ).fetchone()
            except sqlite3.Error as exc:
                raise Damaged(str(exc)) from None
            if row is None or type(row[0]) is not bytes or seal.digest(row[0]) != digest:
                raise Damaged(f"{self.table} {first!r} is not the chunk the root names")
            try:
                items = marshal.loads(row[0])
            except Exception:
                raise Damaged(f"{self.table} {first!r} does not decode") from None
            if type(items) is not tuple:  # its digest holds: it is what this version wrote
                raise Damaged(f"{self.table} {first!r} is not a chunk")
            found = {item[0]: item for item in items}
            if self.keep:
                self._loaded[index] = found
        return found

    def _index(self, key: str) -> int:
        return max(bisect_right(self._firsts, key) - 1, 0)

    def get(self, key: str) -> tuple[Any, ...] | None:
        if not self._firsts:
            return None
        return self._chunk(self._index(key)).get(key)

    def items(self) -> Iterator[tuple[Any, ...]]:
        """Every item, in the order of the keys."""
        for index in range(len(self._firsts)):
            yield from (v for _k, v in sorted(self._chunk(index).items()))

    def between(self, low: str, high: str) -> Iterator[tuple[Any, ...]]:
        """The items whose keys are at least `low` and below `high`, in order."""
        if not self._firsts:
            return
        for index in range(self._index(low), len(self._firsts)):
            if index and self._firsts[index] >= high:
                return
            yield from (v for k, v in sorted(self._chunk(index).items()) if low <= k < high)

    def patched(
        self, changes: Mapping[str, tuple[Any, ...] | None]
    ) -> tuple[dict[str, bytes | None], tuple[tuple[str, bytes], ...]]:
        """The chunks `changes` (key: new item, or None: gone) rewrite, by first key (None:
        gone), and the refs of the map after them."""
        by_chunk: dict[int, list[str]] = {}
        for key in changes:
            by_chunk.setdefault(self._index(key) if self._firsts else 0, []).append(key)
        written: dict[str, bytes | None] = {}
        made: dict[int, list[tuple[str, bytes]]] = {}
        for index, keys in by_chunk.items():
            held = dict(self._chunk(index)) if index < len(self.refs) else {}
            for key in keys:
                item = changes[key]
                if item is None:
                    held.pop(key, None)
                else:
                    held[key] = item
            if index < len(self.refs):
                written[self.refs[index][0]] = None
            ordered = [held[k] for k in sorted(held)]
            pieces = []
            for start in range(0, len(ordered), CHUNK):
                data = marshal.dumps(tuple(ordered[start : start + CHUNK]))
                written[ordered[start][0]] = data
                pieces.append((ordered[start][0], seal.digest(data)))
            made[index] = pieces
        refs: list[tuple[str, bytes]] = []
        for index in range(max(len(self.refs), 1)):
            if index in made:
                refs += made[index]
            elif index < len(self.refs):
                refs.append(self.refs[index])
        return written, tuple(refs)


def read_rows(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, bytes]:
    """The stored bytes of the rows of `ids` that exist (checked by the caller, against the
    digests the manifest names)."""
    out: dict[str, bytes] = {}
    try:
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            for task_id, data in conn.execute(
                f"SELECT id, data FROM rows WHERE id IN ({marks})", chunk
            ):
                out[task_id] = data
    except sqlite3.Error as exc:
        raise Damaged(str(exc)) from None
    return out


def read_entries(
    conn: sqlite3.Connection, buckets: Chunks, files: Iterable[str]
) -> list[tuple[str, str, str, str]]:
    """(file, task, entry, place) of every ownership entry filed in `files`, each file's
    entries checked against the digest the root's buckets name for it."""
    wanted = sorted(set(files))
    found: dict[str, list[tuple[str, str, str]]] = {}
    try:
        for chunk in _chunks(wanted):
            marks = ",".join("?" * len(chunk))
            query = f"SELECT file, raw, task, place FROM entries WHERE file IN ({marks})"
            for file, raw, task, place in conn.execute(query, chunk):
                found.setdefault(file, []).append((raw, task, place))
    except sqlite3.Error as exc:
        raise Damaged(str(exc)) from None
    out: list[tuple[str, str, str, str]] = []
    for file in wanted:
        rows = sorted(found.get(file, ()))
        named = buckets.get(file)
        if (named is None and rows) or (
            named is not None and seal.bucket_digest(file, rows) != named[1]
        ):
            raise Damaged(f"the entries filed under {file!r} are not the ones the root names")
        out += [(file, task, raw, place) for raw, task, place in rows]
    return out


# -- writing ------------------------------------------------------------------------------------


def write(  # noqa: PLR0917 - one transaction's whole change
    conn: sqlite3.Connection,
    state: State,
    manifest: Mapping[str, Entry | None],
    rows: Mapping[str, bytes | None],
    entries: Mapping[str, Sequence[tuple[str, str, str]] | None],
    expect: State | None,
) -> State:
    """Store, in one transaction: the manifest's `manifest` entries (by id; None: gone),
    `rows` (by id; None: gone), the ownership entries of the tasks in `entries` ((file, entry,
    place) rows; None: none), and the root `state` (its head and identities) with the digests
    of what changed. `expect` is the root the change was made on (None: an empty store): when
    another process changed the store's parts meanwhile, nothing is written (the next reader
    catches up). The new root; sqlite3.Error when the store cannot be written (busy,
    read-only, changed)."""
    with transaction(conn):
        now = read_state(conn) if expect is not None else None
        if (now is None) != (expect is None) or (
            now is not None and expect is not None and parts(now) != parts(expect)
        ):
            raise sqlite3.OperationalError("the store changed meanwhile")
        base = expect or state
        for task_id, data in rows.items():
            conn.execute("DELETE FROM rows WHERE id = ?", (task_id,))
            if data is not None:
                conn.execute("INSERT INTO rows VALUES (?, ?)", (task_id, data))
        files = _file_entries(conn, entries)
        digests: dict[str, tuple[Any, ...] | None] = {}
        for file in files:
            held = conn.execute(
                "SELECT raw, task, place FROM entries WHERE file = ? ORDER BY raw, task, place",
                (file,),
            ).fetchall()
            found = seal.bucket_digest(file, [tuple(r) for r in held]) if held else None
            digests[file] = (file, found) if found is not None else None
        chunks, listed = Chunks(conn, "chunks", base.chunks).patched(manifest)
        filed, buckets = Chunks(conn, "buckets", base.buckets).patched(digests)
        for table, written in (("chunks", chunks), ("buckets", filed)):
            for first in written:
                conn.execute(f"DELETE FROM {table} WHERE first = ?", (first,))
            for first, data in written.items():
                if data is not None:
                    conn.execute(f"INSERT INTO {table} VALUES (?, ?)", (first, data))
        state = state.replace(chunks=listed if manifest else base.chunks,
                              buckets=buckets if digests else base.buckets)  # fmt: skip
        root = sealed_state(state)
        if root is None:
            raise sqlite3.OperationalError("no key to seal the store with")
        put_root(conn, root)
    return state


def _file_entries(
    conn: sqlite3.Connection, entries: Mapping[str, Sequence[tuple[str, str, str]] | None]
) -> set[str]:
    """Put the ownership entries of each task of `entries`; the files that changed."""
    files: set[str] = set()
    for task_id, filed in entries.items():
        files.update(
            r[0] for r in conn.execute("SELECT file FROM entries WHERE task = ?", (task_id,))
        )
        conn.execute("DELETE FROM entries WHERE task = ?", (task_id,))
        file_entries(conn, task_id, filed or ())
        files.update(file for file, _raw, _place in filed or ())
    return files


# -- building a store anew (`taskfs.readmodel.rebuild`), inside its one transaction ------------


def file_entries(
    conn: sqlite3.Connection, task_id: str, filed: Sequence[tuple[str, str, str]]
) -> None:
    conn.executemany(
        "INSERT OR IGNORE INTO entries VALUES (?, ?, ?, ?)",
        [(file, raw, task_id, place) for file, raw, place in filed],
    )


def put_rows(conn: sqlite3.Connection, rows: Sequence[tuple[str, bytes]]) -> None:
    conn.executemany("INSERT OR REPLACE INTO rows VALUES (?, ?)", rows)


def iter_rows(conn: sqlite3.Connection, step: int = 500) -> Iterator[tuple[str, bytes]]:
    """Every row, in the order of the ids, read a few hundred at a time (each batch read
    whole before it is handed on, so that the caller may write rows meanwhile)."""
    last = ""
    while True:
        found = conn.execute(
            "SELECT id, data FROM rows WHERE id > ? ORDER BY id LIMIT ?", (last, step)
        ).fetchall()
        if not found:
            return
        yield from found
        last = found[-1][0]


def filed_by_file(conn: sqlite3.Connection) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """(file, [(task, entry), ...]) of every file entries are filed in, in order, read as it
    goes (the caller writes to no table meanwhile)."""
    current: str | None = None
    held: list[tuple[str, str]] = []
    query = "SELECT file, task, raw FROM entries ORDER BY file, task, raw"
    for file, task, raw in conn.execute(query):
        if file != current:
            if current is not None:
                yield current, held
            current, held = file, []
        held.append((task, raw))
    if current is not None:
        yield current, held


def filed_short(conn: sqlite3.Connection) -> dict[str, list[tuple[str, str]]]:
    """The entries filed in files of fewer than two segments (no `/`; not interfaces): those
    every entry below them may meet."""
    out: dict[str, list[tuple[str, str]]] = {}
    query = (
        "SELECT file, task, raw FROM entries WHERE file NOT LIKE '%/%' "
        "AND file NOT LIKE 'interface:%' ORDER BY file, task, raw"
    )
    for file, task, raw in conn.execute(query):
        out.setdefault(file, []).append((task, raw))
    return out


def put_chunk(conn: sqlite3.Connection, table: str, items: Sequence[Entry]) -> tuple[str, bytes]:
    """Store one chunk of items (in key order); its (first key, digest)."""
    data = marshal.dumps(tuple(items))
    conn.execute(f"INSERT INTO {table} VALUES (?, ?)", (items[0][0], data))
    return items[0][0], seal.digest(data)


def put_buckets(conn: sqlite3.Connection) -> tuple[tuple[str, bytes], ...]:
    """The digests of every file's entries, stored in chunks; the chunks' refs."""
    refs: list[tuple[str, bytes]] = []
    pending: list[tuple[str, bytes]] = []
    current: str | None = None
    rows: list[tuple[str, str, str]] = []
    query = "SELECT file, raw, task, place FROM entries ORDER BY file, raw, task, place"
    # Read as it goes (the entries of every live task), writing only to another table.
    for file, raw, task, place in chain(conn.execute(query), [(None, "", "", "")]):
        if file != current:
            if current is not None:
                pending.append((current, seal.bucket_digest(current, rows)))
                if len(pending) >= CHUNK:
                    refs.append(put_chunk(conn, "buckets", pending))
                    pending = []
            current, rows = file, []
        rows.append((raw, task, place))
    if pending:
        refs.append(put_chunk(conn, "buckets", pending))
    return tuple(refs)


def put_root(conn: sqlite3.Connection, root: bytes) -> None:
    conn.execute("INSERT OR REPLACE INTO state VALUES (0, ?)", (root,))


def parts(state: State) -> tuple[Any, ...]:
    """What a root says of the store's content (not of the identities it was checked
    against, which readers store again)."""
    return (state.version, state.tasks_rel, state.head, state.chunks, state.buckets)


def write_root(conn: sqlite3.Connection, state: State) -> bool:
    """Store the root `state`, when the store's parts are still the ones it names (a reader
    storing the identities it checked them against); whether it was written."""
    root = sealed_state(state)
    if root is None:
        return False
    try:
        with transaction(conn):
            now = read_state(conn)
            if now is None or parts(now) != parts(state):
                return False
            put_root(conn, root)
    except (sqlite3.Error, Damaged):
        return False
    return True


def _chunks(items: Sequence[str], size: int = 500) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
