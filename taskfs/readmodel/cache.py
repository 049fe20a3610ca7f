"""The ledger cache file (`<git dir>/taskfs/cache/ledger-vN`): one row per task, keyed by its
files' identities, holding the task's projection (`taskfs.readmodel.projection.Summary`).

This module is the file's one serialisation: `CacheRow` (named fields) <-> the marshalled
plain values, the header that says which version wrote it, and the delta a writer stores beside
it for a few changed rows. What decides the rows, and writes them under the lock, is
`taskfs.store.index`. A file that is not what this version wrote is thrown away and rebuilt,
never trusted.
"""

from __future__ import annotations

import gc
import marshal
from dataclasses import dataclass
from typing import Any

from taskfs import __version__
from taskfs.readmodel import projection, stamps
from taskfs.readmodel.projection import Summary
from taskfs.readmodel.stamps import FolderDigest, Key

FORMAT = 9  # 9: intakes are rows (issue 26); 8: the facts carry the acceptance command
NAME = f"ledger-v{FORMAT}"
HEAD = "head"


@dataclass(slots=True)
class CacheRow:
    """A task's row: what it was derived from, and what the full reader said of it."""

    key: Key  # the identities of its envelope and status folder (`stamps.Folder.key`)
    stamp: int  # when the key was read (ns)
    names: tuple[str, ...]  # the status folder's YAML files
    digest: bytes  # of the envelope's bytes
    summary: Summary | None  # None: the task could not be read
    status_digest: bytes = b""  # of the status files' names and bytes
    shown: str | None = None  # its row in `ls` as JSON text; None: not listed
    loose: bool = False  # its folder held files HEAD does not: the row is HEAD's

    @property
    def folder_digest(self) -> FolderDigest:
        return self.names, self.digest, self.status_digest

    @property
    def overlaps(self) -> tuple[str, ...]:
        return () if self.summary is None else self.summary.overlaps


Encoded = tuple[Any, ...]


def encode(row: CacheRow) -> Encoded:
    summary = None if row.summary is None else projection.encode(row.summary, row.names)
    return (
        row.key,
        row.stamp,
        row.names,
        row.digest,
        summary,
        row.status_digest,
        row.shown,
        row.loose,
    )


def decode(task_id: str, fields: object) -> CacheRow:
    """The row `encode` stored for `task_id`; ValueError or TypeError when it is not one (a
    damaged file may still unmarshal)."""
    if type(fields) is not tuple or len(fields) != WIDTH:
        raise ValueError("not a cache row")
    key, stamp, names, digest, summary, status_digest, shown, loose = fields
    row = CacheRow(
        key,
        stamp,
        names,
        digest,
        None if summary is None else projection.decode(summary),
        status_digest,
        shown,
        loose,
    )
    if not (
        type(key) is tuple  # compared whole with a fresh key before anything reads it
        and type(stamp) is int
        and type(digest) is bytes
        and type(names) is tuple
        and type(status_digest) is bytes
        and (shown is None or type(shown) is str)
        and type(loose) is bool
        and (row.summary is None or row.summary.id == task_id)
    ):
        raise ValueError("not a cache row")
    return row


WIDTH = len(CacheRow.__dataclass_fields__)


def path(git_dir: str) -> str:
    return f"{stamps.cache_dir(git_dir)}/{NAME}"


def delta_path(path: str) -> str:
    return path + ".delta"


def head_path(git_dir: str) -> str:
    """Where HEAD stood when the rows were last settled, beside the token of the rows (and
    of the prepared answers) it belongs to: a small file, rewritten alone when HEAD moves
    without a task changing (a commit of code)."""
    return f"{stamps.cache_dir(git_dir)}/{HEAD}"


def header(tasks_rel: str) -> tuple[int, str, str]:
    return (FORMAT, __version__, tasks_rel)


def write(path: str, tasks_rel: str, rows: dict[str, CacheRow], token: bytes) -> None:
    data = (
        header(tasks_rel),
        {_id(task_id, row): encode(row) for task_id, row in rows.items()},
        token,
    )
    stamps.dump(path, data)


def _id(task_id: str, row: CacheRow) -> str:
    """The id as the row's summary holds it, when it is the same: stored once (`encode`)."""
    return row.summary.id if row.summary is not None and row.summary.id == task_id else task_id


def read(path: str, tasks_rel: str) -> tuple[dict[str, CacheRow], bytes | None]:
    """The rows stored at `path` (with the delta of their token applied: changed rows and
    added ones, in the order of the ids) and their token; nothing when the file is missing,
    damaged or another version's."""
    collecting = gc.isenabled()
    gc.disable()  # tens of thousands of new objects, none of them garbage: no collection
    try:
        # loads(read()): marshal.load() reads a file in small pieces, six times slower.
        with open(path, "rb") as handle:
            stored, rows, token = marshal.loads(handle.read())
        if stored != header(tasks_rel) or type(token) is not bytes or type(rows) is not dict:
            return {}, None
        changed = read_delta(path, token)
        out = {task_id: decode(task_id, fields) for task_id, fields in rows.items()}
        added = not out.keys() >= changed.keys()  # a writer added tasks (`new`)
        for task_id, fields in changed.items():
            out[task_id] = decode(task_id, fields)
        return (dict(sorted(out.items())) if added else out), token
    except Exception:  # a cache that cannot be read is rebuilt, never trusted
        return {}, None
    finally:
        if collecting:
            gc.enable()


def read_delta(path: str, token: bytes) -> dict[str, Encoded]:
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


def write_delta(path: str, token: bytes, changed: dict[str, Encoded]) -> None:
    stamps.dump(delta_path(path), (token, changed))


# Where HEAD is: the identity of git's files that say so, and the commit they named.
Head = tuple[tuple[stamps.FileKey, ...], "str | None"]


def read_head(git_dir: str, token: bytes | None) -> Head | None:
    """Where HEAD stood when the rows under `token` were settled; None when unknown."""
    try:
        with open(head_path(git_dir), "rb") as handle:
            stored, head = marshal.loads(handle.read())
        if token is not None and stored == token and type(head) is tuple and len(head) == 2:
            return head
    except Exception:  # unknown: every task is asked again, never trusted
        return None
    return None


def write_head(git_dir: str, token: bytes, head: Head | None) -> None:
    stamps.dump(head_path(git_dir), (token, head))  # None: unknown, every task is asked again
