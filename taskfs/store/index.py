"""A per-checkout cache of what every task's files say, so that whole-ledger commands stay fast.

`summaries(repo)` answers, for every task, what the rules and listings need: its projection
(`taskfs.readmodel.projection.Summary`). It is what `load_task` would say, computed by
`load_task` itself for any task whose files changed, and remembered in the ledger cache
(`taskfs.readmodel.cache`, `<git dir>/taskfs/cache/ledger-vN`) otherwise. Whenever it is
written, the answers of `ls --json` and `ready --json` are prepared beside it
(`taskfs.readmodel.prepared`; the identities both files are keyed by are
`taskfs.readmodel.stamps`). This module is the writing side of the read model: it decides the
rows and stores them, under the writer's lock when a writer calls it.

The cache is an optimisation only: deleting it changes no answer, and a file that is not what
this version wrote is thrown away and rebuilt, never trusted.

A task's row is keyed by the identity of its `envelope.yaml` (inode, size, mtime, ctime: an
edit in place changes it too) and of its `status/` folder (inode, mtime, ctime: a status file
added, removed or renamed changes it). Taskfs creates ledger files and never rewrites them, and
git replaces files when it checks out, merges or pulls, so every legitimate change changes a
key. The one change these two `stat` calls per task cannot see is an existing status file
rewritten in place, which the contract forbids and `audit` (which never reads this cache)
names as `ledger_file_edited`; stat-ing every status file as well would cost four times as
much and miss the speed targets (bench/RESULTS.md). Writers never take that risk: before a
transition the task's row is checked against every byte of its files (`verify`), so nothing is
ever appended to a task on the word of the cache alone.

File times advance in coarse ticks, so a change in the same tick as the `stat` that keyed a row
could leave the key unchanged (git's "racily clean" problem). A row whose key is not older than
its `stat` by a margin is checked again next time, cheaply: the status file names and the
envelope's bytes are compared with what the row was built from.

Decisions rest on committed files only (`taskfs.store.head_ledger`): whenever rows are built, git
is asked whether the tasks' folders hold files that HEAD does not (one call scoped to those
folders), and such a task's row says what HEAD holds instead (`loose`). Whether a file is what
HEAD holds can also change without the file changing, when HEAD moves (a commit, a reset): the
cache remembers the commit its rows were settled against and the identity of git's files that
say where HEAD is (`stamps.head_identity`); when those change, the task folders that differ
between the two commits are asked again. The prepared answers carry the same identity.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Collection, Mapping

from taskfs.core.layout import ENVELOPE, INTAKE, STATUS
from taskfs.readmodel import cache, prepared, stamps
from taskfs.readmodel.cache import CacheRow, Head
from taskfs.readmodel.projection import Summary
from taskfs.readmodel.stamps import FileKey, Key, newest
from taskfs.store import overlaps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from taskfs.store.repository import Repository

# The rows this process last read or wrote, by cache file, with the tasks folder's identity
# when they were listed: a writer that read them under the lock updates them without reading
# the file again.
# The folder's identity is None when the rows were not checked against a listing of it, and
# UNLISTED when they were not listed yet: a writer lists the tasks only when it stores a delta
# that needs the identity (`remember`); `new` lists them after adding its own.
UNLISTED: Literal["unlisted"] = "unlisted"
_Last = tuple[
    Mapping[str, CacheRow],
    "tuple[FileKey, int] | Literal['unlisted'] | None",
    "Head | None",
    dict[str, Summary],
]
_last: dict[str, _Last] = {}
_Read = tuple[
    Mapping[str, CacheRow], "tuple[FileKey, int] | None", "Head | None", dict[str, Summary]
]
_tokens: dict[str, bytes | None] = {}  # the token of the rows in `_last`, by cache file
# The rows in `_last` a writer read that the stored ones do not say yet, and whether a task
# went away (which no delta can say), by cache file.
_unsaved: dict[str, tuple[set[str], bool]] = {}
# A writer's change to a few tasks is stored as a small delta beside the rows and the
# prepared answers (`_remember_delta`), named by their token; past this many tasks the
# whole files are stored again.
DELTA_LIMIT = 64


def summaries(repo: Repository, *, verify: Collection[str] = ()) -> dict[str, Summary]:
    """Every readable task by id, as `load_task` would read it (see the module docstring).

    The tasks named in `verify` are checked against every byte of their files, not only the
    identities of two: a writer about to append to a task uses this, so that even a status
    file rewritten in place (which the key cannot see) is never built upon. A writer's view
    of the others is HEAD's (`_as_writer`)."""
    path = cache_path(repo)
    old, token = cache.read(path, repo.tasks_rel)
    head_was = cache.read_head(str(repo.git_dir), token)
    if verify and old and token is not None:
        written = _as_writer(repo, path, old, token, head_was=head_was, verify=verify)
        if written is not None:
            return written
    tasks_dir = str(repo.tasks_dir)
    stamp = time.time_ns()  # before the `stat`, as ages are measured (stamps.py)
    folder = (stamps.file_key(tasks_dir), stamp)
    rows, rebuilt, fresh = _read_rows(repo, old, verify)
    head = _head_now(repo, head_was)
    _settle_loose(repo, rows, fresh | _moved(repo, head_was, head, rows))
    gone = set(old) - set(rows)
    overlapped = overlaps.update(rows, rebuilt, gone) if rebuilt or gone else set()
    answer = _tasks(rows)
    _unsaved[path] = (set(), False)
    if verify:
        # A writer stores the rows once, with its own change (`remember`): the rows it read
        # that differ from the stored ones go with it; a task gone makes it store them all.
        read = {t for t, row in rows.items() if row is not old.get(t)} | overlapped
        _unsaved[path] = (read, bool(gone))
    else:
        token = _settle(repo, (rows, folder, head, answer), old, token, head_was)
    _last[path] = rows, folder, head, answer
    _tokens[path] = token
    return answer


