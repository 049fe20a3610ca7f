"""The sender's view: the tasks an agent sent, with their state, age and quiet time, and the
ones that need it now.

A planner hands work out and must learn, from its inbox or `prime` alone, when a task comes
back refused or failed (it may retry it, hand it to someone else, or let it go) and when the
agent holding one has gone quiet (no transition, message or commit touching the task's files
for `nudge.senderQuietMinutes`, default 60): it may ask, or reassign. `taskfs sent` and MCP's
`agent_tasks` list them all; `inbox` and `prime` show only what needs the sender.

A refused or failed task needs its sender until it is handled: retried (it has a successor),
answered (the sender wrote on it after it ended), or, when it ended with a message, that
message was marked read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from taskfs.api.lifecycle.stale import last_activity, last_commits, moment
from taskfs.api.messages.threads import Thread, read_thread
from taskfs.core.lineage import Lineage
from taskfs.readmodel import clock
from taskfs.store.all_tasks import load_all
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task

# Held and expected to move: a task waiting in input_required waits for its sender.
WORKED = ("working", "auth_required")
ENDED_BADLY = ("failed", "rejected")


@dataclass(frozen=True)
class SentTask:
    id: str
    state: str
    to: str | None
    holder: str | None
    context_id: str
    objective: str
    submitted_at: datetime | None
    last: datetime | None  # the latest transition, message or commit touching its files
    now: datetime
    quiet_limit: float  # minutes
    ended_by: str | None = None  # failed or rejected: who ended it
    reason: str | None = None  # and why
    successor: str | None = None  # the task that took it over (reassign, retry)
    needs_you: bool = False  # refused or failed, and not yet handled by the sender
    ended_message: str | None = None  # the message that ended it, when one did
    priority: int | None = None  # the envelope's, where it says
    labels: tuple[str, ...] = ()

    @property
    def age_minutes(self) -> float | None:
        if self.submitted_at is None:
            return None
        return (self.now - self.submitted_at).total_seconds() / 60

    @property
    def quiet_minutes(self) -> float | None:
        """How long the agent holding it has been quiet (None unless it is worked on)."""
        if self.state not in WORKED or self.last is None:
            return None
        return (self.now - self.last).total_seconds() / 60

    @property
    def quiet(self) -> bool:
        minutes = self.quiet_minutes
        return minutes is not None and minutes >= self.quiet_limit

    @property
    def refused(self) -> bool:
        return self.state == "rejected"


def sent(
    repo: Repository,
    agent: str,
    *,
    now: datetime | None = None,
    tasks: Mapping[str, Task] | None = None,
    labels: Iterable[str] = (),
    thread: Callable[[str], Thread] | None = None,
    last: Callable[[Task], datetime | None] | None = None,
) -> list[SentTask]:
    """Every task `agent` sent, oldest first; with `labels`, those carrying every one.
    `thread`, `last`: a task's thread and its last activity as already read for the same
    moment (the inboxes of a board share them)."""
    now = now or datetime.now(timezone.utc)
    tasks = tasks if tasks is not None else load_all(repo)
    lineage = Lineage(tasks)
    limit = repo.config.nudge.sender_quiet_minutes
    wanted = set(labels)
    mine = [
        t
        for t in tasks.values()
        if t.envelope.sender == agent and t.length and wanted <= set(t.envelope.labels)
    ]
    if last is None:
        commits = last_commits(repo, [t for t in mine if t.state in WORKED])

        def last(task: Task) -> datetime | None:
            return last_activity(repo, task, commits)

    read = Read(thread or (lambda task_id: read_thread(repo, task_id)), last)
    rows = [_row(task, agent, lineage, read, now=now, limit=limit) for task in mine]
    return sorted(rows, key=lambda r: (r.submitted_at or now, r.id))


def needing(rows: Iterable[SentTask]) -> tuple[list[SentTask], list[SentTask]]:
    """What needs the sender now: (refused or failed and not handled, quiet)."""
    listed = list(rows)
    return [r for r in listed if r.needs_you], [r for r in listed if r.quiet]


@dataclass(frozen=True)
class Read:
    thread: Callable[[str], Thread]
    last: Callable[[Task], datetime | None]


def _row(
    task: Task,
    agent: str,
    lineage: Lineage,
    read: Read,
    *,
    now: datetime,
    limit: float,
) -> SentTask:
    links = task.chain.links
    submitted = moment(links[0].record.at) if links else None
    head = task.chain.head
    ended_by = reason = None
    if task.state in ENDED_BADLY and head is not None:
        ended_by, reason = head.record.by, (head.record.reason or "").strip() or None
    after = lineage.successors(task.id)
    successor = after[-1] if after else None
    last = read.last(task) if task.state in WORKED else None
    if last is not None and (now - last).total_seconds() / 60 < limit:
        clock.changes_at(last + timedelta(minutes=limit))  # it turns quiet then
    needs = (
        task.state in ENDED_BADLY
        and ended_by not in (None, agent)
        and successor is None
        and not _handled(read.thread(task.id), task, agent)
    )
    return SentTask(
        task.id,
        task.state,
        task.envelope.recipient,
        task.holder,
        task.envelope.context_id,
        task.envelope.objective,
        submitted,
        last,
        now,
        limit,
        ended_by,
        reason,
        successor,
        needs,
        head.record.message if ended_by is not None and head is not None else None,
        task.envelope.priority,
        tuple(task.envelope.labels),
    )


def _handled(thread: Thread, task: Task, agent: str) -> bool:
    """Whether the sender has answered the ending: written on the task since, or read the
    message that ended it."""
    head = task.chain.head
    if head is None:
        return False
    ended_at = moment(head.record.at)
    for checked in thread.messages:
        record = checked.record
        if record.msg_id == head.record.message and checked.delivery == "read":
            return True
        if record.sender == agent and ended_at is not None:
            at = moment(record.at)
            if at is not None and at >= ended_at:
                return True
    return False
