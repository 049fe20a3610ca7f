"""A per-checkout cache of what every task's files say, so that whole-ledger commands stay fast.

`summaries(repo)` answers, for every task, what the rules and listings need (`Summary`): the
envelope's facts, the state, the holder, how many transitions were superseded, the problems
the full reader found. It is what `load_task` would say, computed by `load_task` itself for any
task whose files changed, and remembered in `<git dir>/taskfs/cache/ledger-v6` otherwise.
Whenever it is written, the answers of `ls --json` and `ready --json` are prepared beside it
(`taskfs.store.prepared`, which also holds the identities both files are keyed by).

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

Decisions rest on committed files only (`taskfs.store.loose`): whenever rows are built, git
is asked whether the tasks' folders hold files that HEAD does not (one call scoped to those
folders), and such a task's row says what HEAD holds instead (`loose`). Whether a file is what
HEAD holds can also change without the file changing, when HEAD moves (a commit, a reset): the
cache remembers the commit its rows were settled against and the identity of git's files that
say where HEAD is (`prepared.head_identity`); when those change, the task folders that differ
between the two commits are asked again. The prepared answers carry the same identity.
"""

from __future__ import annotations

import contextlib
import dataclasses
import marshal
import os
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from taskfs import __version__
from taskfs.core.facts import Facts
from taskfs.store import prepared
from taskfs.store.prepared import FileKey, Key, newest

if TYPE_CHECKING:
    from taskfs.store.entry_places import Places
    from taskfs.store.ledger import Task
    from taskfs.store.repository import Repository

FORMAT = 6


class Summary(NamedTuple):
    """A task as the rules and listings see it (the same attribute names as `Task`). A tuple
    for speed: the listings build one per task on every call."""

    id: str
    envelope: Facts
    state: str
    holder: str | None
    superseded: int
    problems: tuple[str, ...]  # codes of what is wrong with its files
    head: str | None  # the status file the next transition follows
    head_by: str | None  # who made the transition into the current state
    length: int  # status files in its history
    overlaps: tuple[str, ...] = ()  # tasks (any state) owning an entry that overlaps one of its

    @classmethod
    def of(cls, task: Task) -> Summary:
        return cls(
            task.id,
            Facts.of(task.envelope),
            task.state,
            task.chain.holder,
            len(task.chain.superseded),
            tuple(p.code for p in task.problems),
            task.chain.head.name if task.chain.head else None,
            task.chain.head.record.by if task.chain.head else None,
            len(task.chain.links),
        )

    def row(self) -> dict[str, Any]:
        """Its row in `ls` and `ready` (contract section 4)."""
        env = self.envelope
        return {
            "id": self.id,
            "state": self.state,
            "from": env.sender,
            "to": env.recipient,
            "contextID": env.context_id,
            "holder": self.holder,
            "superseded": self.superseded,
        }

    def to_row(self) -> tuple[Any, ...]:
        facts = self.envelope
        return (
            self.id,
            (
                facts.id,
                facts.sender,
                facts.recipient,
                facts.context_id,
                facts.depends_on,
                facts.parent,
                facts.files_and_interfaces,
                facts.tools_allowed,
            ),
            self.state,
            self.holder,
            self.superseded,
            self.problems,
            self.head,
            self.head_by,
            self.length,
        )

    @classmethod
    def from_row(cls, row: tuple[Any, ...], overlaps: tuple[str, ...] = ()) -> Summary:
        task_id, facts, state, holder, superseded, problems, head, head_by, length = row
        return cls(
            task_id,
            Facts(*facts),
            state,
            holder,
            superseded,
            problems,
            head,
            head_by,
            length,
            overlaps,
        )


