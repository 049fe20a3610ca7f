"""The nudge hook's reminder (`taskfs nudge --hook`), run after every tool call of an agent.

What it remembers between calls (`taskfs.store.nudges`: what its answer rests on and when
a reminder is next due) lets most calls answer from one small file: the ledger is read, and
`taskfs.api.hosts.nudge` asked, only when something changed or a reminder may be due. Everything
heavier than that memory is imported only then, to keep the hook off the slow path.
"""

from __future__ import annotations

import time
from pathlib import Path


def due_reminder(root: Path, agent: str) -> str | None:
    """The reminder `agent` should read now in the checkout at `root`, or None; remembers
    what it said and when the next one may be due."""
    from taskfs.store import nudges
    from taskfs.store.git import Git

    git = Git(root)
    memory = nudges.recall(git, agent)
    inputs = nudges.answer_inputs(git, root)
    now = time.time()
    if memory.inputs == inputs and (memory.due is None or now < memory.due):
        return None
    # Something changed, or a reminder may be due: read the ledger.
    from datetime import datetime, timezone

    from taskfs.api.hosts import nudge as api
    from taskfs.core.nudge import due
    from taskfs.store.repository import Repository

    moment = datetime.fromtimestamp(now, timezone.utc)
    reminded = {k: datetime.fromtimestamp(v, timezone.utc) for k, v in memory.reminded.items()}
    found = api.nudge(Repository.open(root), agent, now=moment, reminded=reminded)
    text = found.reminder
    held = {q.task_id for q in found.tasks}
    memory.reminded = {k: v for k, v in memory.reminded.items() if k in held}
    for quiet in found.overdue:
        memory.reminded[quiet.task_id] = now
        reminded[quiet.task_id] = moment
    dues = [due(q.last, reminded.get(q.task_id), found.quiet_minutes) for q in found.tasks]
    memory.due = min(dues).timestamp() if dues else None
    memory.inputs = inputs
    nudges.remember(git, agent, memory)
    return text