def _read_rows(
    repo: Repository, old: Mapping[str, CacheRow], verify: Collection[str]
) -> tuple[dict[str, CacheRow], set[str], set[str]]:
    """Every task's row, from `old` where its key holds, else from its files; the tasks whose
    envelope may have changed, and those whose rows were built from their files now."""
    rows: dict[str, CacheRow] = {}
    margin = stamps.racy_margin()
    rebuilt: set[str] = set()
    fresh: set[str] = set()
    tasks_dir = str(repo.tasks_dir)
    opened = stamps.Folder(tasks_dir)
    try:
        for task_id in stamps.task_ids(tasks_dir):
            row = old.get(task_id)
            stamp = time.time_ns()
            key = opened.key(task_id)
            checked = task_id in verify
            if row is not None and row.key == key and not _racy(row, margin) and not checked:
                rows[task_id] = row
                continue
            task_folder = f"{tasks_dir}/{task_id}"
            if row is not None and stamps.folder_digest(task_folder) == row.folder_digest:
                rows[task_id] = dataclasses.replace(row, key=key, stamp=stamp)
                continue
            built = _build(repo, task_id, task_folder, key, stamp)
            if row is None or row.digest != built.digest or row.summary is None:
                rebuilt.add(task_id)
            else:
                overlaps.keep(built, row)  # the same envelope overlaps the same tasks
            rows[task_id] = built
            if not checked:  # a writer asks git about the task it writes to itself
                fresh.add(task_id)
    finally:
        opened.close()
    return rows, rebuilt, fresh


def _settle(
    repo: Repository,
    read: _Read,
    old: Mapping[str, CacheRow],
    token: bytes | None,
    was: Head | None,
) -> bytes | None:
    """Store what a reader read when it differs from what is stored; the token of the rows."""
    rows, folder, head, answer = read
    if rows != old or not os.path.exists(prepared_path(repo)):
        return _store(repo, rows, folder, head, answer)
    if head != was and token is not None:
        # HEAD moved and no task changed: the rows and the prepared answers still hold.
        cache.write_head(str(repo.git_dir), token, head)
    return token


