"""The code commits behind a task: the commits that touched the files it owns.

A reviewer reads a task beside the work done for it. Ownership globs are git's `:(glob)`
pathspecs as they are (`*` stays within a folder, `**` crosses folders), the ledger's own folder
is left out, and `interface:` entries name no file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from taskfs.core import globs
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


def _places(entries: Sequence[str]) -> list[str]:
    """`:(literal)` pathspecs of the leading literal folders of path entries, every file an
    entry owns lying below one; none when an entry has no literal part (`**/*.py`)."""
    places = []
    for entry in entries:
        if entry.startswith(("interface:", "!")):
            continue
        names, _literal = globs.placement(entry)
        if not names:
            return []
        places.append(":(literal)" + "/".join(names))
    return places


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
    specs = pathspecs(repo, entries)
    places = _places(entries)
    # git cannot prune its tree walk for a pathspec with a wildcard: each commit's whole tree
    # is compared (40 ms for 24 commits of a 5,000-task ledger). The folders the entries'
    # literal parts name are asked first, cheaply: a commit touching an owned file touches
    # one of them, so none there means none at all (the usual answer right after a claim).
    if specs and places and not repo.git.touching(revisions, places, limit=1, since=since):
        return ()
    found = repo.git.touching(revisions, specs, limit=limit, since=since)
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