# The rows this process last read or wrote, by cache file, with the tasks folder's identity
# when they were listed: a writer that read them under the lock updates them without reading
# the file again.
Head = tuple[tuple[FileKey, ...], "str | None"]  # where HEAD is (identity of git's files), commit
_Last = tuple[Mapping[str, "_Row"], tuple[FileKey, int], "Head | None", dict[str, Summary]]
_last: dict[str, _Last] = {}
_tokens: dict[str, bytes | None] = {}  # the token of the rows in `_last`, by cache file
# A writer's change to a few tasks is stored as a small delta beside the rows and the
# prepared answers (`_remember_delta`), named by their token; past this many tasks the
# whole files are stored again.
DELTA_LIMIT = 64


@dataclass
class _Row:
    key: Key
    stamp: int  # when the key was read (ns)
    names: tuple[str, ...]  # the status folder's YAML files
    digest: bytes  # of the envelope's bytes
    summary: tuple[Any, ...] | None  # None: the task could not be read
    overlaps: tuple[str, ...] = ()
    status_digest: bytes = b""  # of the status files' names and bytes
    shown: str | None = None  # its row in `ls` as JSON text; None: not listed
    loose: bool = False  # its folder held files HEAD does not: the row is HEAD's

    @property
    def fingerprint(self) -> prepared.Fingerprint:
        return self.names, self.digest, self.status_digest


def summaries(repo: Repository, *, verify: Collection[str] = ()) -> dict[str, Summary]:
    """Every readable task by id, as `load_task` would read it (see the module docstring).

    The tasks named in `verify` are checked against every byte of their files, not only the
    identities of two: a writer about to append to a task uses this, so that even a status
    file rewritten in place (which the key cannot see) is never built upon."""
    path = cache_path(repo)
    old, token = _read(path, repo.tasks_rel)
    head_was = _read_head(repo, token)
    rows: dict[str, _Row] = {}
    margin = prepared.racy_margin()
    rebuilt: set[str] = set()  # tasks whose envelope may have changed
    fresh: set[str] = set()  # tasks whose rows were built from their files now
    tasks_dir = str(repo.tasks_dir)
    stamp = time.time_ns()
    folder = (prepared.file_key(tasks_dir), stamp)
    opened = prepared.Folder(tasks_dir)
    try:
        for task_id in prepared.task_ids(tasks_dir):
            row = old.get(task_id)
            stamp = time.time_ns()
            key = opened.key(task_id)
            checked = task_id in verify
            if row is not None and row.key == key and not _racy(row, margin) and not checked:
                rows[task_id] = row
                continue
            task_folder = f"{tasks_dir}/{task_id}"
            if row is not None and prepared.fingerprint(task_folder) == row.fingerprint:
                rows[task_id] = dataclasses.replace(row, key=key, stamp=stamp)
                continue
            built = _build(repo, task_id, task_folder, key, stamp)
            if row is None or row.digest != built.digest or row.summary is None:
                rebuilt.add(task_id)
            else:
                built.overlaps = row.overlaps  # the same envelope overlaps the same tasks
            rows[task_id] = built
            if not checked:  # a writer asks git about the task it writes to itself
                fresh.add(task_id)
    finally:
        opened.close()
    head = _head_now(repo, head_was)
    _settle_loose(repo, rows, fresh | _moved(repo, head_was, head, rows))
    gone = set(old) - set(rows)
    if rebuilt or gone:
        _update_overlaps(rows, rebuilt, gone)
    try:
        answer = {
            task_id: Summary.from_row(row.summary, row.overlaps)
            for task_id, row in rows.items()
            if row.summary is not None
        }
    except (TypeError, ValueError):
        # A damaged cache that still had the right outline: start again without it.
        _remove(path)
        return summaries(repo)
    # A writer (`verify`) stores the rows once, with its own change (`remember`).
    if not verify and (rows != old or not os.path.exists(prepared_path(repo))):
        token = _store(repo, rows, folder, head, answer)
    elif not verify and head != head_was and token is not None:
        # HEAD moved and no task changed: the rows and the prepared answers still hold.
        prepared.dump(head_path(repo), (token, head))
    _last[path] = rows, folder, head, answer
    _tokens[path] = token
    return answer