def _as_writer(
    repo: Repository,
    path: str,
    old: dict[str, CacheRow],
    token: bytes,
    *,
    head_was: Head | None,
    verify: Collection[str],
) -> dict[str, Summary] | None:
    """The rows a writer decides on, without a `stat` of every task, when HEAD changed no
    task's folder since they were settled (a commit of code, or none). Every row is what HEAD
    held then (a task whose folder held files no commit holds is read as HEAD holds it:
    `_settle_loose`), so it is what HEAD holds now: an edit in the working tree that no commit
    holds changes no decision and need not be looked for. The tasks in `verify` are checked
    against every byte. None (the caller reads every task, and stores what it read) when HEAD
    changed a task, when it cannot be told whether it did, or when a task in `verify` is not
    what its row says: a writer stores only the rows it changes itself."""
    head = _head_now(repo, head_was)
    if _changed_since(repo, head_was, head) != set():
        return None
    rows = dict(old)
    tasks_dir = str(repo.tasks_dir)
    opened = stamps.Folder(tasks_dir)
    try:
        for task_id in sorted(verify):
            folder, row = f"{tasks_dir}/{task_id}", old.get(task_id)
            if row is None and not os.path.lexists(folder):
                continue  # a new task's id (`new`)
            stamp = time.time_ns()
            key = opened.key(task_id)
            if row is None or stamps.folder_digest(folder) != row.folder_digest:
                return None
            rows[task_id] = dataclasses.replace(row, key=key, stamp=stamp)
    finally:
        opened.close()
    answer = _tasks(rows)
    _last[path] = rows, UNLISTED, head, answer
    _tokens[path] = token
    _unsaved[path] = (set(), False)
    return answer


def _changed_since(repo: Repository, was: Head | None, now: Head) -> set[str] | None:
    """The tasks whose rows HEAD changed between the commit the rows were settled against
    and now; None when that is not known (no commit, a rewritten history). A row is read
    from the envelope and the status files alone: a commit of evidence or of a message
    (`check`, `send`) changes none."""
    if was is None or was[1] is None or now[1] is None:
        return None
    return _changed_tasks(repo, was, now, within=_ROW_SOURCES)


def _changed_tasks(
    repo: Repository, was: Head | None, now: Head, *, within: Collection[str] | None = None
) -> set[str] | None:
    """The tasks whose folders differ between the commits of `was` and `now` (only in the
    entries `within` of a folder, when given); None when that cannot be told."""
    from taskfs.errors import TaskfsError

    if was is not None and was[1] == now[1]:
        return set()
    if was is None or was[1] is None or now[1] is None:
        return None
    try:
        paths = repo.git.changed_paths(was[1], now[1], repo.tasks_rel)
    except TaskfsError:
        return None  # the old commit is gone (a rewrite)
    prefix = repo.tasks_rel + "/"
    parts = [p[len(prefix) :].split("/") for p in paths if p.startswith(prefix)]
    return {part[0] for part in parts if within is None or len(part) < 2 or part[1] in within}


_ROW_SOURCES = frozenset({ENVELOPE, STATUS, INTAKE})


def _listed_folder(tasks_dir: str, rows: Mapping[str, CacheRow]) -> tuple[FileKey, int] | None:
    """The tasks folder's identity (and when it was taken), when a listing of it taken after
    names exactly the tasks of `rows`; None otherwise (a folder dropped in, one deleted)."""
    stamp = time.time_ns()
    key = stamps.file_key(tasks_dir)
    return (key, stamp) if stamps.task_ids(tasks_dir) == list(rows) else None


def _tasks(rows: Mapping[str, CacheRow]) -> dict[str, Summary]:
    return {task_id: row.summary for task_id, row in rows.items() if row.summary is not None}


