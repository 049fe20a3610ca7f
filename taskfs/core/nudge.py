"""The progress nudge's arithmetic: when a quiet task's reminder is due, and what it says.

Pure: times are passed in. A task is quiet from its holder's latest sign of progress (the
transition into `working`, a message it wrote about the task, an evidence file); a reminder
is due a quiet period after that, and again a quiet period after the last reminder, never
more often.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class Quiet:
    """One working task held by the agent: its latest progress and when to remind."""

    task_id: str
    last: datetime
    due: datetime

    def overdue(self, now: datetime) -> bool:
        return now >= self.due


def due(last: datetime, reminded: datetime | None, quiet_minutes: float) -> datetime:
    since = max(last, reminded) if reminded is not None else last
    return since + timedelta(minutes=quiet_minutes)


def reminder(overdue: Sequence[Quiet], now: datetime) -> str | None:
    """One line naming the quietest task and how to report progress (None: nothing due)."""
    if not overdue:
        return None
    first, *rest = sorted(overdue, key=lambda q: (q.last, q.task_id))
    minutes = int((now - first.last).total_seconds() // 60)
    more = f" (also quiet: {', '.join(q.task_id for q in rest)})" if rest else ""
    return (
        f"taskfs: you hold task {first.task_id} (working) and have reported no progress for "
        f"{minutes} min{more}. Report it: taskfs send {first.task_id} --status update "
        '"what changed" (MCP: agent_update, or send_message with status update).'
    )