def remember(repo: Repository, after: Summary) -> None:
    """A writer appended one transition to a task it read fresh from this cache: store the row
    the full reader would build for it now, so that the next listing need not read the task.
    Only what a transition changes is new; the envelope, its digest and overlaps stay."""
    path = cache_path(repo)
    # The writer read the rows a moment ago, under the same lock: no need to read them again.
    settled: Head | None
    token: bytes | None = None
    if path in _last:
        last, folder, settled, tasks = _last[path]
        rows, tasks = dict(last), dict(tasks)
        token = _tokens.get(path)
    else:
        stamp = time.time_ns()  # before the `stat`, as ages are measured (prepared.py)
        folder = (prepared.file_key(str(repo.tasks_dir)), stamp)
        rows, token = _read(path, repo.tasks_rel)
        tasks, settled = {}, _read_head(repo, token)
    row = rows.get(after.id)
    if row is None or row.summary is None:
        return
    task_folder = f"{repo.tasks_dir}/{after.id}"
    stamp = time.time_ns()
    opened = prepared.Folder(str(repo.tasks_dir))
    try:
        key = opened.key(after.id)
    finally:
        opened.close()
    names, _digest, status_digest = prepared.fingerprint(task_folder)
    summary = after.to_row()
    rows[after.id] = dataclasses.replace(
        row,
        key=key,
        stamp=stamp,
        names=names,
        summary=summary,
        status_digest=status_digest,
        shown=_shown(summary),
        loose=False,  # the writer found its folder clean, and committed what it added
    )
    if tasks:
        tasks[after.id] = Summary.from_row(summary, row.overlaps)
    # The writer's own commit moved HEAD, changing nothing but the files it verified: when it
    # was built on the commit the rows were settled against, they hold for the new one too.
    head = settled
    ours = repo.git.last_commit
    if settled is not None and ours is not None and ours[0] == settled[1]:
        head = (prepared.head_identity(str(repo.git_dir)), ours[1])
    if not (
        tasks
        and token
        and _remember_delta(
            repo, token, rows=rows, task_id=after.id, was=row, head=head, tasks=tasks
        )
    ):
        token = _store(repo, rows, folder, head, tasks or None)
    if tasks:
        _last[path] = rows, folder, head, tasks
        _tokens[path] = token


def remember_new(repo: Repository, task_ids: Collection[str]) -> None:
    """A writer committed new tasks after reading every row under the same lock (`new`): add
    their rows (read by the full reader, as any new task's) to the rows it read, instead of
    reading and `stat`-ing every task again; the overlaps of the new envelopes are found as
    `summaries` finds them, and everything is stored (the listings gained tasks)."""
    path = cache_path(repo)
    if path not in _last or not task_ids:
        summaries(repo)
        return
    last, _folder, settled, tasks = _last[path]
    rows, tasks = dict(last), dict(tasks)
    tasks_dir = str(repo.tasks_dir)
    stamp = time.time_ns()
    folder = (prepared.file_key(tasks_dir), stamp)
    opened = prepared.Folder(tasks_dir)
    try:
        for task_id in task_ids:
            stamp = time.time_ns()
            rows[task_id] = _build(
                repo, task_id, f"{tasks_dir}/{task_id}", opened.key(task_id), stamp
            )
    finally:
        opened.close()
    rows = dict(sorted(rows.items()))
    from taskfs.store.entry_places import Places

    _update_overlaps(rows, set(task_ids), set(), Places(path))
    tasks = {
        task_id: Summary.from_row(row.summary, row.overlaps)
        for task_id, row in rows.items()
        if row.summary is not None
    }
    head = settled
    ours = repo.git.last_commit
    if settled is not None and ours is not None and ours[0] == settled[1]:
        head = (prepared.head_identity(str(repo.git_dir)), ours[1])
    token = _store(repo, rows, folder, head, tasks)
    _last[path] = rows, folder, head, tasks
    _tokens[path] = token


def delta_path(path: str) -> str:
    return path + ".delta"