def remember(repo: Repository, after: Summary) -> None:
    """A writer appended one transition to a task it read fresh from this cache: store the row
    the full reader would build for it now, so that the next listing need not read the task.
    Only what a transition changes is new; the envelope, its digest and overlaps stay."""
    path = cache_path(repo)
    # The writer read the rows a moment ago, under the same lock: no need to read them again.
    settled: Head | None
    token: bytes | None = None
    folder: tuple[FileKey, int] | None
    unsaved, removed = _unsaved.pop(path, (set(), False))
    if path in _last:
        last, listed, settled, tasks = _last[path]
        rows, tasks = dict(last), dict(tasks)
        token = _tokens.get(path)
        folder = _listed_folder(str(repo.tasks_dir), rows) if isinstance(listed, str) else listed
    else:
        rows, token = cache.read(path, repo.tasks_rel)
        tasks, settled = {}, cache.read_head(str(repo.git_dir), token)
        folder = _listed_folder(str(repo.tasks_dir), rows)
    row = rows.get(after.id)
    if row is None or row.summary is None:
        return
    task_folder = f"{repo.tasks_dir}/{after.id}"
    stamp = time.time_ns()
    opened = stamps.Folder(str(repo.tasks_dir))
    try:
        key = opened.key(after.id)
    finally:
        opened.close()
    names, _digest, status_digest = stamps.folder_digest(task_folder)
    summary = after._replace(overlaps=row.overlaps)
    rows[after.id] = dataclasses.replace(
        row,
        key=key,
        stamp=stamp,
        names=names,
        summary=summary,
        status_digest=status_digest,
        shown=prepared.shown_row(summary),
        loose=False,  # the writer found its folder clean, and committed what it added
    )
    if tasks:
        tasks[after.id] = summary
    # The writer's own commit moved HEAD, changing nothing but the files it verified: when it
    # was built on the commit the rows were settled against, they hold for the new one too.
    head = _after_own_commit(repo, settled)
    if not (
        tasks
        and token
        and not removed
        # A task's place in the listings changing is not a delta's to say.
        and (row.shown is None) == (rows[after.id].shown is None)
        and _remember_delta(
            repo,
            token,
            rows=rows,
            changed={after.id} | unsaved,
            head=head,
            tasks=tasks,
            folder=folder,
        )
    ):
        token = _store(repo, rows, folder, head, tasks or None)
    if tasks:
        _last[path] = rows, folder, head, tasks
        _tokens[path] = token


# The rows with new tasks added, the tasks folder's identity after, the rows whose overlaps
# changed, and the summaries.
Added = tuple[dict[str, CacheRow], "tuple[FileKey, int]", set[str], dict[str, Summary]]


def added_rows(repo: Repository, task_ids: Collection[str]) -> Added | None:
    """The rows the writer read, with the new tasks' rows (read by the full reader, as any
    new task's) added; None when the writer read none (the caller reads every task). Their
    files must be in place; their commit need not be made: `new` builds them while git
    commits (`Writer.commit`'s `meanwhile`)."""
    path = cache_path(repo)
    if path not in _last or not task_ids:
        return None
    rows = dict(_last[path][0])
    tasks_dir = str(repo.tasks_dir)
    stamp = time.time_ns()
    folder = (stamps.file_key(tasks_dir), stamp)
    opened = stamps.Folder(tasks_dir)
    try:
        for task_id in task_ids:
            stamp = time.time_ns()
            rows[task_id] = _build(
                repo, task_id, f"{tasks_dir}/{task_id}", opened.key(task_id), stamp
            )
    finally:
        opened.close()
    rows = dict(sorted(rows.items()))
    from taskfs.store import entry_places

    changed = overlaps.update(rows, set(task_ids), set(), entry_places.opened(path))
    return rows, folder, changed, _tasks(rows)


