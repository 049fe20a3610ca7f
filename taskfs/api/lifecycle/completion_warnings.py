"""What a completion leaves behind that its holder should hear of: warnings, never refusals
(the completion stands; the contract allows it).

- `amendment_lapsed`: an amendment still waited for the holder's answer, and ending the task
  declined it (`taskfs.api.tasks.amend.waiting`).
- `owned_files_untouched`: no commit since the claim touched the files the task owns, so the
  passing evidence rests on work committed before the claim, or on none (the team day: a task
  completed on a check that passed with nothing done).

Both are asked of every completion (`transitions.transition`): `complete`, `move ID completed`,
MCP's `agent_complete`, the watcher's. They cost nothing in the common case: the row says
whether an amendment waits, and the owned files' history is read from the claim's commit on.
"""

from __future__ import annotations

from taskfs.api.views import commits
from taskfs.core.layout import STATUS, STATUS_NAME_RE
from taskfs.errors import Problem, problem
from taskfs.readmodel.projection import Summary
from taskfs.store.repository import Repository


def left_behind(repo: Repository, task: Summary) -> tuple[Problem, ...]:
    """The warnings of the completion that made `task` (its row as the completion left it)."""
    found: list[Problem] = []
    if task.pending:
        from taskfs.api.tasks.amend import waiting

        found += waiting(repo, task.id, ended=True)
    found += untouched(repo, task)
    return tuple(found)


def untouched(repo: Repository, task: Summary) -> list[Problem]:
    """`owned_files_untouched` when the task owns files and no commit since its claim touched
    any of them; nothing for a task that owns only interfaces, or whose claim is not found."""
    entries = [
        e for e in task.envelope.files_and_interfaces if not e.startswith(("interface:", "!"))
    ]
    if not entries:
        return []
    claim = claim_commit(repo, task.id)
    if claim is None or commits.touching(repo, f"{claim}..HEAD", entries, limit=1):
        return []
    return [
        problem(
            "owned_files_untouched",
            id=task.id,
            holder=task.holder,
            claim=claim,
            owned=entries,
            owned_text=", ".join(entries),
        )
    ]


def claim_commit(repo: Repository, task_id: str) -> str | None:
    """The commit that added the task's claim: its first status file entering `working` (a
    later one is a return from a question). A walk of HEAD's history that stops there."""
    claims = sorted(
        name
        for name in repo.list_dir(task_id, STATUS)
        if (match := STATUS_NAME_RE.fullmatch(name)) is not None and match["state"] == "working"
    )
    if not claims:
        return None
    rel = repo.task_rel(task_id, STATUS, claims[0])
    found = repo.git.touching("HEAD", [f":(literal){rel}"], limit=1)
    return found[0].commit if found else None
