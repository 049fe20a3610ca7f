"""The read model's store as a checkout meets it: opening it (`open_store`), the key of a task's
objects (`key`), and updating it in a writer's commit step (`committed`), in one transaction
with the new HEAD.

Kept apart from `taskfs.store.index` (which reads tasks to catch the store up) so that the
writer can call it without importing the task readers: a writer knows the rows of what it
changed (`Writer.project`), and when it does not, the next reader catches up from the commit.

Opening never waits long and never fails: a store another process holds is read as a private
copy of its file (`taskfs.readmodel.db.private_copy`), a checkout whose git dir cannot be
written gets the same (or an empty store in memory), and either answers as the store would;
only saving what changed is left to a later command that can.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Collection, Mapping

from taskfs.core.layout import (
    AMENDMENTS,
    ENVELOPE,
    EVIDENCE,
    INTAKE,
    MESSAGES,
    RUNNER_KEYS_DIR,
    STATUS,
)
from taskfs.readmodel import db, stamps
from taskfs.readmodel.db import Damaged
from taskfs.readmodel.projection import Summary
from taskfs.readmodel.view import Batch, Row, View

TYPE_CHECKING = False
if TYPE_CHECKING:
    from taskfs.store.repository import Repository

# The files of a task folder its row is read from (messages too: their texts are what `ls
# --grep` searches); and those its key names: what the row's decisions rest on, and the files
# `show` presents (whether HEAD holds one is part of the answer). Messages decide nothing, so
# the key leaves them out.
ROW_SOURCES = frozenset({ENVELOPE, STATUS, INTAKE, AMENDMENTS, MESSAGES})
KEY_SOURCES = frozenset({ENVELOPE, STATUS, INTAKE, AMENDMENTS, EVIDENCE})
# The folders of a task whose files the key names (`key`), in the order it lists them.
KEY_FOLDERS = (STATUS, EVIDENCE, INTAKE, AMENDMENTS)


class Opened:
    """A connection to a checkout's store, and whether what changes in it can be saved."""

    __slots__ = ("conn", "inode", "where", "writable")

    def __init__(self, conn: sqlite3.Connection, where: str, writable: bool, inode: int) -> None:
        self.conn = conn
        self.where = where
        self.writable = writable  # False: a private copy, or one in memory
        self.inode = inode


_open: dict[str, Opened] = {}  # by path: one per process at a time


def store_path(repo: Repository) -> str:
    return db.path(str(repo.git_dir))


def open_store(repo: Repository, *, fresh: bool = False) -> Opened:
    """The store of `repo`, open. `fresh`: opened again, not the one this process has."""
    where = store_path(repo)
    found = _open.get(where)
    if found is not None and not fresh and (not found.writable or found.inode == _inode(where)):
        return found  # still the file it opened: not deleted or replaced since
    # Forgotten, not closed: a ledger read from it may still be in use; it closes when the
    # last reference goes.
    _open.clear()
    opened = _connect(where)
    _open[where] = opened
    return opened


def _connect(where: str) -> Opened:
    try:
        os.makedirs(os.path.dirname(where), exist_ok=True)
        conn = db.connect(where)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        if not db.check_schema(conn):
            db.create(conn)
        return Opened(conn, where, True, _inode(where))
    except (OSError, sqlite3.Error, Damaged):
        pass
    with contextlib.suppress(OSError, sqlite3.Error, Damaged):
        copy = db.private_copy(where)
        if copy is not None:
            return Opened(copy, where, False, 0)
    return Opened(_empty(), where, False, 0)


def _empty() -> sqlite3.Connection:
    conn = db.connect(":memory:")
    db.create(conn)
    return conn


def _inode(path: str) -> int:
    try:
        return os.stat(path).st_ino
    except OSError:
        return 0


