"""The writing side of the read model: its store (`taskfs.readmodel.db`) kept as HEAD holds the
ledger, so that whole-ledger commands stay fast (issue 31).

`summaries(repo)` answers, for every task, what the rules and listings need: its projection
(`taskfs.readmodel.projection.Summary`), read from the store row by row as a rule asks
(`taskfs.store.ledger_view.Ledger`). Each row is what `load_task` says of the task as HEAD holds
it, computed by the full reader itself (`taskfs.store.intake_reader.project`).

The store is an optimisation only: deleting it changes no answer, and one that is not what this
version wrote, or that SQLite finds damaged, is thrown away and rebuilt, never trusted.

Freshness comes from HEAD, not from a `stat` per task: decisions rest on committed files only
(`taskfs.store.head_ledger`), so a row is HEAD's view of its task, and the rows are right
exactly when HEAD is the commit they were settled against (stored with them). When HEAD moved,
`git diff` between the two commits names the task folders that changed, and only those are read
again, from the new commit's own objects (so no file half-written in the working tree is ever
read); when that cannot be told (no store, a rewritten history, a large change) every task is
read. A writer updates the rows it changes in its commit step (`committed`), in one transaction
with the new HEAD, and only when the store stood at its commit's parent: otherwise the next
reader catches up. Catching up and rebuilding happen under the writers' lock.

Whether a file is what HEAD holds is all a row depends on, with one exception kept from the
listings before: a task folder taken away by hand (no commit took it) is not listed, nor offered
by `ready` (`hidden`); the fast path notices with one `stat` of the tasks folder.

Writers never take a row on trust: before a transition the task it appends to is checked
against every byte of its files (`verify`: a digest of the bytes the row was read from), so
nothing is ever appended to a task on the word of the store alone.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Collection, Iterator
from typing import Any

from taskfs.core import progress
from taskfs.core.layout import AGENT_KEYS_DIR, AMENDMENTS, ARCHIVE_DIR, REVOKED_DIR
from taskfs.core.shown import offered_to
from taskfs.errors import TaskfsError
from taskfs.readmodel import db, stamps
from taskfs.readmodel.projection import Summary
from taskfs.store import archive_records, fs, readmodel_rows
from taskfs.store.ledger_view import Ledger
from taskfs.store.readmodel_store import connect, digest, meta, recreate, row_tasks

TYPE_CHECKING = False
if TYPE_CHECKING:
    from taskfs.store.repository import Repository

# Past this many changed tasks, every task is read again (from the working tree, which is
# cheaper per task than the objects of a commit) instead of each from the commit.
REBUILD_AT = 2000


def summaries(repo: Repository, *, verify: Collection[str] = ()) -> Ledger:
    """Every task HEAD holds, by id, as `load_task` would read it (see the module docstring).

    The tasks named in `verify` are checked against every byte of their files: a writer
    about to append to a task uses this, so that even a status file rewritten in place is
    never built upon."""
    conn = _fresh(repo)
    for task_id in verify:
        _verify(repo, conn, task_id)
    return Ledger(conn)


def listing(repo: Repository, *, archived: bool = False, **filters: Any) -> list[Summary]:
    """What `ls` shows, in the order of the ids (`ls --archived`: the archived tasks),
    filtered by `filters` (`taskfs.readmodel.db.FILTERS`)."""
    conn = _fresh(repo)
    hidden = _hidden(repo, conn)
    found = db.listing_rows(conn, archived=archived, **filters)
    return Ledger(conn).many([task_id for task_id, _shown in found if task_id not in hidden])


def ready(repo: Repository, agent: str | None = None, **filters: Any) -> list[Summary]:
    """The tasks a claim would succeed on now (by `agent`, when named), the most urgent first,
    then the oldest (`Summary.rank`): the claim's own rules, kept in the store as rows change
    (`readmodel_rows`)."""
    from taskfs.core.readiness import claimable

    conn = _fresh(repo)
    ledger = Ledger(conn)
    offered = [
        task_id for task_id, to, _shown in db.ready_rows(conn, **filters) if offered_to(to, agent)
    ]
    hidden = _hidden(repo, conn)
    if not hidden:
        return ledger.many(offered)
    # Without the folders taken away by hand, a few answers can change: ask those again.
    view = ledger.overlay(dict.fromkeys(hidden))
    asked = (
        set(offered)
        | readmodel_rows.waiting_on(conn, hidden)
        | readmodel_rows.affected_by(conn, hidden)
    )
    candidates = view.many(sorted(asked - hidden))
    if filters:  # the same filters, on the rows asked again
        candidates = [c for c in candidates if _matches(conn, c.id, filters)]
    return sorted(claimable(view, agent, among=candidates), key=lambda s: s.rank)


def _matches(conn: sqlite3.Connection, task_id: str, filters: dict[str, Any]) -> bool:
    """Whether task `task_id`'s listing row passes `filters`, whatever its readiness."""
    where, args = db.filtered(False, filters)
    found = conn.execute(f"SELECT 1 FROM listing WHERE id = ? AND {where}", [task_id, *args])
    return found.fetchone() is not None


