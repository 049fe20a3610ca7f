"""A per-checkout cache of what every task's files say, so that whole-ledger commands stay fast.

`summaries(repo)` answers, for every task, what the rules and listings need (`Summary`): the
envelope's facts, the state, the holder, how many transitions were superseded, the problems
the full reader found. It is what `load_task` would say, computed by `load_task` itself for any
task whose files changed, and remembered in `<git dir>/taskfs/cache/ledger-v1` otherwise.

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
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import marshal
import os
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from taskfs import __version__
from taskfs.core import ids
from taskfs.core.facts import Facts

if TYPE_CHECKING:
    from taskfs.store.ledger import Task
    from taskfs.store.repository import Repository

FORMAT = 3
RACY_MARGIN_NS = 2_000_000_000  # coarser than any file system's timestamps we know of


def _racy_margin() -> int:
    # Settable for file systems with coarser timestamps (and for tests, which need not wait).
    configured = os.environ.get("TASKFS_RACY_MARGIN_MS")
    return int(configured) * 1_000_000 if configured and configured.isdigit() else RACY_MARGIN_NS


ENVELOPE = "envelope.yaml"
STATUS = "status"

# The identities of `envelope.yaml` and `status/`, as text (it loads faster than tuples of ints).
Key = str


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


# The rows this process last read or wrote, by cache file: a writer that read them under the
# lock updates them without reading the file again.
_last: dict[str, Mapping[str, _Row]] = {}


@dataclass
class _Row:
    key: Key
    stamp: int  # when the key was read (ns)
    names: tuple[str, ...]  # the status folder's YAML files
    digest: bytes  # of the envelope's bytes
    summary: tuple[Any, ...] | None  # None: the task could not be read
    overlaps: tuple[str, ...] = ()
    status_digest: bytes = b""  # of the status files' names and bytes


def summaries(repo: Repository, *, verify: Collection[str] = ()) -> dict[str, Summary]:
    """Every readable task by id, as `load_task` would read it (see the module docstring).

    The tasks named in `verify` are checked against every byte of their files, not only the
    identities of two: a writer about to append to a task uses this, so that even a status
    file rewritten in place (which the key cannot see) is never built upon."""
    path = cache_path(repo)
    old = _read(path, repo.tasks_rel)
    rows: dict[str, _Row] = {}
    margin = _racy_margin()
    rebuilt: set[str] = set()  # tasks whose envelope may have changed
    base = str(repo.tasks_dir) + "/"
    for task_id in _task_ids(repo):
        folder = base + task_id
        row = old.get(task_id)
        stamp = time.time_ns()
        key = _key(folder)
        checked = task_id in verify
        if row is not None and row.key == key and not _racy(row, margin) and not checked:
            rows[task_id] = row
        elif row is not None and _same_files(folder, row):
            rows[task_id] = dataclasses.replace(row, key=key, stamp=stamp)
        else:
            built = _build(repo, task_id, folder, key, stamp)
            if row is None or row.digest != built.digest or row.summary is None:
                rebuilt.add(task_id)
            else:
                built.overlaps = row.overlaps  # the same envelope overlaps the same tasks
            rows[task_id] = built
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
    if not verify and (rows != old or not os.path.exists(listing_path(repo))):
        _store(repo, rows)
    _last[path] = rows
    return answer


def remember(repo: Repository, after: Summary) -> None:
    """A writer appended one transition to a task it read fresh from this cache: store the row
    the full reader would build for it now, so that the next listing need not read the task.
    Only what a transition changes is new; the envelope, its digest and overlaps stay."""
    path = cache_path(repo)
    # The writer read the rows a moment ago, under the same lock: no need to read them again.
    rows = dict(_last[path]) if path in _last else _read(path, repo.tasks_rel)
    row = rows.get(after.id)
    if row is None or row.summary is None:
        return
    folder = f"{repo.tasks_dir}/{after.id}"
    stamp = time.time_ns()
    names = _listing(folder)
    rows[after.id] = dataclasses.replace(
        row,
        key=_key(folder),
        stamp=stamp,
        names=names,
        summary=after.to_row(),
        status_digest=_status_digest(folder, names),
    )
    _store(repo, rows)
    _last[path] = rows


def _update_overlaps(rows: dict[str, _Row], rebuilt: set[str], gone: set[str]) -> None:
    """Keep every row's `overlaps` right after the envelopes in `rebuilt` changed and the tasks
    in `gone` went away: only the changed envelopes are queried, against all the others.
    Overlap is decided on the two envelopes' entries alone, whatever the tasks' states."""
    from taskfs.core import globs

    stale = rebuilt | gone
    index: globs.OwnershipIndex[str] = globs.OwnershipIndex()
    for task_id, row in rows.items():
        if row.summary is not None:
            for raw in row.summary[1][6]:  # the facts' filesAndInterfaces
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


def listing_path(repo: Repository) -> str:
    return os.path.join(repo.state_dir(), "cache", f"listing-v{FORMAT}")


# What `ls` needs of a task, beside its key: (state, to, contextID, its row as JSON text).
Listed = tuple[str, str | None, str, str]


def listed(repo: Repository) -> list[Listed] | None:
    """Every listed task's row, straight from the listing file the last reader or writer of
    the cache left, checked by the same two `stat` calls per task; None when anything changed
    (the caller then asks `summaries`, which brings the file up to date)."""
    try:
        with open(listing_path(repo), "rb") as handle:
            header, rows = marshal.loads(handle.read())
        task_ids = _task_ids(repo)
        if header != (FORMAT, __version__, repo.tasks_rel) or len(task_ids) != len(rows):
            return None
        base = f"{repo.tasks_dir}/"
        margin = _racy_margin()
        out: list[Listed] = []
        for task_id in task_ids:
            key, stamp, shown = rows[task_id]
            if key != _key(base + task_id) or int(key.split(" ", 1)[0]) >= stamp - margin:
                return None
            if shown is not None:
                out.append(shown)
        return out
    except Exception:  # a listing that cannot be read is rebuilt, never trusted
        return None


def _task_ids(repo: Repository) -> list[str]:
    try:
        entries = list(os.scandir(repo.tasks_dir))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(e.name for e in entries if e.is_dir() and ids.is_task_id(e.name))


def _key(folder: str) -> Key:
    """`<newest time> <envelope: ino size mtime ctime> <status/: ino mtime ctime>`."""
    try:
        env = os.stat(folder + "/" + ENVELOPE)
    except OSError:
        return "0 - -"
    try:
        status = os.stat(folder + "/" + STATUS)
    except OSError:
        newest = max(env.st_mtime_ns, env.st_ctime_ns)
        return f"{newest} {env.st_ino}:{env.st_size}:{env.st_mtime_ns}:{env.st_ctime_ns} -"
    newest = max(env.st_mtime_ns, env.st_ctime_ns, status.st_mtime_ns, status.st_ctime_ns)
    return (
        f"{newest} {env.st_ino}:{env.st_size}:{env.st_mtime_ns}:{env.st_ctime_ns} "
        f"{status.st_ino}:{status.st_mtime_ns}:{status.st_ctime_ns}"
    )


def _racy(row: _Row, margin: int = RACY_MARGIN_NS) -> bool:
    newest = int(row.key.split(" ", 1)[0])
    return newest >= row.stamp - margin


def _listing(folder: str) -> tuple[str, ...]:
    try:
        names = os.listdir(os.path.join(folder, STATUS))
    except OSError:
        return ()
    return tuple(sorted(n for n in names if n.endswith(".yaml") and not n.startswith(".")))


def _digest(folder: str) -> bytes:
    try:
        with open(os.path.join(folder, ENVELOPE), "rb") as handle:
            return hashlib.sha1(handle.read(), usedforsecurity=False).digest()
    except OSError:
        return b""


def _status_digest(folder: str, names: tuple[str, ...]) -> bytes:
    digest = hashlib.sha1(usedforsecurity=False)
    for name in names:
        digest.update(name.encode() + b"\0")
        try:
            with open(f"{folder}/{STATUS}/{name}", "rb") as handle:
                digest.update(handle.read())
        except OSError:
            digest.update(b"\1unreadable")
        digest.update(b"\0")
    return digest.digest()


def _same_files(folder: str, row: _Row) -> bool:
    names = _listing(folder)
    return (
        names == row.names
        and _digest(folder) == row.digest
        and _status_digest(folder, names) == row.status_digest
    )


def _build(repo: Repository, task_id: str, folder: str, key: Key, stamp: int) -> _Row:
    from taskfs.errors import TaskfsError
    from taskfs.store.ledger import load_task

    names, digest = _listing(folder), _digest(folder)
    status_digest = _status_digest(folder, names)
    try:
        summary: tuple[Any, ...] | None = Summary.of(load_task(repo, task_id)).to_row()
    except TaskfsError:
        summary = None
    return _Row(key, stamp, names, digest, summary, status_digest=status_digest)


def _read(path: str, tasks_rel: str) -> dict[str, _Row]:
    try:
        # loads(read()): marshal.load() reads a file in small pieces, six times slower.
        with open(path, "rb") as handle:
            data = marshal.loads(handle.read())
        header, rows = data
        if header != (FORMAT, __version__, tasks_rel):
            return {}
        out = {task_id: _Row(*fields) for task_id, fields in rows.items()}
        if all(_well_formed(task_id, row) for task_id, row in out.items()):
            return out
    except Exception:  # a cache that cannot be read is rebuilt, never trusted
        return {}
    return {}


def _well_formed(task_id: object, row: _Row) -> bool:
    """Whether a row has the shape this version writes (a damaged file may still unmarshal;
    what these checks leave out fails in `Summary.from_row`, which `summaries` guards)."""
    summary = row.summary
    return (
        type(row.key) is str
        and type(row.stamp) is int
        and type(row.digest) is bytes
        and type(row.names) is tuple
        and type(row.overlaps) is tuple
        and type(row.status_digest) is bytes
        and (summary is None or (type(summary) is tuple and summary[0] == task_id))
    )


def _write_listing(repo: Repository, rows: Mapping[str, _Row]) -> None:
    import json

    listing: dict[str, tuple[str, int, Listed | None]] = {}
    for task_id, row in rows.items():
        shown: Listed | None = None
        if row.summary is not None:
            summary = Summary.from_row(row.summary, row.overlaps)
            if summary.length:  # an envelope that no intake has taken yet is not listed
                text = json.dumps(summary.row(), ensure_ascii=False)
                env = summary.envelope
                shown = (summary.state, env.recipient, env.context_id, text)
        listing[task_id] = (row.key, row.stamp, shown)
    _dump(listing_path(repo), ((FORMAT, __version__, repo.tasks_rel), listing))


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _store(repo: Repository, rows: Mapping[str, _Row]) -> None:
    """Write the rows, and the listing derived from them."""
    data = (
        (FORMAT, __version__, repo.tasks_rel),
        {
            task_id: (
                row.key,
                row.stamp,
                row.names,
                row.digest,
                row.summary,
                row.overlaps,
                row.status_digest,
            )
            for task_id, row in rows.items()
        },
    )
    _dump(cache_path(repo), data)
    _write_listing(repo, rows)


def _dump(path: str, data: Any) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    # A cache that cannot be written (a read-only checkout) only costs speed.
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as handle:
            handle.write(marshal.dumps(data))
        os.replace(tmp, path)
    with contextlib.suppress(OSError):
        os.unlink(tmp)