def recreate(repo: Repository) -> Opened:
    """An empty store in place of whatever was there (under the lock); in memory when the
    file cannot be written."""
    where = store_path(repo)
    _open.pop(where, None)
    for leftover in (where, where + "-journal", where + "-wal", where + "-shm"):
        with contextlib.suppress(OSError):
            os.unlink(leftover)
    opened = _connect(where)
    if opened.writable and not _is_empty(opened.conn):
        opened = Opened(_empty(), where, False, 0)  # another process made one meanwhile
    if not opened.writable:
        opened = Opened(_empty(), where, False, 0)
    _open[where] = opened
    return opened


def _is_empty(conn: sqlite3.Connection) -> bool:
    try:
        return db.read_state(conn) is None
    except Damaged:
        return False


def close() -> None:
    """Close the stores this process opened (a long-running process between repositories)."""
    for opened in _open.values():
        opened.conn.close()
    _open.clear()


def view_of(opened: Opened) -> View | None:
    """The store's content as its sealed root names it; None when it has no root (empty, or
    another version's). `Damaged` when it is not what taskfs wrote."""
    db.check_schema(opened.conn)
    state = db.read_state(opened.conn)
    return None if state is None else View(opened.conn, state)


def save(opened: Opened, batch: Batch) -> View:
    """Save `batch` when the store can be written; the view to read on from either way (the
    saved store, or the batch itself)."""
    if not opened.writable or not batch.changed:
        batch.saved = not batch.changed
        return batch
    try:
        state = batch.save()
    except (sqlite3.Error, Damaged):
        return batch  # busy, changed by another process, or damaged: the next one catches up
    return View(opened.conn, state)


def key(repo: Repository, task_id: str) -> bytes:
    """The key of the git objects a task folder's row and `show` are read from: the digest of
    the path and object id of its envelope, status, evidence, intake and amendment files, from
    the working tree (or a commit's tree, `CommitView`). Equal to the key of the objects HEAD
    holds there exactly when the folder holds those files as HEAD does."""
    names: list[str] = []
    for kind in KEY_FOLDERS:
        names += [repo.task_rel(task_id, kind, n) for n in repo.list_dir(task_id, kind)]
    if repo.has_task(task_id):
        names.append(repo.task_rel(task_id, ENVELOPE))
    ids: list[tuple[str, str]] = []
    for rel in sorted(names):
        try:
            ids.append((rel, repo.git.blob_id(repo.read_bytes(rel))))
        except OSError:
            ids.append((rel, "unreadable"))
    return key_of(ids)


def key_of(ids: Collection[tuple[str, str]]) -> bytes:
    """The key of a task folder's (path, object id) pairs (`key`)."""
    into = hashlib.blake2b(digest_size=16)
    for rel, oid in sorted(ids):
        into.update(f"{rel}\0{oid}\n".encode())
    return into.digest()


def _key_written(
    repo: Repository, task_id: str, mine: Collection[str], written: Mapping[str, bytes] | None
) -> bytes | None:
    """The key (`key`) of a task folder HEAD held no file of before this commit, from the
    bytes the commit wrote (`written`) instead of the working tree (which may hold files no
    commit does); `mine`: the paths of the commit in that folder. None when the commit took in
    a file of it that it did not write."""
    prefix = repo.task_rel(task_id) + "/"
    ids = []
    for rel in mine:
        data = None if written is None else written.get(rel)
        if data is None:
            return None
        parts = rel[len(prefix) :].split("/")
        if parts == [ENVELOPE] or (len(parts) == 2 and parts[0] in KEY_FOLDERS):
            ids.append((rel, repo.git.blob_id(data)))
    return key_of(ids) if ids else None


def _by_task(repo: Repository, paths: Collection[str]) -> dict[str, list[str]]:
    """`paths` (repository-relative) under each task folder, by task id."""
    prefix = repo.tasks_rel + "/"
    found: dict[str, list[str]] = {}
    for path in paths:
        if path.startswith(prefix):
            parts = path[len(prefix) :].split("/")
            if len(parts) >= 2:
                found.setdefault(parts[0], []).append(path)
    return found