def catch_up(root: str) -> bool:
    """Bring the store of the checkout at `root` up to HEAD (the fast path asks this when HEAD
    moved since its rows were settled); False when it cannot be."""
    from pathlib import Path

    from taskfs.store.repository import Repository

    try:
        _fresh(Repository.open(Path(root)))
    except (TaskfsError, OSError, sqlite3.Error):
        return False
    return True


# -- freshness ------------------------------------------------------------------------------------


def _fresh(repo: Repository) -> sqlite3.Connection:
    """The store, brought up to HEAD."""
    conn = connect(repo)
    head = _head(repo)
    found = meta(repo, conn)
    if found is not None and found[db.HEAD] == head:
        _note_settings(conn, found, repo)
        return conn
    with _locked(repo):
        conn = connect(repo)
        found = meta(repo, conn)
        head = _head(repo)
        if found is not None and found[db.HEAD] == head:
            return conn
        changed = None if found is None else _changed(repo, found[db.HEAD], head)
        if changed is None:
            return _rebuild(repo, head)
        with db.writing(conn):
            readmodel_rows.replace(conn, changed)
            db.write_meta(conn, **{db.HEAD: head})
        return conn


def _head(repo: Repository) -> str | None:
    return stamps.head_commit(str(repo.git_dir)) or repo.git.head()


def _note_settings(conn: sqlite3.Connection, meta: dict[str, Any], repo: Repository) -> None:
    """Store the settings file's identity when it changed without moving the tasks folder,
    so that the fast path can trust it again."""
    settings = repo.settings_identity
    if settings is not None and settings != meta.get(db.SETTINGS):
        with contextlib.suppress(sqlite3.Error), db.writing(conn):
            db.write_meta(conn, **{db.SETTINGS: settings})


@contextlib.contextmanager
def _locked(repo: Repository) -> Iterator[None]:
    lock = repo.state_dir() / "lock"
    if fs.holding(lock):
        yield
        return
    with fs.repo_lock(lock):
        yield


def _changed(
    repo: Repository, old: str | None, new: str | None
) -> dict[str, readmodel_rows.Row | None] | None:
    """The rows of the tasks HEAD changed between the commits `old` and `new`, read from
    `new`; None when every task should be read (not known, or too many)."""
    if old == new:
        return {}
    if old is None or new is None:
        return None
    try:
        paths = repo.git.changed_paths(
            old, new, repo.tasks_rel, ARCHIVE_DIR, AGENT_KEYS_DIR, REVOKED_DIR
        )
    except TaskfsError:
        return None  # the old commit is gone (a rewrite)
    rekeyed = [p for p in paths if p.startswith((AGENT_KEYS_DIR + "/", REVOKED_DIR + "/"))]
    files = [p for p in paths if archive_records.is_archive_file(p)]
    if files and not set(repo.git.head_files(files, rev=new)) >= set(files):
        return None  # an archive file went away (a reset): which tasks came back, all say
    archived = archive_records.archived(repo, new, files)
    # A task archived and still (or again) in the tree, by a merge or by hand, is read.
    back = archived.keys() & repo.git.folder_names(new, repo.tasks_rel) if archived else set()
    task_ids = (row_tasks(repo, paths) - archived.keys()) | back
    if rekeyed:  # an amendment counts where it is signed as a standing key's owner's acts are
        task_ids |= _amended(repo, new)
    if len(task_ids) > REBUILD_AT:
        return None
    out = _read_at(repo, new, task_ids)
    for task_id in _said_only(repo, paths) & out.keys():
        row = out[task_id]
        if row is None or row[0] is None:  # a message to an archived task: its row stays
            del out[task_id]
    for task_id, (summary, _commit) in archived.items():
        row = out.get(task_id)
        if row is None or row[0] is None:  # the archive's row, unless the tree says more
            out[task_id] = (summary, None)
    return out


def _said_only(repo: Repository, paths: Collection[str]) -> set[str]:
    """The tasks whose changed files are all messages (read for `ls --grep`'s texts alone)."""
    from taskfs.core.layout import MESSAGES

    said: set[str] = set()
    other: set[str] = set()
    prefix = repo.tasks_rel + "/"
    for path in paths:
        parts = path[len(prefix) :].split("/") if path.startswith(prefix) else []
        if len(parts) >= 2:
            (said if parts[1] == MESSAGES else other).add(parts[0])
    return said - other


