"""The read model kept as HEAD holds the ledger, so that whole-ledger commands stay fast
(issues 31 and 36): the writing side of the store (`taskfs.readmodel.db`).

`summaries(repo)` answers, for every task, what the rules and listings need: its projection
(`taskfs.readmodel.projection.Summary`), read from the store row by row as a rule asks
(`taskfs.readmodel.ledger.Ledger`). Each row is what `load_task` says of the task as HEAD holds
it, computed by the full reader itself (`taskfs.store.intake_reader.project`).

The store is derived and never trusted: every part of it is checked against its sealed root
before it is used, and a store that is missing, another version's, cut short, damaged or
rewritten by hand is rebuilt from git; deleting it changes no answer.

Freshness comes from HEAD, not from a `stat` per task: decisions rest on committed files only
(`taskfs.store.head_ledger`), so a row is HEAD's view of its task, and the rows are right
exactly when HEAD is the commit they were settled against (the root names it). When HEAD
moved, `git diff` between the two commits names the task folders that changed, and only those
are read again, from the new commit's own objects (so no file half-written in the working tree
is ever read); when that cannot be told (no store, a rewritten history, a large change) every
task is read. A writer updates the rows it changes in its commit step
(`taskfs.store.readmodel_store.committed`), in one transaction with the new HEAD.

Never in the way: catching up and rebuilding take the writers' lock when it can be had within
a moment (`PATIENCE`); when it cannot (a long write holds it, the git dir is read-only), the
same work is done in memory and answers this command, and the store is caught up by a later
one. A store another process holds is read as a private copy (`open_store`).

What a decision rests on is checked against the git objects it was read from (`check`): each
row names the key of its task folder's objects (`readmodel_store.key`), which a writer compares
with the folder's files (which `head_ledger.loose` has found to be HEAD's) before it builds on
the task, its dependencies and its rivals; a row that differs is read again.

Whether a file is what HEAD holds is all a row depends on, with one exception kept from the
listings before: a task folder taken away by hand (no commit took it) is not listed, nor offered
by `ready` (`_hidden`); the fast path notices with one `stat` of the tasks folder.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Iterator
from typing import TypeVar

from taskfs.core import layout, progress
from taskfs.core.layout import (
    AGENT_KEYS_DIR,
    AMENDMENTS,
    ARCHIVE_DIR,
    REVOKED_DIR,
    RUNNER_KEYS_DIR,
)
from taskfs.errors import TaskfsError
from taskfs.readmodel import db, stamps
from taskfs.readmodel import listing as listings
from taskfs.readmodel import rows as changing
from taskfs.readmodel.db import ID, Damaged
from taskfs.readmodel.ledger import Ledger
from taskfs.readmodel.projection import Summary
from taskfs.readmodel.view import Batch, Row, View
from taskfs.store import archive_records, fs
from taskfs.store.readmodel_store import (
    Opened,
    key,
    key_of,
    open_store,
    recreate,
    row_tasks,
    save,
    view_of,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from taskfs.readmodel.filters import Filters
    from taskfs.store.repository import Repository

# Past this many changed tasks, every task is read again (from the working tree, which is
# cheaper per task than the objects of a commit) instead of each from the commit.
REBUILD_AT = 2000
# The longest a command waits for the writers' lock to catch the store up: past it, it catches
# up in memory and answers (seconds).
PATIENCE = 0.25
V = TypeVar("V")


def summaries(repo: Repository, *, verify: Collection[str] = ()) -> Ledger:
    """Every task HEAD holds, by id, as `load_task` would read it (see the module docstring).

    The tasks named in `verify` are checked against the git objects their rows were read
    from (`check`): a writer about to append to a task uses this, so that even a status file
    rewritten in place is never built upon."""
    ledger = Ledger(_fresh(repo), recover=lambda stale: _recover(repo, stale))
    check(repo, ledger, verify)
    return ledger


def check(repo: Repository, ledger: Ledger, task_ids: Collection[str]) -> None:
    """Check the rows of `task_ids` against the objects of their folders (`key`); read a task
    again when they differ and its folder holds nothing HEAD does not (a folder that does is
    refused by the writer: `ledger_file_uncommitted`)."""
    stale: dict[str, Row | None] = {}
    for task_id in dict.fromkeys(task_ids):
        if not layout.is_task_id(task_id) or not repo.task_dir(task_id).is_dir():
            continue  # a new task's id (`new`), no task, or an archived one: its row is HEAD's
        row = ledger.row(task_id)
        if row is not None and row.commit is not None and not repo.has_task(task_id):
            continue  # an archived task's folder of what arrived since (its messages)
        now = key(repo, task_id)
        if row is not None and row.held and row.key == now:
            continue
        from taskfs.store import head_ledger

        if head_ledger.loose(repo, [task_id]):
            continue
        from taskfs.store.intake_reader import project

        stale[task_id] = Row(project(repo, task_id), now)
    if stale:
        batch = Batch(ledger.view)
        changing.replace(batch, stale)
        with fs.lock_within(repo.state_dir() / "lock", PATIENCE) as locked:
            ledger.view = save(open_store(repo), batch) if locked else batch
        ledger.forget(stale)


def listing(repo: Repository, filters: Filters = ()) -> list[Summary]:
    """What `ls` shows that passes `filters` (`taskfs.readmodel.filters`), in the order of the
    ids (with `archived`: the archived tasks)."""

    def ask(view: View) -> list[str]:
        hidden = _hidden(repo, view)
        chosen = listings.select(view.entries(), "ls", filters, None, text=_text_of(view))
        return [str(e[ID]) for e in chosen if e[ID] not in hidden]

    ledger = summaries(repo)
    return ledger.many(_asked(repo, ledger, ask))


def ready(repo: Repository, agent: str | None = None, filters: Filters = ()) -> list[Summary]:
    """The tasks a claim would succeed on now (by `agent`, when named) that pass `filters`, the
    most urgent first, then the oldest (`Summary.rank`): the claim's own rules, kept in the
    store as rows change (`taskfs.readmodel.rows`)."""
    from taskfs.core.readiness import claimable
    from taskfs.readmodel.filters import matches

    def ask(view: View) -> list[str]:
        chosen = listings.select(view.entries(), "ready", filters, agent, text=_text_of(view))
        return [str(e[ID]) for e in chosen]

    ledger = summaries(repo)
    offered = _asked(repo, ledger, ask)
    hidden = _asked(repo, ledger, lambda view: sorted(_hidden(repo, view)))
    if not hidden:
        return ledger.many(offered)
    # Without the folders taken away by hand, a few answers can change: ask those again.
    view = ledger.overlay(dict.fromkeys(hidden))
    batch = Batch(ledger.view)
    asked = set(offered) | changing.waiting_on(batch, hidden) | changing.affected_by(batch, hidden)
    candidates = view.many(sorted(asked - set(hidden)))
    found = claimable(view, agent, among=candidates)
    return sorted((s for s in found if matches(s.row(), filters, s.text)), key=lambda s: s.rank)


def _text_of(view: View) -> Callable[[str], str | None]:
    """What `ls --grep` searches of a task, as its row in `view` keeps it."""

    def text(task_id: str) -> str | None:
        row = view.row(task_id)
        return None if row is None or row.summary is None else row.summary.text

    return text


def _asked(repo: Repository, ledger: Ledger, ask: Callable[[View], V]) -> V:
    """`ask` of the ledger's store, asked again once the store is rebuilt when a part of it
    does not check."""
    try:
        return ask(ledger.view)
    except Damaged:
        ledger.view = _recover(repo, ledger.view)
        ledger.forget(None)
        return ask(ledger.view)


def home(repo: Repository, task_id: str) -> Repository:
    """Where a task's files are read: the working tree, or, for a task `taskfs archive` took
    out of it, the commit the archive took it from, as the store's row of it names that commit
    (no archive record is read: issue 36), with what arrived in its folder since (its messages
    and read marks: `archive_records.late_files`). The working tree when neither holds it (the
    reader then says `task_not_found`)."""
    if not layout.is_task_id(task_id) or repo.has_task(task_id):
        return repo
    commit = summaries(repo).archived_commit(task_id)
    return archive_records.view_at(repo, task_id, commit) or repo


def row_key(repo: Repository, task_id: str) -> bytes | None:
    """The key of the git objects the store read the task's row from, at HEAD (None: the
    store has no row of it): what a stored `show` answer is kept under."""
    row = summaries(repo).row(task_id)
    return row.key if row is not None and row.held else None


def catch_up(root: str) -> bool:
    """Bring the store of the checkout at `root` up to HEAD (the fast path asks this when HEAD
    moved since its rows were settled); False when it cannot be (saved)."""
    from pathlib import Path

    from taskfs.store.repository import Repository

    try:
        repo = Repository.open(Path(root))
        if not open_store(repo).writable:
            return False  # a read-only git dir, or a store another process holds: the full
            # path answers (from a private copy, or a store built in memory)
        view = _fresh(repo)
    except (TaskfsError, OSError, sqlite3.Error, Damaged):
        return False
    return view.saved and view.head == _head(repo)


# -- freshness ------------------------------------------------------------------------------------


def _fresh(repo: Repository) -> View:
    """The store, brought up to HEAD (saved when it can be; in memory when it cannot)."""
    opened = open_store(repo)
    head = _head(repo)
    view = _usable(repo, opened)
    if view is not None and view.head == head:
        _note_settings(opened, view, repo)
        return view
    with fs.lock_within(repo.state_dir() / "lock", PATIENCE) as locked:
        if locked:
            opened = open_store(repo, fresh=True)  # as another process may have left it
            view = _usable(repo, opened)
            head = _head(repo)
            if view is not None and view.head == head:
                return view
        found = None if view is None else _changed(repo, view.head, head)
        if view is None or found is None:
            return _rebuild(repo, head, locked)
        changed, rekeyed = found
        batch = Batch(view)
        try:
            changing.replace(batch, changed)
        except Damaged:
            return _rebuild(repo, head, locked)
        runners = _runners(repo) if rekeyed else view.state.runners
        batch.new_state = batch.state.replace(head=head, settings=_settings(repo), runners=runners)
        return save(opened, batch) if locked else batch


def _usable(repo: Repository, opened: Opened) -> View | None:
    """The store's view when it is one this version sealed here, for these settings."""
    try:
        view = view_of(opened)
    except Damaged:
        return None
    if view is None or view.state.tasks_rel != repo.tasks_rel:
        return None
    return view


