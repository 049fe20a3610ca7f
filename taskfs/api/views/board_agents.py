"""The board's row per agent and the day's counts (issue 39, items 2-4).

A row says what the agent holds, what it has done and failed, what waits for it to claim, what
waits for its decision ("needs you": `taskfs.api.messages.decisions`, read from its inbox),
what is next for it (the first task `taskfs ready` offers it), how many tasks it completed
today and this week, and when it last acted.

Completions over a period (today, this week: from local midnight, from Monday) count the
archive too: the evening's `taskfs archive` takes completed tasks out of the working tree, and
the day's count must not drop with them. A completion is the transition into `completed`: its
time (`head_at` in the archive's row) and its holder.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from taskfs.api.messages.decisions import Decision
from taskfs.api.messages.inbox import Reading
from taskfs.api.views.reports import TaskReport
from taskfs.core.intake import Intake
from taskfs.core.layout import parse_time_or_none
from taskfs.core.lifecycle import TERMINAL
from taskfs.store.repository import Repository


@dataclass(frozen=True)
class AgentRow:
    name: str
    held: tuple[str, ...] = ()  # the open tasks it claimed
    done: tuple[str, ...] = ()  # the tasks it claimed that completed (in the working tree)
    failed: tuple[str, ...] = ()  # the tasks it claimed that failed
    waiting: tuple[str, ...] = ()  # submitted tasks addressed to it, not claimed yet
    last: datetime | None = None  # when it last acted: a transition, a run, a message
    needs: tuple[Decision, ...] = ()  # what waits for its decision
    next: str | None = None  # the first task `ready` offers it
    done_today: int = 0  # completions since local midnight, archived ones included
    done_week: int = 0  # since Monday

    @property
    def idle(self) -> bool:
        return not self.held


@dataclass(frozen=True)
class Completion:
    id: str
    holder: str | None
    at: datetime


@dataclass(frozen=True)
class Periods:
    """Completions since the start of today and of this week (local time)."""

    day_start: datetime
    week_start: datetime
    completions: tuple[Completion, ...] = field(default=())

    @property
    def today(self) -> int:
        return sum(1 for c in self.completions if c.at >= self.day_start)

    @property
    def week(self) -> int:
        return sum(1 for c in self.completions if c.at >= self.week_start)

    def of(self, agent: str, since: datetime) -> int:
        return sum(1 for c in self.completions if c.holder == agent and c.at >= since)


def periods(repo: Repository, reports: Sequence[TaskReport], now: datetime) -> Periods:
    """The completions of this week, from the working tree and from the archive."""
    from taskfs.api.tasks import listing

    local = now.astimezone()
    day_start = local.replace(hour=0, minute=0, second=0, microsecond=0)
    week_start = day_start - timedelta(days=local.weekday())
    found: dict[str, Completion] = {}
    for summary in listing.ls(repo, (("state", "completed"), ("archived", True))):
        at = parse_time_or_none(summary.head_at or "")
        if at is not None and at >= week_start:
            found[summary.id] = Completion(summary.id, summary.holder, at)
    for report in reports:
        head = report.task.chain.head
        if report.task.state != "completed" or head is None:
            continue
        at = parse_time_or_none(head.record.at)
        if at is not None and at >= week_start:
            found[report.id] = Completion(report.id, report.task.chain.holder, at)
    return Periods(day_start, week_start, tuple(sorted(found.values(), key=lambda c: c.at)))


def agent_rows(
    repo: Repository,
    reports: Sequence[TaskReport],
    requests: Sequence[Intake],
    counted: Periods,
    reading: Reading,
) -> tuple[list[AgentRow], dict[str, list[Decision]]]:
    """A row per agent named by a task, a request or a completion of this week; and the
    decisions waiting, by the task (or request) each concerns. `reading`: the ledger as every
    agent's inbox reads it, once for all of them."""
    from taskfs.api.messages.decisions import decisions
    from taskfs.api.messages.inbox import inbox
    from taskfs.api.tasks import listing

    rows, last = _tasks_by_agent(reports)
    for intake in requests:
        for name in (intake.requester, intake.recipient):
            if name:
                rows.setdefault(name, _empty())
    for completion in counted.completions:
        if completion.holder:
            rows.setdefault(completion.holder, _empty())
    by_task: dict[str, list[Decision]] = {}
    out = []
    for name, found in sorted(rows.items()):
        needs = decisions(inbox(repo, name, reading=reading))
        for decision in needs:
            by_task.setdefault(decision.task, []).append(decision)
        offered = listing.ready(repo, name)
        out.append(
            AgentRow(
                name,
                tuple(found["held"]),
                tuple(found["done"]),
                tuple(found["failed"]),
                tuple(found["waiting"]),
                last.get(name),
                needs,
                offered[0].id if offered else None,
                counted.of(name, counted.day_start),
                counted.of(name, counted.week_start),
            )
        )
    return out, by_task


def _empty() -> dict[str, list[str]]:
    return {"held": [], "done": [], "failed": [], "waiting": []}


def _tasks_by_agent(
    reports: Iterable[TaskReport],
) -> tuple[dict[str, dict[str, list[str]]], dict[str, datetime]]:
    rows: dict[str, dict[str, list[str]]] = {}
    last: dict[str, datetime] = {}

    def seen(name: str, at: str) -> None:
        moment = parse_time_or_none(at)
        if moment is not None and (name not in last or moment > last[name]):
            last[name] = moment

    for report in reports:
        task = report.task
        holder = task.chain.holder
        for name in (task.envelope.sender, task.envelope.recipient, holder):
            if name:
                rows.setdefault(name, _empty())
        if task.state == "submitted" and task.envelope.recipient:
            rows[task.envelope.recipient]["waiting"].append(task.id)
        if holder:
            if task.state == "completed":
                rows[holder]["done"].append(task.id)
            elif task.state == "failed":
                rows[holder]["failed"].append(task.id)
            elif task.state not in TERMINAL:
                rows[holder]["held"].append(task.id)
        for link in task.chain.links:
            seen(link.record.by, link.record.at)
        for run in report.evidence:
            if run.by:
                seen(run.by, run.at)
        for message in report.messages:
            seen(message.sender, message.at)
    return rows, last
