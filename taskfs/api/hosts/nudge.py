"""The progress nudge: which working tasks an agent holds, how long each has been quiet, and
the one-line reminder a host shows the agent when one has been quiet too long
(`nudge.quietMinutes` in `.taskfs/config.yaml`, default 15).

It reads only what it needs: a task whose status files form a plain chain (no fork) whose last
file is not `working` is skipped by its file names alone; the others are loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone

from taskfs.core import nudge as rules
from taskfs.core.layout import EVIDENCE, STAMPED_NAME_RE, STATUS, STATUS_NAME_RE, parse_time
from taskfs.core.nudge import Quiet
from taskfs.errors import TaskfsError
from taskfs.store.messages import load_messages
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task, load_task


@dataclass(frozen=True)
class Nudge:
    agent: str
    quiet_minutes: float
    now: datetime
    tasks: tuple[Quiet, ...]

    @property
    def overdue(self) -> tuple[Quiet, ...]:
        return tuple(q for q in self.tasks if q.overdue(self.now))

    @property
    def reminder(self) -> str | None:
        return rules.reminder(self.overdue, self.now)


def nudge(
    repo: Repository,
    agent: str,
    *,
    now: datetime | None = None,
    reminded: Mapping[str, datetime] | None = None,
) -> Nudge:
    """The working tasks `agent` holds, each with its latest progress and when a reminder is
    due (`reminded`: when each was last reminded)."""
    now = now or datetime.now(timezone.utc)
    quiet = repo.config.nudge.quiet_minutes
    reminded = reminded or {}
    found = []
    for task_id in repo.task_ids():
        if not _may_be_working(repo, task_id):
            continue
        try:
            task = load_task(repo, task_id)
        except TaskfsError:
            continue
        if task.state != "working" or task.chain.holder != agent:
            continue
        last = _last_progress(repo, task, agent)
        found.append(Quiet(task.id, last, rules.due(last, reminded.get(task.id), quiet)))
    return Nudge(agent, quiet, now, tuple(found))


def _may_be_working(repo: Repository, task_id: str) -> bool:
    seqs: dict[int, list[str]] = {}
    for name in repo.list_dir(task_id, STATUS):
        match = STATUS_NAME_RE.fullmatch(name)
        if match:
            seqs.setdefault(int(match.group("seq")), []).append(match.group("state"))
    if not seqs:
        return False
    if any(len(states) > 1 for states in seqs.values()):
        return True  # a fork: only the chain's rule knows which branch won
    return seqs[max(seqs)] == ["working"]


def _last_progress(repo: Repository, task: Task, agent: str) -> datetime:
    head = task.chain.head
    assert head is not None
    last = parse_time(head.record.at)
    # Whether git holds the files does not matter here: no need to ask it.
    stored, _problems = load_messages(repo, task.id, pending=set())
    for item in stored:
        if item.record.sender == agent:
            last = max(last, parse_time(item.record.at))
    for name in repo.list_dir(task.id, EVIDENCE):
        match = STAMPED_NAME_RE.fullmatch(name)
        if match:
            stamp = datetime.strptime(match.group("stamp"), "%Y%m%dT%H%M%S.%fZ")
            last = max(last, stamp.replace(tzinfo=timezone.utc))
    return last