def _recover(repo: Repository, stale: View) -> View:
    """A view to ask again when a part of `stale` did not check: the store as another process
    has left it since, when it changed meanwhile (nothing was damaged), else rebuilt."""
    opened = open_store(repo, fresh=True)
    now = _usable(repo, opened)
    if now is not None and db.parts(now.state) != db.parts(stale.state):
        return _fresh(repo)
    with fs.lock_within(repo.state_dir() / "lock", PATIENCE) as locked:
        return _rebuild(repo, _head(repo), locked)


def _head(repo: Repository) -> str | None:
    return stamps.head_commit(str(repo.git_dir)) or repo.git.head()


def _settings(repo: Repository) -> tuple[stamps.FileKey, int, bytes]:
    return repo.settings_identity or (stamps.NO_FILE, 0, b"")


def _note_settings(opened: Opened, view: View, repo: Repository) -> None:
    """Store the settings file's identity when it changed without moving the tasks folder,
    so that the fast path can trust it again."""
    settings = repo.settings_identity
    if settings is not None and settings != view.state.settings and opened.writable:
        db.write_root(opened.conn, view.state.replace(settings=settings))


def _changed(
    repo: Repository, old: str | None, new: str | None
) -> tuple[dict[str, Row | None], bool] | None:
    """The rows of the tasks HEAD changed between the commits `old` and `new`, read from
    `new`, and whether the runner keys changed; None when every task should be read (not
    known, or too many)."""
    if old == new:
        return {}, False
    if old is None or new is None:
        return None
    try:
        paths = repo.git.changed_paths(
            old, new, repo.tasks_rel, ARCHIVE_DIR, AGENT_KEYS_DIR, REVOKED_DIR, RUNNER_KEYS_DIR
        )
    except TaskfsError:
        return None  # the old commit is gone (a rewrite)
    runners = any(p.startswith(RUNNER_KEYS_DIR + "/") for p in paths)
    rekeyed = [p for p in paths if p.startswith((AGENT_KEYS_DIR + "/", REVOKED_DIR + "/"))]
    files = [p for p in paths if archive_records.is_archive_file(p)]
    if files and not set(repo.git.head_files(files, rev=new)) >= set(files):
        return None  # an archive file went away (a reset): which tasks came back, all say
    archived = archive_records.archived(repo, new, files)
    # A task archived and still (or again) in the tree, by a merge or by hand, is read.
    back = archived.keys() & repo.git.folder_names(new, repo.tasks_rel) if archived else set()
    task_ids = (set(row_tasks(repo, paths)) - archived.keys()) | back
    if rekeyed:  # an amendment counts where it is signed as a standing key's owner's acts are
        task_ids |= _amended(repo, new)
    if len(task_ids) > REBUILD_AT:
        return None
    out = _read_at(repo, new, task_ids)
    for task_id in _said_only(repo, paths) & out.keys():
        row = out[task_id]
        if row is None or row.summary is None:  # a message to an archived task: its row stays
            del out[task_id]
    for task_id, (summary, commit) in archived.items():
        row = out.get(task_id)
        if row is None or row.summary is None:  # the archive's row, unless the tree says more
            out[task_id] = _archived_row(summary, commit)
    return out, runners