def remember_new(repo: Repository, task_ids: Collection[str], added: Added | None = None) -> None:
    """A writer committed new tasks after reading every row under the same lock (`new`): add
    their rows to the rows it read (`added`: `added_rows`' answer, when it was built during
    the commit), instead of reading and `stat`-ing every task again; the overlaps of the new
    envelopes are found as `summaries` finds them. The new rows, and those whose overlaps
    gained a new task, are stored as a delta with the tasks folder's new identity (an
    insertion), or everything is stored again when there are too many."""
    path = cache_path(repo)
    added = added or added_rows(repo, task_ids)
    if added is None:
        summaries(repo)
        return
    rows, folder, changed, tasks = added
    settled = _last[path][2]
    unsaved, removed = _unsaved.pop(path, (set(), False))
    head = _after_own_commit(repo, settled)
    token = _tokens.get(path)
    if not (
        token
        and not removed
        and _remember_delta(
            repo,
            token,
            rows=rows,
            changed=set(task_ids) | changed | unsaved,
            head=head,
            tasks=tasks,
            folder=folder,
        )
    ):
        token = _store(repo, rows, folder, head, tasks)
    _last[path] = rows, folder, head, tasks
    _tokens[path] = token


def _after_own_commit(repo: Repository, settled: Head | None) -> Head | None:
    """Where HEAD stands after the writer's own commit, when the rows were settled against
    the commit it was built on (its commit changed nothing but the files it verified)."""
    ours = repo.git.last_commit
    if settled is not None and ours is not None and ours[0] == settled[1]:
        return (stamps.head_identity(str(repo.git_dir)), ours[1])
    return settled


def _remember_delta(
    repo: Repository,
    token: bytes,
    *,
    rows: Mapping[str, CacheRow],
    changed: Collection[str],
    head: Head | None,
    tasks: Mapping[str, Summary],
    folder: tuple[FileKey, int] | None = None,
) -> bool:
    """Store the new rows of the tasks `changed` as a delta to the rows (and to the prepared
    answers) under `token`, instead of storing every row again (issue 19); `folder`, the tasks
    folder's new identity, when some of them are new. False when it cannot be (too many
    changes gathered): the caller stores all."""
    path = cache_path(repo)
    gathered = dict(cache.read_delta(path, token))
    if len(gathered.keys() | set(changed)) > DELTA_LIMIT:
        return False
    if repo.settings_identity is None:
        return False
    for task_id in changed:
        gathered[task_id] = cache.encode(rows[task_id])
    if folder is None:  # the writer did not list the tasks: the identity stored with them
        folder = prepared.delta_folder(prepared_path(repo), token)
    prepared.build_delta(
        prepared_path(repo), token, rows=rows, changed=gathered, tasks=tasks, folder=folder
    )
    cache.write_delta(path, token, gathered)
    cache.write_head(str(repo.git_dir), token, head)
    return True


def settle_moved_head(root: str, git_dir: str, token: bytes, tasks_rel: str) -> bool:
    """Whether HEAD moved, since the answers under `token` were stored, without changing the
    tasks folder (a commit of code): then they still hold, and `cache/head` says so from now
    on. One `git diff --quiet`. The fast path asks this (`taskfs.readmodel.prepared.answer`)."""
    from pathlib import Path

    from taskfs.store.git import Git

    stored = cache.read_head(git_dir, token)
    if stored is None or stored[1] is None:
        return False
    commit = stored[1]
    git = Git(Path(root))
    identity = stamps.head_identity(git_dir)
    now = git.head_guess()
    if now is None:
        return False
    if now != commit:
        proc = git.run_raw("diff", "--quiet", "--no-ext-diff", commit, now, "--", tasks_rel)
        if proc.returncode != 0:
            return False
    cache.write_head(git_dir, token, (identity, now))
    return True


def _head_now(repo: Repository, was: Head | None) -> Head:
    identity = stamps.head_identity(str(repo.git_dir))
    if was is not None and was[0] == identity:
        return was
    return identity, repo.git.head_guess()


