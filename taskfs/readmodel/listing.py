"""What `ls` and `ready` list, read from the store's manifest (`taskfs.readmodel.view`), and the
fast path's answer of `ls --json` and `ready --json` (`answer`), which loads nothing but this
package and the leaves.

`select` is the one place a listing is chosen: the fast path prints what it selects, and the
full path (`taskfs.store.index`) reads the tasks it selects, so both answer alike.
"""

from __future__ import annotations

import os
import sqlite3

from taskfs.core import shapes
from taskfs.core.layout import TRUST_LIST_ENV, TRUST_LIST_NAME, checkout, operator_file
from taskfs.core.shown import offered_to
from taskfs.readmodel import db
from taskfs.readmodel import filters as filtering
from taskfs.readmodel.db import (
    ARCHIVED,
    FIELDS,
    FLAGS,
    HELD,
    ID,
    KEY,
    LISTED,
    RANK,
    READY,
    RUNS,
    SHOWN,
    WORDS,
    Damaged,
)
from taskfs.readmodel.stamps import (
    CONFIG,
    file_digest,
    file_key,
    head_commit,
    newest,
    racy_margin,
    task_ids,
)

TYPE_CHECKING = False  # `typing` costs the hot path 3 ms to import; type checkers know this
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import TypeVar

    T = TypeVar("T")
    R = TypeVar("R")

    from taskfs.readmodel.filters import Filters

    # Whether the store was brought up to HEAD (checkout, git dir): asked when HEAD moved.
    CatchUp = Callable[[str, str], bool]

_TO = shapes.ROW_FIELDS.index("to")
HELD_OR_ARCHIVED = HELD | ARCHIVED


def select(
    entries: Iterable[tuple[object, ...]],
    command: str,
    filters: Filters,
    agent: str | None,
    text: Callable[[str], str | None] | None = None,
) -> Iterator[tuple[object, ...]]:
    """The manifest entries `ls` (or `ready`, for `agent`) lists under `filters`: listed; for
    `ready`, offered now and by the recipient rule; every filter held (`text`: what `ls
    --grep` searches of a task, asked only of the tasks every other filter kept). In the order
    of the ids; `ready`'s the most urgent first, then the oldest (`taskfs.core.shown.rank`)."""
    chosen = _selected(entries, command, filters, agent, text)
    if command != "ready":
        return chosen
    return iter(sorted(chosen, key=lambda entry: str(entry[RANK])))


def _selected(
    entries: Iterable[tuple[object, ...]],
    command: str,
    filters: Filters,
    agent: str | None,
    text: Callable[[str], str | None] | None,
) -> Iterator[tuple[object, ...]]:
    # Whether a task is archived is in its flags too: asked there, the commonest listing (the
    # live tasks, no other filter) reads no field of any row.
    archived = [value for field, value in filters if field == "archived"]
    want = ARCHIVED if (archived[-1] if archived else False) is True else 0
    kept = filtering.compiled(tuple(f for f in filters if f[0] != "archived"))
    if archived and type(archived[-1]) is not bool:
        kept += filtering.compiled((("archived", archived[-1]),))
    ready = command == "ready"
    searched = filtering.searches(filters)
    for entry in entries:
        flags: int = entry[FLAGS]  # type: ignore[assignment]
        if not flags & LISTED or ((not ready or archived) and flags & ARCHIVED != want):
            continue
        fields: tuple[object, ...] = entry[FIELDS]  # type: ignore[assignment]
        if ready and not (flags & READY and offered_to(fields[_TO], agent)):  # type: ignore[arg-type]
            continue
        if not kept:
            yield entry
            continue
        found = text(str(entry[ID])) if text is not None and searched else None
        if filtering.keeps(fields, kept, found):
            yield entry


def answer(
    command: str, filters: Filters, agent: str | None, catch_up: CatchUp | None = None
) -> str | None:
    """`ls --json` or `ready --json` (for `agent`) under `filters`, as the full path prints
    it (`rows`, joined)."""
    found = rows(command, filters, agent, catch_up)
    return (
        None if found is None else f"{shapes.listing_head()}{', '.join(found)}{shapes.LISTING_TAIL}"
    )