def _runners(repo: Repository) -> bool:
    """Whether HEAD holds runner keys: then every run a completion rests on must be signed by
    one (`taskfs.api.evidence.gate.trust_root`), which `ready` asks as a claim does (`RUNS`)."""
    from taskfs.store import keys

    return bool(keys.committed_public_keys(repo.git, "runner"))


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


def _archived_row(summary: Summary, commit: str | None) -> Row:
    """An archived task's row: the archive's row of it (what `ls --grep` searches of it is
    not kept: no archive file says it), its files in `commit`."""
    return Row(summary._replace(text=None), key_of([("archived", commit or "")]), commit)


def _read_at(repo: Repository, rev: str, task_ids: Collection[str]) -> dict[str, Row | None]:
    """The rows of `task_ids` as commit `rev` holds them (None: it holds no such task)."""
    wanted = sorted(t for t in task_ids if layout.is_task_id(t))
    if not wanted:
        return {}  # a commit outside the ledger: the readers (and their models) stay unloaded
    from taskfs.store.commit_view import CommitView
    from taskfs.store.intake_reader import project

    files = repo.git.head_files([repo.task_rel(t) for t in wanted], rev=rev)
    view = CommitView(repo, files)
    out: dict[str, Row | None] = {}
    with progress.step(_reading_label(len(wanted)), len(wanted)) as advance:
        for task_id in wanted:
            held = any(p.startswith(repo.task_rel(task_id) + "/") for p in files)
            out[task_id] = Row(project(view, task_id), key(view, task_id)) if held else None
            advance(1)
    return out


