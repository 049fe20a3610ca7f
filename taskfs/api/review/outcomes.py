"""Where each task a review touches stands now: the table a reviewer reads first.

For every task the range added or moved, or that got evidence or messages in it: its state in
the checkout, who holds it, its latest acceptance run (and whether a runner signed it or it is
self-reported), the code commits of the range that touched its owned files, and its lineage
(the task it replaces, the tasks that replaced it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from taskfs.api.views import entries
from taskfs.api.views.commits import CodeCommit, touching
from taskfs.api.views.entries import EvidenceRow
from taskfs.api.views.lineage import Lineage, Link
from taskfs.core.evidence import RunnerTrust
from taskfs.store.archive_records import home
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task


@dataclass(frozen=True)
class Outcome:
    id: str
    state: str | None  # in the checkout (archived: the last); None when it holds no such task
    holder: str | None = None
    latest: EvidenceRow | None = None  # its latest acceptance run in the checkout
    commits: tuple[CodeCommit, ...] = ()  # the range's commits touching its owned files
    replaces: tuple[Link, ...] = ()
    replaced_by: tuple[Link, ...] = ()
    archived: bool = False  # taken out of the checkout by `taskfs archive`

    def to_json(self) -> dict[str, Any]:
        latest = self.latest
        return {
            "id": self.id,
            "state": self.state,
            "archived": self.archived,
            "holder": self.holder,
            "latestRun": None if latest is None else latest.to_json(),
            "codeCommits": [c.to_json() for c in self.commits],
            "replaces": [{"id": link.source, "how": link.kind} for link in self.replaces],
            "replacedBy": [{"id": link.target, "how": link.kind} for link in self.replaced_by],
        }


def outcomes(
    repo: Repository,
    revisions: str,
    touched: Iterable[str],
    now: Mapping[str, Task],
    trust: RunnerTrust,
    *,
    archived: Mapping[str, Task] | None = None,
) -> tuple[Outcome, ...]:
    """The outcome of each task in `touched` (in that order, each once); a task the checkout
    lacks because an archive took it, from `archived` (read as `show` reads it)."""
    gone = {t: task for t, task in (archived or {}).items() if t not in now}
    lineage = Lineage({task_id: task.envelope for task_id, task in {**gone, **now}.items()})
    found = []
    for task_id in dict.fromkeys(touched):
        task = now.get(task_id) or gone.get(task_id)
        if task is None:
            found.append(Outcome(task_id, None))
            continue
        runs = entries.task_evidence(home(repo, task_id), task_id, trust)
        found.append(
            Outcome(
                task_id,
                task.state,
                task.chain.holder,
                runs[-1] if runs else None,
                touching(repo, revisions, task.envelope.files_and_interfaces),
                lineage.replaces(task_id),
                lineage.replaced_by(task_id),
                archived=task_id in gone,
            )
        )
    return tuple(found)