def _read_delta(path: str, token: bytes) -> dict[str, tuple[Any, ...]]:
    """The rows a writer changed since the rows under `token` were stored (none when the
    delta belongs to other rows, or cannot be read)."""
    try:
        with open(delta_path(path), "rb") as handle:
            stored, changed = marshal.loads(handle.read())
        if stored == token and type(changed) is dict:
            return changed
    except Exception:  # unknown: the rows alone are read, and checked as ever
        return {}
    return {}


def _remember_delta(
    repo: Repository,
    token: bytes,
    *,
    rows: Mapping[str, _Row],
    task_id: str,
    was: _Row,
    head: Head | None,
    tasks: Mapping[str, Summary],
) -> bool:
    """Store one task's new row as a delta to the rows (and to the prepared answers) under
    `token`, instead of storing every row again (issue 19). False when it cannot be (too many
    changes gathered, or the task's place in the listings changed): the caller stores all."""
    from taskfs.core.readiness import claimable

    path = cache_path(repo)
    changed = dict(_read_delta(path, token))
    row = rows[task_id]
    if len(changed) >= DELTA_LIMIT or (row.shown is None) != (was.shown is None):
        return False
    if repo.settings_identity is None:
        return False
    changed[task_id] = _fields(row)
    ready_ids = {task.id: task.envelope.recipient for task in claimable(tasks)}
    ready = [(ready_ids[t], rows[t].shown) for t in rows if t in ready_ids and rows[t].shown]
    listed: dict[str, Any] = {}
    for changed_id in changed:
        one, task = rows[changed_id], tasks.get(changed_id)
        shown = None
        if task is not None and one.shown is not None:
            shown = (task.state, task.envelope.recipient, task.envelope.context_id, one.shown)
        age = one.stamp - newest(one.key)
        listed[changed_id] = (one.key, age, one.fingerprint, shown)
    prepared.dump(delta_path(prepared_path(repo)), (token, listed, ready))
    prepared.dump(delta_path(path), (token, changed))
    prepared.dump(head_path(repo), (token, head))
    return True


def _fields(row: _Row) -> tuple[Any, ...]:
    return (
        row.key,
        row.stamp,
        row.names,
        row.digest,
        row.summary,
        row.overlaps,
        row.status_digest,
        row.shown,
        row.loose,
    )


def _head_now(repo: Repository, was: Head | None) -> Head:
    identity = prepared.head_identity(str(repo.git_dir))
    if was is not None and was[0] == identity:
        return was
    return identity, repo.git.head_guess()


def _moved(repo: Repository, was: Head | None, now: Head, rows: Mapping[str, _Row]) -> set[str]:
    """The tasks whose folders HEAD holds differently since the rows were settled."""
    from taskfs.errors import TaskfsError

    if was is not None and was[1] == now[1]:
        return set()
    if was is None or was[1] is None or now[1] is None:
        return set(rows)
    try:
        changed = repo.git.changed_paths(was[1], now[1], repo.tasks_rel)
    except TaskfsError:
        return set(rows)  # the old commit is gone (a rewrite): ask about every task
    prefix = repo.tasks_rel + "/"
    return {p[len(prefix) :].split("/")[0] for p in changed if p.startswith(prefix)} & set(rows)


def _settle_loose(repo: Repository, rows: dict[str, _Row], asked: set[str]) -> None:
    """Ask git about the tasks in `asked`; a loose task's row says what HEAD holds, and one
    that was loose and is no longer is read from its files again."""
    from taskfs.store import loose

    if not asked:
        return
    found = loose.loose(repo, asked)
    heads = loose.at_head(repo, set(found))
    for task_id in asked:
        row = rows[task_id]
        if task_id in found:
            at_head = heads.get(task_id)
            summary = None if at_head is None else at_head._replace(overlaps=()).to_row()
            rows[task_id] = dataclasses.replace(
                row, summary=summary, shown=_shown(summary), loose=True
            )
        elif row.loose:
            folder = f"{repo.tasks_dir}/{task_id}"
            rebuilt = _build(repo, task_id, folder, row.key, row.stamp)
            rebuilt.overlaps = row.overlaps
            rows[task_id] = rebuilt