def _reading_label(count: int) -> Callable[[], str]:
    def label() -> str:
        from taskfs import i18n

        return i18n.say("reading {count} tasks into the read model", count=count)

    return label


def _rebuild(repo: Repository, head: str | None, locked: bool) -> View:
    """Every task read again: the folders of the working tree by the full reader, and those
    holding files HEAD does not (or missing from the working tree) as HEAD holds them, into a
    store built anew one row at a time (`taskfs.readmodel.rebuild`: its memory does not grow
    with the ledger). Saved as the store when the lock is held (`locked`) and the file can be
    written, else kept in memory for this command."""
    folder = _folder_identity(repo)  # taken before the folder is listed
    empty = db.State(
        _version(), repo.tasks_rel, head, _settings(repo), folder, (), (), _runners(repo)
    )
    opened = recreate(repo) if locked else recreate_in_memory(repo)
    try:
        state = _built(opened, repo, empty)
    except sqlite3.Error:
        if not opened.writable:
            raise
        opened = recreate_in_memory(repo)  # the file would not take it: this command's alone
        state = _built(opened, repo, empty)
    view = View(opened.conn, state)
    view.saved = opened.writable
    return view


def _built(opened: Opened, repo: Repository, empty: db.State) -> db.State:
    from taskfs.readmodel.rebuild import rebuild

    missing: list[str] = []

    def settled(state: db.State) -> db.State:
        # A task HEAD holds whose folder is gone: the folder is listed before it is trusted.
        return state.replace(folder=(stamps.NO_FILE, 0)) if missing else state

    return rebuild(opened.conn, empty, _every_row(repo, empty.head, missing), settled)


