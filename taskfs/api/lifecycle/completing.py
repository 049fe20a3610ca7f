"""`complete` (and MCP's `agent_complete`): the holder's working task -> completed, on passing
evidence. Completing again what one already completed, the same way, is no error: it changes
nothing and says so, as a claim of a task one holds does (`claiming`).

MCP declares `agent_complete` idempotent (`idempotentHint`: repeated calls with the same
arguments have no additional effect), so a client may send it again when an answer was lost;
the repeat must then answer that the task is done, not refuse what already happened. A repeat
that asks for something else (other artifacts) or comes from anyone else is still
`transition_not_allowed`, and `move ID completed` keeps the lifecycle table's refusal of an edge
out of a terminal state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from taskfs.api.lifecycle import transitions
from taskfs.core.layout import STATUS
from taskfs.errors import TaskfsError
from taskfs.store.repository import Repository

if TYPE_CHECKING:
    from taskfs.core.records import Artifact


@dataclass(frozen=True)
class Done:
    """The answer to a completion of a task its caller already completed, the same way."""

    id: str
    state: str
    by: str
    commit: str | None  # the commit that completed it


def complete(
    repo: Repository, task_id: str, agent: str, *, artifacts: Sequence[Artifact] = ()
) -> transitions.Moved | Done:
    try:
        return transitions.transition(repo, task_id, "completed", agent, artifacts=artifacts)
    except TaskfsError as exc:
        if exc.codes != ["transition_not_allowed"]:
            raise
        # Only on a refusal: a completion's path never loads the full reader (pydantic).
        from taskfs.store.task_reader import load_task

        task = load_task(repo, task_id)
        head = task.chain.head
        if task.state != "completed" or head is None or head.record.by != agent:
            raise
        if _pairs(head.record.artifacts or ()) != _pairs(artifacts):
            raise
        rel = repo.task_rel(task_id, STATUS, head.name)
        found = repo.git.touching("HEAD", [f":(literal){rel}"], limit=1)
        return Done(task_id, task.state, agent, found[0].commit if found else None)


def _pairs(artifacts: Sequence[Artifact]) -> list[tuple[str, str]]:
    return sorted((a.name, a.location) for a in artifacts)