def _update_overlaps(
    rows: dict[str, _Row], rebuilt: set[str], gone: set[str], places: Places | None = None
) -> None:
    """Keep every row's `overlaps` right after the envelopes in `rebuilt` changed and the tasks
    in `gone` went away: only the changed envelopes are queried, against all the others.
    Overlap is decided on the two envelopes' entries alone, whatever the tasks' states."""
    from taskfs.core import globs

    stale = rebuilt | gone
    entries = [
        (task_id, raw)
        for task_id, row in rows.items()
        if row.summary is not None
        for raw in row.summary[1][6]  # the facts' filesAndInterfaces
    ]
    queries = [raw for t in rebuilt if (s := rows[t].summary) is not None for raw in s[1][6]]
    index: globs.OwnershipIndex[str] = globs.OwnershipIndex()
    if places is not None and len(rebuilt) <= DELTA_LIMIT:  # only the entries near the queries
        entries = places.nearby(entries, queries)
        places.save()
    for task_id, raw in entries:
        index.add(task_id, raw)
    found: dict[str, set[str]] = {task_id: set() for task_id in rebuilt}
    for task_id in rebuilt:
        summary = rows[task_id].summary
        for raw in summary[1][6] if summary is not None else ():
            for other, _entry, _witness in index.conflicts(globs.parse_entry(raw)):
                if other != task_id:
                    found[task_id].add(other)
                    found.setdefault(other, set()).add(task_id)
    for task_id, row in rows.items():
        kept = {o for o in row.overlaps if o not in stale} if task_id not in rebuilt else set()
        row.overlaps = tuple(sorted(kept | found.get(task_id, set())))


def cache_path(repo: Repository) -> str:
    return os.path.join(repo.state_dir(), "cache", f"ledger-v{FORMAT}")


def prepared_path(repo: Repository) -> str:
    return os.path.join(repo.state_dir(), "cache", prepared.NAME)


def _racy(row: _Row, margin: int) -> bool:
    return newest(row.key) >= row.stamp - margin


def _build(repo: Repository, task_id: str, folder: str, key: Key, stamp: int) -> _Row:
    from taskfs.errors import TaskfsError
    from taskfs.store.ledger import load_task

    names, digest, status_digest = prepared.fingerprint(folder)
    try:
        summary: tuple[Any, ...] | None = Summary.of(load_task(repo, task_id)).to_row()
    except TaskfsError:
        summary = None
    return _Row(
        key, stamp, names, digest, summary, status_digest=status_digest, shown=_shown(summary)
    )


def _shown(summary: tuple[Any, ...] | None) -> str | None:
    """A task's row in `ls` and `ready` as JSON text, rendered once per change of its files."""
    if summary is None:
        return None
    task = Summary.from_row(summary)
    if not task.length:  # an envelope that no intake has taken yet is not listed
        return None
    import json

    return json.dumps(task.row(), ensure_ascii=False)


def head_path(repo: Repository) -> str:
    """Where HEAD stood when the rows were last settled, beside the token of the rows (and
    of the prepared answers) it belongs to: a small file, rewritten alone when HEAD moves
    without a task changing (a commit of code)."""
    return os.path.join(repo.state_dir(), "cache", "head")


def _read_head(repo: Repository, token: bytes | None) -> Head | None:
    try:
        with open(head_path(repo), "rb") as handle:
            stored, head = marshal.loads(handle.read())
        if token is not None and stored == token and type(head) is tuple and len(head) == 2:
            return head
    except Exception:  # unknown: every task is asked again, never trusted
        return None
    return None


