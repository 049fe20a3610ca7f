"""`claim`, for an agent that may not remember what it holds: claiming a task it already holds
is no error. It changes nothing and says so (exit 0), so a fresh session can claim again
what `prime` told it to resume."""

from __future__ import annotations

from dataclasses import dataclass

from taskfs.api.lifecycle import transitions
from taskfs.core.lifecycle import HELD
from taskfs.errors import TaskfsError
from taskfs.store.repository import Repository


@dataclass(frozen=True)
class Held:
    """The answer to a claim of a task the agent already holds."""

    id: str
    state: str
    holder: str


def claim(repo: Repository, task_id: str, agent: str) -> transitions.Moved | Held:
    try:
        return transitions.transition(repo, task_id, "working", agent)
    except TaskfsError as exc:
        if exc.codes != ["transition_not_allowed"]:
            raise
        # Only on a refusal: the claim's fast path never loads the full reader (pydantic).
        from taskfs.store.task_reader import load_task

        task = load_task(repo, task_id)
        if task.state in HELD and task.holder == agent:
            return Held(task.id, task.state, agent)
        raise