def row_tasks(repo: Repository, paths: Collection[str]) -> dict[str, bool]:
    """The tasks whose rows the files `paths` (repository-relative) change: True for those
    whose projection they are read into, False for those whose key alone they change."""
    prefix = repo.tasks_rel + "/"
    found: dict[str, bool] = {}
    for path in paths:
        if path.startswith(prefix):
            parts = path[len(prefix) :].split("/")
            if len(parts) >= 2 and (parts[1] in KEY_SOURCES or parts[1] in ROW_SOURCES):
                found[parts[0]] = found.get(parts[0], False) or parts[1] in ROW_SOURCES
    return found


def committed(
    repo: Repository,
    paths: Collection[str],
    rows: Mapping[str, Summary],
    *,
    written: Mapping[str, bytes] | None = None,
) -> None:
    """A writer committed `paths` (`repo.git.last_commit`): store the rows of the tasks whose
    files it added (`rows`: the writer's projections of the tasks whose envelope, status or
    intake files changed; a task whose evidence alone changed keeps its projection, with its
    key read again), with the commit as the store's HEAD. Nothing is stored when the store did
    not stand at the commit's parent, or when the writer did not say a changed task's row: the
    next reader catches up from the commit. `written`: the bytes of the files the commit added
    (a task the store had no row of has no other objects in HEAD: its key is theirs)."""
    last = repo.git.last_commit
    if last is None:
        return
    parent, commit = last
    from taskfs.readmodel import rows as changing

    with contextlib.suppress(sqlite3.Error, Damaged):
        opened = open_store(repo)
        view = view_of(opened)
        if view is None or view.head != parent or view.state.tasks_rel != repo.tasks_rel:
            return
        if any(path.startswith(RUNNER_KEYS_DIR + "/") for path in paths):
            return  # whether HEAD holds runner keys (`State.runners`): the next reader says
        changed = row_tasks(repo, paths)
        projected = {t for t, read in changed.items() if read}
        if not projected <= rows.keys():
            return
        if any(rows[t].text is None for t in _messaged(repo, paths)):
            return  # a message's text the writer did not say: the next reader reads it
        batch = Batch(view)
        new: dict[str, Row | None] = {}
        mine = _by_task(repo, paths)
        for task_id in sorted(changed):
            old = view.row(task_id)
            summary = rows.get(task_id)
            if summary is not None and summary.text is None and old is not None and old.summary:
                summary = summary._replace(text=old.summary.text)  # not said: the stored stands
            if _unsettled(old):
                return  # what its completion rests on may have come: the next reader reads it
            if summary is not None and summary.archived:
                # Taken out of the tree by this commit: its files are in the commit's parent,
                # as the archive's record says.
                row = Row(summary._replace(text=None), key_of([("archived", parent or "")]), parent)
                new[task_id] = row
            elif summary is not None:
                fresh = old is None or not old.held  # HEAD held no file of it before
                found = _key_written(repo, task_id, mine[task_id], written) if fresh else None
                new[task_id] = Row(summary, found or key(repo, task_id))
            elif old is not None and old.held:
                # Its evidence alone changed: the same projection under its objects' key.
                batch.put(task_id, old._replace(key=key(repo, task_id)))
            else:
                return  # not known to the store: the next reader reads it
        fresh_folders = any(view.entry(t) is None for t in changed)
        changing.replace(batch, new)
        folder = (stamps.NO_FILE, 0) if fresh_folders else view.state.folder
        batch.new_state = batch.new_state.replace(head=commit, folder=folder)
        save(opened, batch)


def _unsettled(old: Row | None) -> bool:
    """Whether a task's row says a completion that did not stand (`Summary.stands`): a commit
    adding to its folder may bring the run or the message it names, which only the full reader
    asks again (`taskfs.store.completions`). Rare: a completion taskfs makes stands."""
    summary = old.summary if old is not None and old.held else None
    return summary is not None and summary.state == "completed" and not summary.stands


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
