"""What a lead reads on the board: what is stuck, what waits for whom, who is idle, what is
next, and what the day has done (issue 39).

`board` gathers, for `taskfs board` (`taskfs.report` draws it: a page, a served page that keeps
itself current, a terminal board), every task with its markers (ready, blocked, dead, stale,
settled), how long it has been in its state and how long quiet, its dependencies as they stand,
the decisions waiting on it ("needs you"), a row per agent (`taskfs.api.views.board_agents`),
the open requests, the counts of the summary line and the completions of today and this week.

A task is **dead** when it waits for a dependency that ended without completing (failed,
canceled, rejected) and nothing carries that dependency's work on (no task that took it over
is open or completed): no claim can ever succeed until someone changes the plan. A task that
ended without completing is **settled** when a task that took its work over completed
(`taskfs.core.lineage`: what depended on it is satisfied): `A -> A-r1 done`, history now.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal

from taskfs.api.views.board_agents import AgentRow, Periods, agent_rows, periods
from taskfs.api.views.reports import TaskReport, all_reports
from taskfs.core.layout import parse_time_or_none
from taskfs.core.lifecycle import TERMINAL
from taskfs.core.lineage import Lineage
from taskfs.errors import Problem, fail
from taskfs.readmodel import stamps
from taskfs.store import index
from taskfs.store.repository import Repository

if TYPE_CHECKING:
    from taskfs.api.lifecycle.stale import Stale
    from taskfs.api.messages.decisions import Decision
    from taskfs.core.intake import Intake
    from taskfs.store.task_reader import Task

__all__ = ["AgentRow", "Board", "Card", "Dependency", "Periods", "board", "document", "mark"]

Marker = Literal["ready", "blocked", "dead", "stale", "settled"]
ENDED_BADLY = frozenset({"failed", "canceled", "rejected"})


@dataclass(frozen=True)
class Dependency:
    id: str
    state: str | None  # None: no such task (yet)
    now: str | None = None  # the task standing for it, when its work was handed on
    now_state: str | None = None

    @property
    def settled(self) -> bool:
        """It ended without completing, and the task that took its work over completed."""
        return self.now is not None and self.now_state == "completed"

    @property
    def standing_state(self) -> str | None:
        """The state that decides for its dependents: its own, or its successor's."""
        return self.now_state if self.now is not None else self.state


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
    dependencies: tuple[Dependency, ...] = ()
    settled_by: str | None = None  # ended without completing; this successor completed
    needs: tuple[Decision, ...] = ()  # the decisions waiting on it, by whom
    follow_ups: tuple[str, ...] = ()  # work found while working on it (`taskfs discover`)

    @property
    def id(self) -> str:
        return self.report.id

    @property
    def state(self) -> str:
        return self.report.task.state


@dataclass(frozen=True)
class Board:
    cards: tuple[Card, ...]
    agents: tuple[AgentRow, ...]
    requests: tuple[Intake, ...]
    now: datetime
    head: str | None  # the commit the board was drawn from (for links)
    counts: Mapping[str, int] = field(default_factory=dict)
    periods: Periods | None = None
    # The decisions waiting on each open request (by its id), as on a card.
    request_needs: Mapping[str, tuple[Decision, ...]] = field(default_factory=dict)


def mark(repo: Repository) -> tuple[object, ...]:
    """What changes when the ledger moves (a commit, a merge from a sync, a file staged or
    written into the tasks folder), read without reading the ledger: a board in view asks it
    every moment and draws again only when it changed."""
    return (
        stamps.head_commit(str(repo.git_dir)),
        stamps.file_key(str(repo.git_dir / "index")),
        stamps.file_key(str(repo.tasks_dir)),
    )


def board(repo: Repository, *, now: datetime | None = None, labels: Sequence[str] = ()) -> Board:
    """The board of the ledger; with `labels`, its cards those of the tasks carrying every
    one of them (the agents' rows still read every task, as their inboxes do)."""
    from taskfs.api.intake import requests as intake
    from taskfs.api.lifecycle import stale
    from taskfs.api.messages.inbox import Reading
    from taskfs.api.tasks import lint, listing

    now = now or datetime.now(timezone.utc)
    # The tasks as HEAD holds them, as `ready` (below) reads them: a writer's files before its
    # commit (or a file written by hand) are drawn as no commit held them with HEAD's `ready`.
    read = all_reports(repo, committed=True)
    tasks = {r.id: r.task for r in read}  # in the order the ledger was read, as `inbox` reads it
    wanted = set(labels)
    reports = sorted((r for r in read if wanted <= set(r.task.envelope.labels)), key=lambda r: r.id)
    lineage = Lineage(tasks)
    named = {dep for task in tasks.values() for dep in task.envelope.depends_on}
    standing = lint.standing(tasks, named, lineage)
    ready = {t.id for t in listing.ready(repo)}
    # Every held task with how long it has been quiet (commits to its files count too), read
    # once; the stale ones are those quiet for the repository's threshold, as for `nudge`.
    reading = Reading(repo, tasks)  # the ledger as every agent's inbox and the stale marks read it
    found_stale = stale.stale_holders(
        repo, now=now, hours=0, tasks=tasks.values(), last=reading.last
    )
    held = {s.id: s for s in found_stale}
    limit = repo.config.nudge.stale_hours
    flags = _lint_flags(repo, reports)
    open_requests = tuple(i for i in intake.intakes(repo) if i.is_open)
    counted = periods(repo, reports, now)
    rows, needs = agent_rows(repo, reports, open_requests, counted, reading)
    discovered = index.summaries(repo).all_discovered()
    cards = []
    for report in reports:
        activity = held.get(report.id)
        last = _latest(_last(report), activity.last if activity else None)
        found = activity if activity is not None and activity.hours >= limit else None
        cards.append(
            _card(
                report,
                tasks,
                lineage,
                standing,
                ready=ready,
                stale=found,
                last=last,
                flags=flags.get(report.id, ()),
                needs=tuple(needs.get(report.id, ())),
            )
        )
        cards[-1] = replace(cards[-1], follow_ups=tuple(discovered.get(report.id, ())))
    return Board(
        tuple(cards),
        tuple(rows),
        open_requests,
        now,
        repo.git.head(),
        _counts(cards, open_requests, rows),
        counted,
        {i.id: tuple(needs.get(i.id, ())) for i in open_requests},
    )


