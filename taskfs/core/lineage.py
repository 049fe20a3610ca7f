"""Lineage: a task handed on (`reassign`) or retried (`retry`) lives on in its successor.

Both make a new task with the same contract whose envelope names the old one
(`x-reassignedFrom`, `x-retriedFrom`). A plan keeps working through them: a task that depends
on A is satisfied by A's completed successor (or the successor's, down the line), and for
ownership the successor stands where A stood (what was ordered after A is ordered after it).

A link counts only when it is genuine: the successor has the same sender and the same
acceptance command as the task it follows (an `x-` key is free for anyone to write, but
only A's sender could have made a task of A's contract in A's name), A ended without
completing (canceled, failed or rejected), and, where a decision asks (`vouched`), the
successor's submission verifies as that sender's act (`taskfs.api.review.authority.
submission_problems`: written by it, and signed where it has a key).

Pure: tasks are passed in as facts (`taskfs.core.facts`). A mapping of tasks that keeps who
follows whom by key (the read model's `taskfs.readmodel.ledger.Ledger`, through a `following`
method) is asked for a task's successors; any other is read whole, once, when first needed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from taskfs.core.facts import EnvelopeFacts, TaskFacts
from taskfs.core.layout import is_task_id

REASSIGNED_FROM = "x-reassignedFrom"
RETRIED_FROM = "x-retriedFrom"
LINKS = (REASSIGNED_FROM, RETRIED_FROM)
# What a task that ended without completing can be followed from.
ENDED = frozenset({"canceled", "failed", "rejected"})


def follows(extensions: Mapping[str, Any]) -> str | None:
    """The task an envelope's extensions name as the one it follows."""
    for key in LINKS:
        value = extensions.get(key)
        if isinstance(value, str) and is_task_id(value):
            return value
    return None


def same_contract(successor: EnvelopeFacts, predecessor: EnvelopeFacts) -> bool:
    return (
        successor.follows == predecessor.id
        and predecessor.sender is not None
        and successor.sender == predecessor.sender
        and successor.command == predecessor.command
    )


def done(task: TaskFacts) -> bool:
    """Whether a task counts as completed for what depends on it: completed, by an act that
    stands (`stands`, as the read model's row keeps it: `taskfs.store.completions`). A task
    read whole from its files (no `stands` of its own) says what its chain says: only the rows
    decide."""
    return task.state == "completed" and bool(getattr(task, "stands", True))


class Lineage:
    """The successors of the tasks in `tasks`, found when first asked for (one pass over
    the tasks, shared by every question of one listing or claim)."""

    def __init__(
        self, tasks: Mapping[str, TaskFacts], vouched: Callable[[str], bool] | None = None
    ) -> None:
        self._tasks = tasks
        self._vouched = vouched  # whether a successor's submission is its sender's own act
        self._next: dict[str, list[str]] | None = None
        asked = getattr(tasks, "following", None)
        self._asked: Callable[[str], list[str]] | None = asked if callable(asked) else None

    def _following(self, task_id: str) -> list[str]:
        """The tasks whose envelopes name `task_id` as the one they follow, genuine or not."""
        if self._asked is not None:
            return self._asked(task_id)
        if self._next is None:
            found: dict[str, list[str]] = {}
            for task in self._tasks.values():
                link = task.envelope.follows
                if link is not None:
                    found.setdefault(link, []).append(task.id)
            self._next = found
        return self._next.get(task_id, [])

    def followers(self, task_id: str) -> list[str]:
        """The tasks that genuinely follow `task_id`, whatever its state (what orders them
        for ownership: `lineage_edges`)."""
        before = self._tasks.get(task_id)
        if before is None:
            return []
        return [
            t
            for t in self._following(task_id)
            if t in self._tasks
            and same_contract(self._tasks[t].envelope, before.envelope)
            and (self._vouched is None or self._vouched(t))
        ]

    def successors(self, task_id: str) -> list[str]:
        """The tasks that genuinely follow `task_id` (it ended without completing)."""
        before = self._tasks.get(task_id)
        if before is None or before.state not in ENDED:
            return []
        return self.followers(task_id)

    def completed(self, task_id: str) -> str | None:
        """The task that completed for `task_id` (`done`): itself, or a successor down its
        line; None while none has."""
        seen: set[str] = set()
        todo = [task_id]
        while todo:
            current = todo.pop(0)
            if current in seen:
                continue
            seen.add(current)
            task = self._tasks.get(current)
            if task is not None and done(task):
                return current
            todo += self.successors(current)
        return None

    def standing(self, task_id: str) -> str:
        """The task that stands for `task_id` now: the last of its line (the newest successor
        while each ended without completing), else `task_id` itself."""
        current, seen = task_id, {task_id}
        while True:
            after = [t for t in self.successors(current) if t not in seen]
            if not after:
                return current
            current = after[-1]
            seen.add(current)

    def line(self, task_id: str) -> list[str]:
        """`task_id`'s successors, all the way down (for reading them as a claim does)."""
        out: list[str] = []
        todo = [task_id]
        while todo:
            for after in self.successors(todo.pop(0)):
                if after not in out and after != task_id:
                    out.append(after)
                    todo.append(after)
        return out


def lineage_edges(envelopes: Mapping[str, EnvelopeFacts]) -> dict[str, list[str]]:
    """For ordering (ownership): each task's genuine successors. A task that depends on A is
    ordered after A's successor too, so the two may own the same files."""
    edges: dict[str, list[str]] = {}
    for envelope in envelopes.values():
        link = envelope.follows
        before = envelopes.get(link) if link is not None else None
        if before is not None and envelope.id is not None and same_contract(envelope, before):
            edges.setdefault(before.id or "", []).append(envelope.id)
    return edges
