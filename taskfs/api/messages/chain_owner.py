"""Owner binding across hops (what interlink's docs/TASKS.md left for "tranche B").

In a delegation chain A -> B -> C (tasks linked by `parent`, contract section 8), a question
C asks with `needs_input` goes to B, who delegated C's task. B may not know the answer: the
human who can is A's, the owner of the whole chain. The rule is deliberately simple and
needs no extra message: while a delegated task's question is open, it is shown to the chain's
owner too (`inbox`, `prime`), and either the question's addressee (B) or the chain's owner (A)
may answer it. The first answer closes it and moves the task back to working, recorded and
committed like any answer. Nobody has to declare "B cannot answer": B not answering is that.

The chain's owner is the sender of the root task (the first task of the `parent` chain): its
`from`, else the agent that submitted it. A task without parent has no owner beyond its own
sender, and a chain that cannot be followed to its root (a parent missing or unreadable, or a
loop) has none: nobody gains a right from a chain taskfs cannot read.
"""

from __future__ import annotations

from collections.abc import Mapping

from taskfs.errors import TaskfsError
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task, load_task


def chain_owner(
    repo: Repository, task: Task, tasks: Mapping[str, Task] | None = None
) -> str | None:
    """The sender of the root of `task`'s delegation chain; None when `task` was not
    delegated or its chain cannot be followed to a root. `tasks`: every task already read."""
    if task.envelope.parent is None:
        return None
    seen = {task.id}
    current = task
    while current.envelope.parent is not None:
        parent_id = current.envelope.parent
        if parent_id in seen:
            return None
        seen.add(parent_id)
        found = _find(repo, parent_id, tasks)
        if found is None:
            return None
        current = found
    return _sender(current)


def _find(repo: Repository, task_id: str, tasks: Mapping[str, Task] | None) -> Task | None:
    if tasks is not None:
        return tasks.get(task_id)
    if not repo.has_task(task_id):
        return None
    try:
        return load_task(repo, task_id)
    except TaskfsError:
        return None


def _sender(task: Task) -> str | None:
    if task.envelope.sender:
        return task.envelope.sender
    return task.chain.links[0].record.by if task.chain.links else None