def rows(
    command: str, filters: Filters, agent: str | None, catch_up: CatchUp | None = None
) -> list[str] | None:
    """The rows (JSON text) of `ls --json` or `ready --json` (for `agent`) under `filters`, or None
    when the store cannot vouch for them: none, damaged or not sealed here, another HEAD than
    its rows' (after `catch_up`, when given, could not bring it there), other settings, a task
    folder taken away by hand (the full path says what that changes), a listing filtered by what
    `ls --grep` searches (in the rows, not the manifest), a task `ready` offers on a word a
    claim checks against git first (`WORDS`: the full path asks the claim's checks), or one it
    offers on completions where their runs must be a trusted runner's (`RUNS`, `runs_trusted`:
    the full path asks which are). A store that is missing or damaged is built again first by
    `catch_up` (when it can be saved), so that even the first listing reads the manifest, not
    every task's row. The manifest is read a chunk at a time: what stays in memory is the rows
    chosen."""
    if filtering.searches(filters):
        return None  # what `ls --grep` searches is in the rows, not the manifest: the full path
    try:
        found = checkout(os.getcwd())
        if found is None:
            return None
        root, git_dir = found
        where = db.path(git_dir)

        words: list[bool] = []  # one it offers on a word a claim checks first (`WORDS`)
        runs: list[bool] = []  # one it offers on completions, each on a run (`RUNS`)

        ready = command == "ready"  # what `ls` shows of a task is its row alone

        def chosen(entries: Iterable[tuple[object, ...]]) -> list[str]:
            out = []
            for entry in select(entries, command, filters, agent):
                flags: int = entry[FLAGS]  # type: ignore[assignment]
                if ready and flags & WORDS:
                    words.append(True)
                if ready and flags & RUNS:
                    runs.append(True)
                out.append(str(entry[SHOWN]))
            return out

        for attempt in (0, 1):
            taken = None
            if os.path.exists(where):
                try:
                    conn = db.connect(where)
                    try:
                        taken = snapshot(conn, root, git_dir, catch_up, chosen)
                    finally:
                        # Not closed: closing costs a checkpoint's worth of work at exit; the
                        # process ends at once (or the collector closes it).
                        conn.rollback()
                except sqlite3.OperationalError:
                    # Another process holds it (`BEGIN EXCLUSIVE`, a stuck `sqlite3` shell):
                    # read its file as it stands, checked like any store, rather than wait.
                    words.clear()
                    runs.clear()
                    taken = _from_copy(where, root, git_dir, chosen)
                except Exception:
                    taken = None
            if taken is not None:
                # The claim's checks of what a word says are the full path's (git, the api),
                # and so is whether a runner trusted now signed the runs completions rest on.
                return None if words or (runs and runs_trusted(taken[0].runners)) else taken[1]
            if attempt or catch_up is None or not catch_up(root, git_dir):
                return None
        return None
    except Exception:  # a store that cannot be read is rebuilt by the full path, never trusted
        return None


def runs_trusted(runners: bool) -> bool:
    """Whether a run a completion rests on may have to be signed by a trusted runner (so that
    `ready` asks it of each, as a claim does: `taskfs.api.lifecycle.standing`): HEAD holds
    runner keys, as the store's rows were read (`runners`: `State.runners`), or the operator
    keeps a trust list (which `$TASKFS_TRUSTED_RUNNERS` names, missing or not: the full path
    says what is wrong with it). One `stat` at most."""
    if runners or os.environ.get(TRUST_LIST_ENV):
        return True
    return os.path.exists(operator_file(TRUST_LIST_ENV, TRUST_LIST_NAME))


def _from_copy(
    where: str, root: str, git_dir: str, chosen: Callable[[Iterable[tuple[object, ...]]], list[T]]
) -> tuple[db.State, list[T]] | None:
    """`snapshot` of a private copy of the store's file (`db.private_copy`); None when there is
    none, or it cannot vouch for the answer (it is not at HEAD: catching up is the full path's)."""
    try:
        copy = db.private_copy(where)
    except Exception:
        return None
    if copy is None:
        return None
    try:
        return snapshot(copy, root, git_dir, None, chosen)
    except Exception:
        return None