def _amended(repo: Repository, rev: str) -> set[str]:
    """The tasks with amendments at commit `rev` (whose contract in force a key decides)."""
    from taskfs.store.git.process import nul_list

    listed = repo.git.run_checked(
        "ls-tree", "-r", "-z", "--name-only", rev, "--", repo.tasks_rel + "/"
    )
    parts = (path.split("/") for path in nul_list(listed))
    return {p[-3] for p in parts if len(p) >= 3 and p[-2] == AMENDMENTS}


def _read_at(
    repo: Repository, rev: str, task_ids: Collection[str]
) -> dict[str, readmodel_rows.Row | None]:
    """The rows of `task_ids` as commit `rev` holds them (None: it holds no such task)."""
    from taskfs.core import layout

    wanted = sorted(t for t in task_ids if layout.is_task_id(t))
    if not wanted:
        return {}  # a commit outside the ledger: the readers (and their models) stay unloaded
    from taskfs.store.commit_view import CommitView
    from taskfs.store.intake_reader import project

    files = repo.git.head_files([repo.task_rel(t) for t in wanted], rev=rev)
    view = CommitView(repo, files)
    out: dict[str, readmodel_rows.Row | None] = {}
    with progress.step(_reading_label(len(wanted)), len(wanted)) as advance:
        for task_id in wanted:
            held = any(p.startswith(repo.task_rel(task_id) + "/") for p in files)
            out[task_id] = (project(view, task_id), digest(view, task_id)) if held else None
            advance(1)
    return out


def _rebuild(repo: Repository, head: str | None) -> sqlite3.Connection:
    """Every task read again: the folders of the working tree by the full reader, and those
    holding files HEAD does not (or missing from the working tree) as HEAD holds them."""
    from taskfs.core.lifecycle import LISTED_STATES
    from taskfs.store import head_ledger
    from taskfs.store.intake_reader import project

    rows: dict[str, readmodel_rows.Row] = {}
    missing: set[str] = set()
    if head is not None:  # no commit: HEAD holds no task
        present = stamps.task_ids(str(repo.tasks_dir))
        loose = set(head_ledger.loose(repo, None))
        with progress.step(_reading_label(len(present)), len(present)) as advance:
            for task_id in present:
                if task_id not in loose:
                    rows[task_id] = (project(repo, task_id), digest(repo, task_id))
                advance(1)
        for task_id, summary in head_ledger.at_head(repo, loose).items():
            if summary is not None:
                rows[task_id] = (summary, None)
        missing = set(rows) - set(present)
        for task_id, (summary, _commit) in archive_records.archived(repo).items():
            if task_id not in rows or rows[task_id][0] is None:
                rows[task_id] = (summary, None)  # the archive's row, unless the tree says more
    conn = recreate(repo)
    folder = db.folder_identity(str(repo.tasks_dir))
    with db.writing(conn):
        readmodel_rows.rebuild(conn, rows)
        db.write_meta(
            conn,
            **{
                db.VERSION: _version(),
                db.TASKS_REL: repo.tasks_rel,
                db.HEAD: head,
                db.SETTINGS: repo.settings_identity or (stamps.NO_FILE, 0, b""),
                db.FOLDER: (stamps.NO_FILE, 0) if missing else folder,
                db.STATES: tuple(LISTED_STATES),
            },
        )
    return conn


def _reading_label(count: int) -> Callable[[], str]:
    def label() -> str:
        from taskfs import i18n

        return i18n.say("reading {count} tasks into the read model", count=count)

    return label


def _version() -> str:
    from taskfs import __version__

    return __version__


# -- what a writer checks -------------------------------------------------------------------------


def _verify(repo: Repository, conn: sqlite3.Connection, task_id: str) -> None:
    """Check the row of `task_id` against every byte of its files; read the task again when
    they differ and its folder holds nothing HEAD does not (a folder that does is refused by
    the writer: `ledger_file_uncommitted`)."""
    from taskfs.core import layout

    if not layout.is_task_id(task_id) or not os.path.lexists(repo.task_dir(task_id)):
        return  # a new task's id (`new`), or no task: the writer says so
    found = conn.execute("SELECT digest FROM rows WHERE id = ?", (task_id,)).fetchone()
    now = digest(repo, task_id)
    if found is not None and found[0] == now:
        return
    from taskfs.store import head_ledger
    from taskfs.store.intake_reader import project

    if head_ledger.loose(repo, [task_id]):
        return
    with _locked(repo), db.writing(conn):
        readmodel_rows.replace(conn, {task_id: (project(repo, task_id), now)})


def _hidden(repo: Repository, conn: sqlite3.Connection) -> set[str]:
    """The tasks HEAD holds whose folders were taken away by hand: not listed."""
    meta = db.read_meta(conn)
    if meta is None or db.settled_folder(conn, str(repo.root), meta):
        return set()
    return db.missing_folders(conn, str(repo.tasks_dir))