def _card(
    report: TaskReport,
    tasks: Mapping[str, Task],
    lineage: Lineage,
    standing: Mapping[str, tuple[str, str]],
    *,
    ready: set[str],
    stale: Stale | None,
    last: datetime | None,
    flags: Sequence[Problem],
    needs: tuple[Decision, ...],
) -> Card:
    task = report.task
    head = task.chain.head
    dependencies = tuple(_dependency(dep, tasks, standing) for dep in task.envelope.depends_on)
    markers: list[Marker] = []
    waits: tuple[str, ...] = ()
    dead: tuple[str, ...] = ()
    settled_by = None
    if task.state == "submitted":
        dead = tuple(d.id for d in dependencies if _dead_end(d.id, tasks, lineage))
        if task.id in ready:
            markers.append("ready")
        elif dead:
            markers.append("dead")
        else:
            markers.append("blocked")
            waits = tuple(d.id for d in dependencies if d.standing_state != "completed")
    elif task.state in ENDED_BADLY:
        done = lineage.completed(task.id)
        if done is not None and done != task.id:
            settled_by = done
            markers.append("settled")
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
        dependencies,
        settled_by,
        needs,
    )


def _dependency(
    dep: str, tasks: Mapping[str, Task], standing: Mapping[str, tuple[str, str]]
) -> Dependency:
    """A dependency as it stands: `standing` is `taskfs.api.tasks.lint.standing`, the task
    that stands for it now (itself, or its successor that completed or carries it on)."""
    found = tasks.get(dep)
    if found is None:
        return Dependency(dep, None)
    now, now_state = standing.get(dep, (dep, found.state))
    if now == dep:
        return Dependency(dep, found.state)
    return Dependency(dep, found.state, now, now_state)


def _dead_end(dep: str, tasks: Mapping[str, Task], lineage: Lineage) -> bool:
    """Whether a dependency ended without completing and no task carries its work on."""
    found = tasks.get(dep)
    if found is None or found.state not in ENDED_BADLY:
        return False
    return all(tasks[t].state in ENDED_BADLY for t in lineage.line(dep) if t in tasks)


def _last(report: TaskReport) -> datetime | None:
    moments = [link.record.at for link in report.task.chain.links]
    moments += [row.at for row in report.evidence]
    moments += [row.at for row in report.messages]
    found = [m for m in (parse_time_or_none(at) for at in moments) if m is not None]
    return max(found) if found else None


def _latest(a: datetime | None, b: datetime | None) -> datetime | None:
    return max((m for m in (a, b) if m is not None), default=None)


def _counts(
    cards: Sequence[Card], requests: Sequence[Intake], rows: Sequence[AgentRow]
) -> dict[str, int]:
    """Tasks by state and by marker; `failed_open`: the failures nothing settled; `needs`: the
    decisions waiting, all agents together."""
    counts = {"tasks": len(cards), "requests": len(requests)}
    for card in cards:
        counts[card.state] = counts.get(card.state, 0) + 1
        for marker in card.markers:
            counts[marker] = counts.get(marker, 0) + 1
        if card.state == "failed" and card.settled_by is None:
            counts["failed_open"] = counts.get("failed_open", 0) + 1
    counts["needs"] = sum(len(row.needs) for row in rows)
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


def document(view: Board) -> dict[str, Any]:
    """The board as data (`board --json`): ids per column and per marker, the settled
    failures, the agents' rows, the decisions waiting, the day's and the week's completions."""
    columns: dict[str, list[str]] = {}
    if view.requests:
        columns["intake"] = [i.id for i in view.requests]
    for card in view.cards:
        columns.setdefault(card.state, []).append(card.id)
    markers: dict[str, list[str]] = {}
    for card in view.cards:
        for marker in card.markers:
            markers.setdefault(marker, []).append(card.id)
    counted = view.periods
    return {
        "tasks": len(view.cards),
        "columns": columns,
        "markers": markers,
        "settled": {c.id: c.settled_by for c in view.cards if c.settled_by is not None},
        "completed": {
            "today": counted.today if counted else 0,
            "thisWeek": counted.week if counted else 0,
        },
        "needs": [d.to_json() for row in view.agents for d in row.needs],
        "agents": [
            {
                "name": a.name,
                "held": list(a.held),
                "done": list(a.done),
                "failed": list(a.failed),
                "lastActivity": a.last.isoformat() if a.last else None,
                "needsYou": len(a.needs),
                "next": a.next,
                "doneToday": a.done_today,
                "doneThisWeek": a.done_week,
            }
            for a in view.agents
        ],
    }