def snapshot(
    conn: sqlite3.Connection,
    root: str,
    git_dir: str,
    catch_up: CatchUp | None,
    chosen: Callable[[Iterable[tuple[object, ...]]], list[T]],
) -> tuple[db.State, list[T]] | None:
    """The store's root and what `chosen` takes of the manifest's entries (read a chunk at a
    time, in one transaction, each chunk checked), when the store holds the ledger as HEAD does
    now (after `catch_up`, when HEAD moved); None when it cannot vouch for it. `Damaged` when
    it is not what taskfs wrote."""
    held: list[str] = []

    def read(state: db.State) -> tuple[bool, list[T]]:
        trusted = folder_trusted(root, state)
        entries = db.Chunks(conn, "chunks", state.chunks, keep=False).items()
        if not trusted:  # every folder the rows hold is asked for below: their ids
            entries = _noting_held(entries, held)
        return trusted, chosen(entries)

    found = _at_head(conn, root, git_dir, catch_up, read)
    if found is None:
        return None
    state, (trusted, taken) = found
    if not trusted and not settled_folder(conn, state, root, held):
        return None
    return state, taken


def _at_head(
    conn: sqlite3.Connection,
    root: str,
    git_dir: str,
    catch_up: CatchUp | None,
    read: Callable[[db.State], R],
) -> tuple[db.State, R] | None:
    """The store's root and what `read` takes of it, in one transaction, once the store holds
    the ledger as HEAD does now (after `catch_up` once, when HEAD moved); None when it cannot
    vouch for it (its schema, its settings, or HEAD still ahead)."""
    for attempt in (0, 1):
        with db.transaction(conn, immediate=False):
            if not db.check_schema(conn):
                return None
            state = db.read_state(conn)
            if state is None or not settled_settings(root, state):
                return None
            if state.head == head_commit(git_dir):
                return state, read(state)
        if attempt or catch_up is None or not catch_up(root, git_dir):
            return None
    return None


def _noting_held(
    entries: Iterable[tuple[object, ...]], held: list[str]
) -> Iterator[tuple[object, ...]]:
    for entry in entries:
        if entry[FLAGS] & HELD:  # type: ignore[operator]
            held.append(str(entry[ID]))
        yield entry


def key_at_head(
    root: str, git_dir: str, task_id: str, catch_up: CatchUp | None
) -> tuple[bytes | None] | None:
    """(the key of the git objects HEAD holds in the task's folder, as the store's row says
    it; None when it has no row), once the store is at HEAD; None when the store cannot vouch
    for it."""
    where = db.path(git_dir)
    if not os.path.exists(where):
        return None
    conn = db.connect(where)
    try:
        found = _at_head(
            conn, root, git_dir, catch_up,
            lambda state: db.Chunks(conn, "chunks", state.chunks).get(task_id),
        )  # fmt: skip
        if found is None:
            return None
        entry = found[1]
        return (None if entry is None or not entry[FLAGS] & HELD_OR_ARCHIVED else entry[KEY],)
    finally:
        conn.rollback()  # not closed, as `answer` leaves it


def settled_settings(root: str, state: db.State) -> bool:
    """Whether the settings file (which says where the tasks folder is) is the one the rows
    were read under: its identity, or its bytes while the identity is too young to trust."""
    key, age, digest = state.settings
    if file_key(f"{root}/{CONFIG}") != key:
        return False
    return bool(age > racy_margin() or file_digest(f"{root}/{CONFIG}") == digest)


def folder_trusted(root: str, state: db.State) -> bool:
    """Whether the tasks folder's identity is the one stored and old enough to be trusted
    (one `stat`): then no folder the rows hold was taken away by hand."""
    stored, age = state.folder
    return file_key(f"{root}/{state.tasks_rel}") == stored and age > racy_margin()


def settled_folder(
    conn: sqlite3.Connection, state: db.State, root: str, held: Iterable[str]
) -> bool:
    """Whether every task folder the rows hold (`held`: their ids) is in the working tree: a
    listing of the tasks folder names each (its identity is then stored again, for the next
    command to trust). A folder taken away by hand, which no commit took away, answers False:
    the full path hides it (`taskfs.store.index`)."""
    import time

    tasks_dir = f"{root}/{state.tasks_rel}"
    stamp = time.time_ns()
    key = file_key(tasks_dir)
    if folder_trusted(root, state):
        return True
    if set(held) - set(task_ids(tasks_dir)):
        return False
    db.write_root(conn, state.replace(folder=(key, stamp - newest(key))))
    return True


__all__ = ["Damaged", "answer", "rows", "select", "snapshot"]
