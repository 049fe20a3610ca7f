"""What the completion gate read of a task's evidence files, kept per task (`gate/<task id>`,
`taskfs.readmodel.cache`), so that `complete` decides without reading the evidence models
again (pydantic, YAML: most of its time).

One entry per evidence file: the git object id of the file's bytes, the identity of the runner
trust it was judged under, its `GateFacts` and its signature's standing. An entry counts only
for a file whose bytes have the same object id now and a trust that is the same now, so nothing
is trusted on a file's name, time or size; a file that could not be read is kept as such (no
facts), so that it is not read again either. The file is sealed (`taskfs.readmodel.seal`): a
verdict or a standing rewritten by hand is no entry, and the file is read again. Deleting it
changes no decision.
"""

from __future__ import annotations

from taskfs.readmodel import cache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KIND = "gate"
# name -> (the bytes' object id, trust identity, GateFacts fields or None, standing or None)
Entry = tuple[str, "Any", "tuple[Any, ...] | None", "str | None"]


def read(git_dir: str, task_id: str) -> dict[str, Entry]:
    """The stored entries of the task's evidence files by name ({} when none can be read)."""
    entries = cache.recall(git_dir, KIND, task_id, ())
    if type(entries) is not dict:
        return {}
    return {k: v for k, v in entries.items() if type(v) is tuple and len(v) == 4}


def write(git_dir: str, task_id: str, entries: dict[str, Entry]) -> None:
    cache.remember(git_dir, KIND, task_id, (), entries)
