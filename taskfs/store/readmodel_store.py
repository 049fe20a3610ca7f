"""The read model's store as the writers meet it: opening it (`connect`), and updating it in a
writer's commit step (`committed`), row by row, in one transaction with the new HEAD.

Kept apart from `taskfs.store.index` (which reads tasks to catch the store up) so that the
writer can call it without importing the task readers: a writer knows the rows of what it
changed (`Writer.project`), and when it does not, the next reader catches up from the commit.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Collection, Mapping

from taskfs.core.layout import AMENDMENTS, ENVELOPE, INTAKE, MESSAGES, STATUS
from taskfs.readmodel import db, stamps
from taskfs.readmodel.projection import Summary
from taskfs.store import readmodel_rows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from taskfs.store.repository import Repository

# Messages too: their texts are what `ls --grep` searches (`texts`). They decide nothing, so
# a row's digest (what a writer checks before appending) leaves them out.
ROW_SOURCES = frozenset({ENVELOPE, STATUS, INTAKE, AMENDMENTS, MESSAGES})
_conns: dict[str, tuple[sqlite3.Connection, int]] = {}  # by path, with its file's inode


def store_path(repo: Repository) -> str:
    return db.path(str(repo.git_dir))


def connect(repo: Repository) -> sqlite3.Connection:
    """The store of `repo`, open (one per process at a time); an in-memory one when its file
    cannot be opened (a read-only checkout: only speed is lost)."""
    where = store_path(repo)
    found = _conns.get(where)
    if found is not None and found[1] == _inode(where):
        return found[0]  # still the file it opened: not deleted or replaced since
    # Forgotten, not closed: a ledger read from it may still be in use; it closes when the
    # last reference goes.
    _conns.clear()
    try:
        os.makedirs(os.path.dirname(where), exist_ok=True)
        conn = db.connect(where)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except (OSError, sqlite3.Error):
        conn = db.connect(":memory:")
    _conns[where] = conn, _inode(where)
    return conn


def _inode(path: str) -> int:
    try:
        return os.stat(path).st_ino
    except OSError:
        return 0


def recreate(repo: Repository) -> sqlite3.Connection:
    """An empty store with the schema, in place of whatever was there (under the lock)."""
    where = store_path(repo)
    _conns.pop(where, None)
    for leftover in (where, where + "-journal", where + "-wal", where + "-shm"):
        with contextlib.suppress(OSError):
            os.unlink(leftover)
    conn = connect(repo)
    with db.writing(conn):
        db.create(conn)
    return conn


def close() -> None:
    """Close the stores this process opened (a long-running process between repositories)."""
    for conn, _inode_now in _conns.values():
        conn.close()
    _conns.clear()


def meta(repo: Repository, conn: sqlite3.Connection) -> dict[str, Any] | None:
    """The store's meta values when it is whole and read under `repo`'s settings (the same
    tasks folder); None otherwise (rebuilt then)."""
    found = db.read_meta(conn) if db.intact(store_path(repo)) else None
    if found is None or found.get(db.TASKS_REL) != repo.tasks_rel:
        return None
    return found


def row_tasks(repo: Repository, paths: Collection[str]) -> set[str]:
    """The tasks whose rows the files `paths` (repository-relative) are read into."""
    prefix = repo.tasks_rel + "/"
    found = set()
    for path in paths:
        if path.startswith(prefix):
            parts = path[len(prefix) :].split("/")
            if len(parts) >= 2 and parts[1] in ROW_SOURCES:
                found.add(parts[0])
    return found


def committed(repo: Repository, paths: Collection[str], rows: Mapping[str, Summary]) -> None:
    """A writer committed `paths` (`repo.git.last_commit`): store the rows of the tasks whose
    envelope, status or intake files it added (`rows`: the writer's projections of them), with
    the commit as the store's HEAD. Nothing is stored when the store did not stand at the
    commit's parent, or when the writer did not say a changed task's row: the next reader
    catches up from the commit."""
    last = repo.git.last_commit
    if last is None:
        return
    parent, commit = last
    with contextlib.suppress(sqlite3.Error):
        conn = connect(repo)
        found = meta(repo, conn)
        if found is None or found[db.HEAD] != parent:
            return
        changed = row_tasks(repo, paths)
        if not changed <= rows.keys():
            return
        if any(rows[t].text is None for t in _messaged(repo, paths)):
            return  # a message's text the writer did not say: the next reader reads it
        known = _stored(conn, sorted(changed))  # a new folder: listed before it is trusted
        with db.writing(conn):
            readmodel_rows.replace(conn, {t: (rows[t], digest(repo, t)) for t in sorted(changed)})
            values: dict[str, Any] = {db.HEAD: commit}
            if not changed <= known:
                values[db.FOLDER] = (stamps.NO_FILE, 0)  # listed before it is trusted again
            db.write_meta(conn, **values)


def _messaged(repo: Repository, paths: Collection[str]) -> set[str]:
    """The tasks whose messages `paths` (repository-relative) add to."""
    prefix = repo.tasks_rel + "/"
    return {
        parts[0]
        for path in paths
        if path.startswith(prefix)
        and len(parts := path[len(prefix) :].split("/")) >= 2
        and parts[1] == MESSAGES
    }


def _stored(conn: sqlite3.Connection, task_ids: list[str]) -> set[str]:
    """Those of `task_ids` the store has rows for."""
    found: set[str] = set()
    for start in range(0, len(task_ids), 500):
        chunk = task_ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found.update(db.ids(conn, f"SELECT id FROM rows WHERE id IN ({marks})", chunk))
    return found


def digest(repo: Repository, task_id: str) -> bytes:
    """A digest of what a task folder holds that its row is read from, to the byte: its
    envelope, its status files and its amendments, or (without an envelope) its intake files,
    by name. `repo` is the working tree, or a commit's tree (`CommitView`)."""
    into = hashlib.sha1(usedforsecurity=False)
    if repo.has_task(task_id):
        files = [repo.task_rel(task_id, ENVELOPE)]
        files += [repo.task_rel(task_id, STATUS, n) for n in repo.list_dir(task_id, STATUS)]
        files += [repo.task_rel(task_id, AMENDMENTS, n) for n in repo.list_dir(task_id, AMENDMENTS)]
    else:
        files = [repo.task_rel(task_id, INTAKE, n) for n in repo.list_dir(task_id, INTAKE)]
    for rel in files:
        into.update(rel.encode() + b"\0")
        try:
            into.update(repo.read_bytes(rel))
        except OSError:
            into.update(b"\1unreadable")
        into.update(b"\0")
    return into.digest()
