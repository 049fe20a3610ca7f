"""What a lead reads on the board in the morning: what is stuck, who is idle, what is next.

`board` gathers, for `taskfs board --html` (`taskfs.report.board` draws it), every task with
its marker (ready, blocked, dead, stale), how long it has been in its state and how long it
has been quiet, a row per agent (what it holds, has done and has failed, and when it last did
anything), the open requests, and the counts of the summary line.

A task is **dead** when it waits for a dependency that ended without completing (failed,
canceled, rejected) and nothing carries that dependency's work on (no task that took it over
is open or completed): no claim can ever succeed until someone changes the plan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Literal

from taskfs.api.views.reports import TaskReport, all_reports
from taskfs.core.layout import parse_time_or_none
from taskfs.core.lifecycle import TERMINAL
from taskfs.errors import Problem, fail
from taskfs.store import index
from taskfs.store.repository import Repository

if TYPE_CHECKING:
    from taskfs.api.lifecycle.stale import Stale
    from taskfs.core.intake import Intake

Marker = Literal["ready", "blocked", "dead", "stale"]
ENDED_BADLY = frozenset({"failed", "canceled", "rejected"})


@dataclass(frozen=True)
class Card:
    report: TaskReport
    markers: tuple[Marker, ...] = ()
    since: datetime | None = None  # when it entered its state
    last: datetime | None = None  # its latest transition, run, message (or commit to its files)
    waits_for: tuple[str, ...] = ()  # blocked: the dependencies not completed yet
    dead_ends: tuple[str, ...] = ()  # dead: the dependencies that ended without completing
    stale: str = ""  # the stale line (`taskfs.api.lifecycle.stale`)
    flags: tuple[Problem, ...] = ()  # lint warnings of an open task
    follow_ups: tuple[str, ...] = ()  # work found while working on it (`taskfs discover`)

    @property
    def id(self) -> str:
        return self.report.id

    @property
    def state(self) -> str:
        return self.report.task.state


@dataclass(frozen=True)
class AgentRow:
    name: str
    held: tuple[str, ...] = ()  # the open tasks it claimed
    done: tuple[str, ...] = ()  # the tasks it claimed that completed
    failed: tuple[str, ...] = ()  # the tasks it claimed that failed
    waiting: tuple[str, ...] = ()  # submitted tasks addressed to it, not claimed yet
    last: datetime | None = None  # its latest transition or message

    @property
    def idle(self) -> bool:
        return not self.held


@dataclass(frozen=True)
class Board:
    cards: tuple[Card, ...]
    agents: tuple[AgentRow, ...]
    requests: tuple[Intake, ...]
    now: datetime
    head: str | None  # the commit the board was drawn from (for links)
    counts: Mapping[str, int] = field(default_factory=dict)


def board(repo: Repository, *, now: datetime | None = None, labels: Sequence[str] = ()) -> Board:
    """The board of the ledger; with `labels`, of the tasks carrying every one of them."""
    from taskfs.api.intake import requests as intake
    from taskfs.api.lifecycle import stale
    from taskfs.api.tasks import listing

    now = now or datetime.now(timezone.utc)
    wanted = set(labels)
    reports = sorted(
        (r for r in all_reports(repo) if wanted <= set(r.task.envelope.labels)),
        key=lambda r: r.id,
    )
    by_id = {r.id: r for r in reports}
    ready = {t.id for t in listing.ready(repo)}
    # Every held task with how long it has been quiet (commits to its files count too), read
    # once; the stale ones are those quiet for the repository's threshold, as for `nudge`.
    tasks = [r.task for r in reports]
    held = {s.id: s for s in stale.stale_holders(repo, now=now, hours=0, tasks=tasks)}
    limit = repo.config.nudge.stale_hours
    flags = _lint_flags(repo, reports)
    found = index.summaries(repo).all_discovered()
    cards = []
    for report in reports:
        activity = held.get(report.id)
        last = _latest(_last(report), activity.last if activity else None)
        stale_found = activity if activity is not None and activity.hours >= limit else None
        flagged = flags.get(report.id, ())
        card = _card(report, by_id, ready=ready, stale=stale_found, last=last, flags=flagged)
        cards.append(replace(card, follow_ups=tuple(found.get(report.id, ()))))
    open_requests = tuple(i for i in intake.intakes(repo) if i.is_open)
    return Board(
        tuple(cards),
        tuple(_agents(reports)),
        open_requests,
        now,
        repo.git.head(),
        _counts(cards, open_requests),
    )


def _card(
    report: TaskReport,
    by_id: Mapping[str, TaskReport],
    *,
    ready: set[str],
    stale: Stale | None,
    last: datetime | None,
    flags: Sequence[Problem],
) -> Card:
    task = report.task
    head = task.chain.head
    markers: list[Marker] = []
    waits: tuple[str, ...] = ()
    dead: tuple[str, ...] = ()
    if task.state == "submitted":
        dead = tuple(d for d, _state in report.dependencies if _dead_end(d, by_id))
        if task.id in ready:
            markers.append("ready")
        elif dead:
            markers.append("dead")
        else:
            markers.append("blocked")
            waits = tuple(d for d, state in report.dependencies if state != "completed")
    if stale is not None:
        markers.append("stale")
    return Card(
        report,
        tuple(markers),
        parse_time_or_none(head.record.at) if head else None,
        last,
        waits,
        dead,
        stale.line() if stale is not None else "",
        tuple(flags),
    )


def _dead_end(dep: str, by_id: Mapping[str, TaskReport]) -> bool:
    """Whether a dependency ended without completing and no task carries its work on."""
    found = by_id.get(dep)
    if found is None or found.task.state not in ENDED_BADLY:
        return False
    seen = {dep}
    todo = [link.target for link in found.replaced_by]
    while todo:
        current = by_id.get(todo.pop())
        if current is None or current.id in seen:
            continue
        seen.add(current.id)
        if current.task.state not in ENDED_BADLY:
            return False  # open, or completed: the work goes on
        todo += [link.target for link in current.replaced_by]
    return True


def _last(report: TaskReport) -> datetime | None:
    moments = [link.record.at for link in report.task.chain.links]
    moments += [row.at for row in report.evidence]
    moments += [row.at for row in report.messages]
    found = [m for m in (parse_time_or_none(at) for at in moments) if m is not None]
    return max(found) if found else None


def _latest(a: datetime | None, b: datetime | None) -> datetime | None:
    return max((m for m in (a, b) if m is not None), default=None)


def _agents(reports: Sequence[TaskReport]) -> list[AgentRow]:
    rows: dict[str, dict[str, list[str]]] = {}
    last: dict[str, datetime] = {}

    def row(name: str) -> dict[str, list[str]]:
        return rows.setdefault(name, {"held": [], "done": [], "failed": [], "waiting": []})

    def seen(name: str, at: str) -> None:
        moment = parse_time_or_none(at)
        if moment is not None and (name not in last or moment > last[name]):
            last[name] = moment

    for report in reports:
        task = report.task
        holder = task.chain.holder
        for name in (task.envelope.sender, task.envelope.recipient, holder):
            if name:
                row(name)
        if task.state == "submitted" and task.envelope.recipient:
            row(task.envelope.recipient)["waiting"].append(task.id)
        if holder:
            if task.state == "completed":
                row(holder)["done"].append(task.id)
            elif task.state == "failed":
                row(holder)["failed"].append(task.id)
            elif task.state not in TERMINAL:
                row(holder)["held"].append(task.id)
        for link in task.chain.links:
            if link.record.by in rows:
                seen(link.record.by, link.record.at)
        for message in report.messages:
            if message.sender in rows:
                seen(message.sender, message.at)
    return [
        AgentRow(
            name,
            tuple(found["held"]),
            tuple(found["done"]),
            tuple(found["failed"]),
            tuple(found["waiting"]),
            last.get(name),
        )
        for name, found in sorted(rows.items())
    ]


def _counts(cards: Sequence[Card], requests: Sequence[Intake]) -> dict[str, int]:
    counts = {"tasks": len(cards), "requests": len(requests)}
    for card in cards:
        counts[card.state] = counts.get(card.state, 0) + 1
        for marker in card.markers:
            counts[marker] = counts.get(marker, 0) + 1
    return counts


def _lint_flags(repo: Repository, reports: Sequence[TaskReport]) -> dict[str, list[Problem]]:
    """The lint warnings of each open task, for its card."""
    from taskfs.core import lint as rules

    contexts = {r.id: r.task.envelope.context_id for r in reports}
    settings = repo.config.lint.settings()
    return {
        r.id: rules.lint_envelope(
            r.task.envelope, subject=r.id, contexts=contexts, settings=settings
        )
        for r in reports
        if r.task.state not in TERMINAL
    }


def repository_url(url: str) -> str:
    """A web address of the repository (`https://github.com/owner/name`), for links to its
    commits and files; a trailing `/` or `.git` is dropped. Anything but an http(s) address
    without spaces or quotes is a command-line mistake."""
    cleaned = url.strip().rstrip("/")
    cleaned = cleaned.removesuffix(".git")
    scheme, _sep, rest = cleaned.partition("://")
    if (
        scheme.lower() not in ("http", "https")
        or not rest
        or any(c.isspace() or c in "\"'<>`\\" for c in cleaned)
    ):
        raise fail(
            "usage",
            reason=f"--repo-url {url!r} is not a web address of the repository "
            "(https://host/owner/name)",
        )
    return cleaned
