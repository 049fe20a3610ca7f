"""What the completion gate read of a task's evidence files, kept per task
(`<git dir>/taskfs/cache/gate/<task id>`), so that `complete` decides without reading the
evidence models again (pydantic, YAML: most of its time).

One entry per evidence file: the SHA-256 of the file's bytes, the identity of the runner trust
it was judged under, its `GateFacts` and its signature's standing. An entry counts only for a
file whose bytes hash the same now and a trust that is the same now, so nothing is trusted on a
file's name, time or size; a file that could not be read is kept as such (no facts), so that it
is not read again either. The cache is an optimisation only: deleting it changes no decision,
and a file that is not what this version wrote is ignored.
"""

from __future__ import annotations

import marshal

from taskfs.readmodel.stamps import cache_dir, dump

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT = 1
# name -> (bytes' sha256, trust identity, GateFacts fields or None, signature standing or None)
Entry = tuple[bytes, "Any", "tuple[Any, ...] | None", "str | None"]


def path(git_dir: str, task_id: str) -> str:
    return f"{cache_dir(git_dir)}/gate/{task_id}"


def read(git_dir: str, task_id: str) -> dict[str, Entry]:
    """The stored entries of the task's evidence files by name ({} when none can be read)."""
    try:
        with open(path(git_dir, task_id), "rb") as handle:
            stored, entries = marshal.loads(handle.read())
    except Exception:  # missing, damaged, another version's: read the files instead
        return {}
    if stored != FORMAT or type(entries) is not dict:
        return {}
    return {k: v for k, v in entries.items() if type(v) is tuple and len(v) == 4}


def write(git_dir: str, task_id: str, entries: dict[str, Entry]) -> None:
    dump(path(git_dir, task_id), (FORMAT, entries))
