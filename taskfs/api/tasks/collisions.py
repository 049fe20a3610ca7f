"""Two different envelopes under one task id, as a merge can bring them together.

Generated ids practically never collide (50 random bits: about 4.4e-6 among 100,000 tasks), but
caller-chosen ids can. Git then either stops the merge on `tasks/<id>/envelope.yaml` (both
sides added it) or, once someone resolved that by hand, keeps one envelope with both sides'
status files beside it. Either way the ledger no longer says which task a file belongs to, so
it is named (`task_id_collision`) and never resolved silently.
"""

from __future__ import annotations

from taskfs.core.layout import ENVELOPE
from taskfs.errors import Problem, problem
from taskfs.store.repository import Repository


def id_collisions(repo: Repository) -> list[Problem]:
    git = repo.git
    found: dict[str, str] = {}
    for path in git.unmerged_paths(repo.tasks_rel):
        task_id = _task_of_envelope(repo, path)
        if task_id:
            found[task_id] = "a merge in progress conflicts on its envelope.yaml"
    blobs: dict[str, set[str]] = {}
    for _commit, path, blob in git.additions(f"{repo.tasks_rel}/*/{ENVELOPE}"):
        task_id = _task_of_envelope(repo, path)
        if task_id:
            blobs.setdefault(task_id, set()).add(blob)
    for task_id, added in blobs.items():
        if len(added) > 1:
            found.setdefault(
                task_id, f"{len(added)} different envelopes were submitted under it in history"
            )
    return [
        problem("task_id_collision", id=task_id, path=repo.task_rel(task_id, ENVELOPE), reason=why)
        for task_id, why in sorted(found.items())
    ]


def _task_of_envelope(repo: Repository, path: str) -> str | None:
    prefix = repo.tasks_rel + "/"
    parts = path[len(prefix) :].split("/") if path.startswith(prefix) else []
    return parts[0] if len(parts) == 2 and parts[1] == ENVELOPE else None