def _read(path: str, tasks_rel: str) -> tuple[dict[str, _Row], bytes | None]:
    try:
        # loads(read()): marshal.load() reads a file in small pieces, six times slower.
        with open(path, "rb") as handle:
            data = marshal.loads(handle.read())
        header, rows, token = data
        if header != (FORMAT, __version__, tasks_rel):
            return {}, None
        width = len(dataclasses.fields(_Row))
        if not all(type(fields) is tuple and len(fields) == width for fields in rows.values()):
            return {}, None
        if type(token) is bytes:
            changed = _read_delta(path, token)
            if all(type(f) is tuple and len(f) == width for f in changed.values()):
                rows = {**rows, **{t: f for t, f in changed.items() if t in rows}}
        out = {task_id: _Row(*fields) for task_id, fields in rows.items()}
        if type(token) is bytes and all(_well_formed(t, row) for t, row in out.items()):
            return out, token
    except Exception:  # a cache that cannot be read is rebuilt, never trusted
        return {}, None
    return {}, None


def _well_formed(task_id: object, row: _Row) -> bool:
    """Whether a row has the shape this version writes (a damaged file may still unmarshal;
    what these checks leave out fails in `Summary.from_row`, which `summaries` guards)."""
    summary = row.summary
    return (
        type(row.key) is tuple  # compared whole with a fresh key before anything reads it
        and type(row.stamp) is int
        and type(row.digest) is bytes
        and type(row.names) is tuple
        and type(row.overlaps) is tuple
        and type(row.status_digest) is bytes
        and (row.shown is None or type(row.shown) is str)
        and type(row.loose) is bool
        and (summary is None or (type(summary) is tuple and summary[0] == task_id))
    )


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _store(
    repo: Repository,
    rows: Mapping[str, _Row],
    folder: tuple[FileKey, int],
    head: Head | None,
    tasks: Mapping[str, Summary] | None = None,
) -> bytes:
    """Write the rows, and the prepared answers of `ls` and `ready` derived from them, under
    a new token (returned), and where HEAD stood (`head_path`)."""
    token = os.urandom(8)
    data = (
        (FORMAT, __version__, repo.tasks_rel),
        {task_id: _fields(row) for task_id, row in rows.items()},
        token,
    )
    prepared.dump(cache_path(repo), data)
    for stale in (delta_path(cache_path(repo)), delta_path(prepared_path(repo))):
        _remove(stale)  # deltas of the rows stored before: ignored by their token anyway
    _prepare(repo, rows, folder, token, tasks)
    prepared.dump(head_path(repo), (token, head))  # None: unknown, every task is asked again
    return token


def _prepare(
    repo: Repository,
    rows: Mapping[str, _Row],
    folder: tuple[FileKey, int],
    token: bytes,
    tasks: Mapping[str, Summary] | None,
) -> None:
    from taskfs.api.views import SCHEMA_VERSION
    from taskfs.core.lifecycle import STATES
    from taskfs.core.readiness import claimable

    settings = repo.settings_identity
    if settings is None:
        return  # opened without knowing what the tasks folder was read from
    if tasks is None:
        tasks = {
            task_id: Summary.from_row(row.summary, row.overlaps)
            for task_id, row in rows.items()
            if row.summary is not None
        }
    ready = {task.id: task.envelope.recipient for task in claimable(tasks)}
    out: list[prepared.Row] = []
    for task_id, row in rows.items():
        key, task, listed = row.key, tasks.get(task_id), None
        if task is not None and row.shown is not None:
            listed = (task.state, task.envelope.recipient, task.envelope.context_id, row.shown)
        age = row.stamp - max(key[2], key[3], key[5], key[6])  # prepared.newest, inlined
        out.append((key, age, row.fingerprint, listed, ready.get(task_id, False)))
    prepared.write(
        prepared_path(repo),
        token=token,
        tasks_rel=repo.tasks_rel,
        settings=settings,
        folder=(folder[0], folder[1] - newest(folder[0])),
        ids=list(rows),
        rows=out,
        states=STATES,
        schema_version=SCHEMA_VERSION,
    )