def _moved(repo: Repository, was: Head | None, now: Head, rows: Mapping[str, CacheRow]) -> set[str]:
    """The tasks whose folders HEAD holds differently since the rows were settled (every
    task when that cannot be told: the old commit is gone, say)."""
    changed = _changed_tasks(repo, was, now)
    return set(rows) if changed is None else changed & set(rows)


def _settle_loose(repo: Repository, rows: dict[str, CacheRow], asked: set[str]) -> None:
    """Ask git about the tasks in `asked`; a loose task's row says what HEAD holds, and one
    that was loose and is no longer is read from its files again."""
    from taskfs.store import head_ledger

    if not asked:
        return
    found = head_ledger.loose(repo, asked)
    heads = head_ledger.at_head(repo, set(found))
    for task_id in asked:
        row = rows[task_id]
        if task_id in found:
            at_head = heads.get(task_id)
            summary = None if at_head is None else at_head._replace(overlaps=row.overlaps)
            rows[task_id] = dataclasses.replace(
                row, summary=summary, shown=prepared.shown_row(summary), loose=True
            )
        elif row.loose:
            folder = f"{repo.tasks_dir}/{task_id}"
            rebuilt = _build(repo, task_id, folder, row.key, row.stamp)
            overlaps.keep(rebuilt, row)
            rows[task_id] = rebuilt


def cache_path(repo: Repository) -> str:
    return cache.path(str(repo.git_dir))


def prepared_path(repo: Repository) -> str:
    return prepared.path(str(repo.git_dir))


def head_path(repo: Repository) -> str:
    return cache.head_path(str(repo.git_dir))


def _racy(row: CacheRow, margin: int) -> bool:
    return newest(row.key) >= row.stamp - margin


def _build(repo: Repository, task_id: str, folder: str, key: Key, stamp: int) -> CacheRow:
    from taskfs.store.intake_reader import project

    names, digest, status_digest = stamps.folder_digest(folder)
    summary = project(repo, task_id)
    return CacheRow(
        key,
        stamp,
        names,
        digest,
        summary,
        status_digest=status_digest,
        shown=prepared.shown_row(summary),
    )


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _store(
    repo: Repository,
    rows: Mapping[str, CacheRow],
    folder: tuple[FileKey, int] | None,
    head: Head | None,
    tasks: Mapping[str, Summary] | None = None,
) -> bytes:
    """Write the rows, and the prepared answers of `ls` and `ready` derived from them, under
    a new token (returned), and where HEAD stood (`cache.head_path`). Without the tasks
    folder's identity (`folder` None: the rows were not checked against a listing of it)
    no answers are prepared: the next listing reads the tasks."""
    token = os.urandom(8)
    path = cache_path(repo)
    cache.write(path, repo.tasks_rel, dict(rows), token)
    for stale in (cache.delta_path(path), prepared.delta_path(prepared_path(repo))):
        _remove(stale)  # deltas of the rows stored before: ignored by their token anyway
    if folder is None:
        _remove(prepared_path(repo))
    else:
        _prepare(repo, rows, folder, token, tasks)
    cache.write_head(str(repo.git_dir), token, head)
    return token


def _prepare(
    repo: Repository,
    rows: Mapping[str, CacheRow],
    folder: tuple[FileKey, int],
    token: bytes,
    tasks: Mapping[str, Summary] | None,
) -> None:
    from taskfs.core.lifecycle import LISTED_STATES
    from taskfs.core.shapes import SCHEMA_VERSION

    settings = repo.settings_identity
    if settings is None:
        return  # opened without knowing what the tasks folder was read from
    prepared.build(
        prepared_path(repo),
        rows=rows,
        tasks=_tasks(rows) if tasks is None else tasks,
        tasks_rel=repo.tasks_rel,
        settings=settings,
        folder=folder,
        states=LISTED_STATES,
        schema_version=SCHEMA_VERSION,
        token=token,
    )
