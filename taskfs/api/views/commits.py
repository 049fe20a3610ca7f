"""The code commits behind a task: the commits that touched the files it owns.

A reviewer reads a task beside the work done for it. Ownership globs are git's `:(glob)`
pathspecs as they are (`*` stays within a folder, `**` crosses folders), the ledger's own folder
is left out, and `interface:` entries name no file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from taskfs.core.layout import ENVELOPE
from taskfs.store.repository import Repository

LIMIT = 20  # a task with more is shown with its latest, and says so


@dataclass(frozen=True)
class CodeCommit:
    commit: str
    author: str
    subject: str
    committed: int  # seconds since the epoch

    def to_json(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "author": self.author,
            "subject": self.subject,
            "committed": self.committed,
        }


def pathspecs(repo: Repository, entries: Sequence[str]) -> list[str]:
    owned = [f":(glob){e}" for e in entries if not e.startswith(("interface:", "!"))]
    return [*owned, f":(exclude){repo.tasks_rel}"] if owned else []


def touching(
    repo: Repository,
    revisions: str,
    entries: Sequence[str],
    *,
    limit: int = LIMIT,
    since: int | None = None,
) -> tuple[CodeCommit, ...]:
    """The latest commits of `revisions` that touched the files `entries` own, newest first
    (`since`: committed at or after that time, in seconds since the epoch)."""
    found = repo.git.touching(revisions, pathspecs(repo, entries), limit=limit, since=since)
    return tuple(
        CodeCommit(e.commit, e.author, e.message.split("\n", 1)[0], e.committed) for e in found
    )


def since_submitted(
    repo: Repository, task_id: str, entries: Sequence[str], *, limit: int = LIMIT
) -> tuple[CodeCommit, ...]:
    """The commits since the one that submitted the task (its envelope's) that touched the
    files it owns; all of HEAD's history when that commit is not known."""
    envelope = repo.task_rel(task_id, ENVELOPE)
    added = repo.git.file_additions([envelope]).get(envelope)
    revisions = f"{added.commit}..HEAD" if added is not None else "HEAD"
    return touching(repo, revisions, entries, limit=limit)