def _every_row(repo: Repository, head: str | None, missing: list[str]) -> Iterator[tuple[str, Row]]:
    """Every task's row, read as it is asked for (noting in `missing` each task HEAD holds
    whose folder the working tree lacks). A task is read from the working tree where its
    folder's files are the ones HEAD holds (their keys agree: `key`), else from HEAD's objects.
    HEAD's files are listed once by `git ls-tree`, in step with the folders (both in the order
    of the ids), without reading git's index (whose size grows with the working tree)."""
    if head is None:  # no commit: HEAD holds no task
        return
    from taskfs.store import head_ledger
    from taskfs.store.intake_reader import project
    from taskfs.store.key_history import act_keys

    present = set(stamps.task_ids(str(repo.tasks_dir)))
    archived = archive_records.archived(repo)
    other: list[str] = []  # read as HEAD holds them, together, at the end
    ids = sorted({*present, *archived}, key=_tree_order)
    with (
        progress.step(_reading_label(len(ids)), len(ids)) as advance,
        act_keys(repo, None) as key_of,
    ):
        for task_id, held in _in_step(ids, _head_keys(repo)):
            advance(1)
            if held is not None and task_id in present:
                now = key(repo, task_id)
                if now == held:
                    yield task_id, Row(project(repo, task_id, key_of), now)
                else:
                    other.append(task_id)
            elif held is not None:
                other.append(task_id)
                missing.append(task_id)  # HEAD holds it; its folder is gone
            elif task_id in archived:
                yield task_id, _archived_row(*archived[task_id])
    for task_id, (summary, found) in head_ledger.at_head_keyed(repo, other).items():
        if summary is not None:
            yield task_id, Row(summary, found)
        elif task_id in archived:
            yield task_id, _archived_row(*archived[task_id])  # the archive's, unless HEAD says more


def _tree_order(task_id: str) -> str:
    """Where git's tree puts a folder: by its name and a `/` (`a-b` before `a`)."""
    return task_id + "/"


def _in_step(
    ids: list[str], held: Iterator[tuple[str, bytes]]
) -> Iterator[tuple[str, bytes | None]]:
    """Every id of `ids` and of `held` (both in git's tree order, `_tree_order`), with its key
    in `held` (None: none)."""
    pending = next(held, None)
    for task_id in ids:
        while pending is not None and _tree_order(pending[0]) < _tree_order(task_id):
            yield pending
            pending = next(held, None)
        if pending is not None and pending[0] == task_id:
            yield pending
            pending = next(held, None)
        else:
            yield task_id, None
    while pending is not None:
        yield pending
        pending = next(held, None)


def _head_keys(repo: Repository) -> Iterator[tuple[str, bytes]]:
    """(task id, the key of the objects HEAD holds in its folder: `key`) of every task folder
    HEAD holds, in git's tree order (`_tree_order`): HEAD's trees read one at a time through
    one `git cat-file` mapping its packs a little at a time (git's own `ls-tree -r` keeps every
    tree it read: 70 MB at 50,000 tasks)."""
    from taskfs.core.layout import ENVELOPE, SUFFIX
    from taskfs.store.git.reader import ObjectReader, parse_tree
    from taskfs.store.readmodel_store import KEY_SOURCES

    reader = ObjectReader(repo.git, lean=True)
    try:
        body = reader.tree_body_at(f"HEAD:{repo.tasks_rel}")
        for task_id, (folder, oid) in parse_tree(body or b"", reader.digest_size):
            if folder != "40000" or not layout.is_task_id(task_id):
                continue
            ids: list[tuple[str, str]] = []
            for name, (mode, found) in reader.tree(oid):
                rel = f"{repo.tasks_rel}/{task_id}/{name}"
                if name == ENVELOPE and not mode.startswith("40"):
                    ids.append((rel, found))
                elif name in KEY_SOURCES and mode == "40000":
                    ids += [
                        (f"{rel}/{inner}", blob)
                        for inner, (kind, blob) in reader.tree(found)
                        if inner.endswith(SUFFIX) and not inner.startswith(".")
                        and not kind.startswith("40")
                    ]  # fmt: skip
            if ids:
                yield task_id, key_of(ids)
    finally:
        reader.close()


def recreate_in_memory(repo: Repository) -> Opened:
    from taskfs.store.readmodel_store import _empty, store_path

    return Opened(_empty(), store_path(repo), False, 0)


def _folder_identity(repo: Repository) -> tuple[stamps.FileKey, int]:
    import time

    stamp = time.time_ns()
    found = stamps.file_key(str(repo.tasks_dir))
    return found, stamp - stamps.newest(found)


def _version() -> str:
    from taskfs import __version__

    return __version__


def _hidden(repo: Repository, view: View) -> set[str]:
    """The tasks HEAD holds whose folders were taken away by hand: not listed."""
    if listings.folder_trusted(str(repo.root), view.state):
        return set()
    held = [str(e[ID]) for e in view.entries() if e[db.FLAGS] & db.HELD]
    if listings.settled_folder(view.conn, view.state, str(repo.root), held):
        return set()
    return set(held) - set(stamps.task_ids(str(repo.tasks_dir)))
