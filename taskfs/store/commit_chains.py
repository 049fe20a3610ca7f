"""Status chains of tasks as a commit holds them, read lazily through one `git cat-file`: what
sync compares across clones. (`taskfs.store.commit_view` loads a whole tree as a `Repository`.)"""

from __future__ import annotations

from pydantic import ValidationError

from taskfs.core import yamlio
from taskfs.core.chain import Chain, Link, resolve
from taskfs.core.layout import STATUS, STATUS_NAME_RE
from taskfs.core.records import StatusRecord
from taskfs.store.git.objects import ObjectSource
from taskfs.store.repository import Repository


class CommitChains:
    """Status files of tasks at one commit, read through one `git cat-file` process."""

    def __init__(self, repo: Repository, reader: ObjectSource, commit: str | None) -> None:
        self._repo = repo
        self._reader = reader
        self.commit = commit

    def blob(self, rel: str) -> bytes | None:
        if self.commit is None:
            return None
        found = self._reader.read(f"{self.commit}:{rel}")
        return found[1] if found and found[0] == "blob" else None

    def links(self, task_id: str) -> list[Link]:
        """The task's readable status files; malformed ones are for `validate` to name."""
        if self.commit is None:
            return []
        folder = self._repo.task_rel(task_id, STATUS)
        out = []
        for name, (mode, oid) in self._reader.tree_at(f"{self.commit}:{folder}"):
            if not mode.startswith("100") or not STATUS_NAME_RE.fullmatch(name):
                continue
            record = _record(self._reader.read(oid), task_id)
            if record is not None:
                out.append(Link(name, record))
        return out

    def chain(self, task_id: str) -> Chain:
        return resolve(task_id, self.links(task_id))


def _record(found: tuple[str, bytes] | None, task_id: str) -> StatusRecord | None:
    if found is None or found[0] != "blob":
        return None
    try:
        record = StatusRecord.model_validate(yamlio.load(found[1]))
    except (yamlio.YamlError, ValidationError):
        return None
    return record if record.task == task_id else None
