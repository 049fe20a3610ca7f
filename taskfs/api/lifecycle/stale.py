"""Held work that is stuck: tasks whose holder has gone quiet for `nudge.staleHours` (default
24) hours, with no transition, no message and no commit touching the files the task owns.

`taskfs nudge`, `taskfs prime` and the board report them, so that a dead worker is noticed and
its sender can hand the work on (`taskfs reassign`) instead of the files staying locked.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from taskfs import i18n
from taskfs.api.views import entries
from taskfs.core.layout import parse_time
from taskfs.core.lifecycle import HELD
from taskfs.errors import TaskfsError
from taskfs.readmodel import clock
from taskfs.store.all_tasks import load_all
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task


@dataclass(frozen=True)
class Stale:
    id: str
    holder: str
    sender: str | None
    state: str
    last: datetime  # the latest transition, message or commit touching the owned files
    hours: float  # how long ago that was
    now: datetime | None = None  # when that was measured

    @property
    def quiet_text(self) -> str:
        now = self.now or self.last + timedelta(hours=self.hours)
        return clock.duration(self.last, now, "s")

    def line(self) -> str:
        return i18n.say(
            "{id} held by {holder} ({state}) for {quiet} with no transition, message or commit "
            "touching its files",
            id=self.id,
            holder=self.holder,
            state=self.state,
            quiet=self.quiet_text,
        )

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "holder": self.holder,
            "from": self.sender,
            "state": self.state,
            "lastActivity": self.last.astimezone(timezone.utc).isoformat(),
            "quietHours": round(self.hours, 1),
        }


def stale_holders(
    repo: Repository,
    *,
    now: datetime | None = None,
    hours: float | None = None,
    tasks: Iterable[Task] | None = None,
    last: Callable[[Task], datetime | None] | None = None,
) -> list[Stale]:
    """The held tasks quiet for longer than `hours` (default: the repository's setting).
    `last`: `last_activity` as already read for the same moment."""
    now = now or datetime.now(timezone.utc)
    limit = repo.config.nudge.stale_hours if hours is None else hours
    found = []
    held = [
        task
        for task in (tasks if tasks is not None else load_all(repo).values())
        if task.state in HELD and task.chain.holder is not None
    ]
    if last is None:
        commits = last_commits(repo, held)  # one walk of history for every holder's files

        def last(task: Task) -> datetime | None:
            return last_activity(repo, task, commits)

    for task in held:
        holder = task.chain.holder
        assert holder is not None
        moved = last(task)
        if moved is None:
            continue
        quiet = (now - moved).total_seconds() / 3600
        if quiet >= limit:
            found.append(
                Stale(task.id, holder, task.envelope.sender, task.state, moved, quiet, now)
            )
        else:
            clock.changes_at(moved + timedelta(hours=limit))  # it turns stale then
    return sorted(found, key=lambda s: (-s.hours, s.id))


def last_activity(
    repo: Repository, task: Task, commits: Mapping[str, datetime] | None = None
) -> datetime | None:
    """The latest transition, message or commit touching the files `task` owns (`commits`:
    the last commits of many tasks' files, read at once by `last_commits`)."""
    moments = [moment(link.record.at) for link in task.chain.links]
    with contextlib.suppress(TaskfsError):
        moments += [moment(m.at) for m in entries.task_messages(repo, task.id)]
    if commits is None:
        commits = last_commits(repo, [task])
    moments.append(commits.get(task.id))
    known = [m for m in moments if m is not None]
    return max(known) if known else None


def last_commits(repo: Repository, tasks: Iterable[Task]) -> dict[str, datetime]:
    """The time of the latest commit touching each task's owned files (tasks no commit
    touched are left out), from one walk of history for them all."""
    from taskfs.core import globs

    index: globs.OwnershipIndex[str] = globs.OwnershipIndex()
    specs: list[str] = []
    for task in tasks:
        for raw in task.envelope.files_and_interfaces:
            if not raw.startswith(("interface:", "!")):
                index.add(task.id, raw)
                specs.append(f":(glob){raw}")
    found: dict[str, datetime] = {}
    for seconds, paths in repo.git.commit_times(sorted(set(specs))):
        for path in paths:
            for task_id, _entry in index.matching(path):
                if task_id not in found:
                    found[task_id] = datetime.fromtimestamp(seconds, timezone.utc)
    return found


def moment(text: str) -> datetime | None:
    """A ledger time (`at`) as an aware datetime; None when it is not one."""
    try:
        found = parse_time(text)
    except ValueError:
        return None
    return found if found.tzinfo is not None else found.replace(tzinfo=timezone.utc)


def reports(
    repo: Repository,
    agent: str,
    *,
    limit: int = 5,
    mcp: bool = False,
    tasks: Iterable[Task] | None = None,
    last: Callable[[Task], datetime | None] | None = None,
) -> list[tuple[Stale, str]]:
    """Short lines for `prime`, each with the task it is about: the stale tasks `agent` sent
    (which it may hand on) or holds (which it should report on or give up); the steps are
    spelled as MCP tools with `mcp`, else as commands."""
    out: list[tuple[Stale, str]] = []
    for found in stale_holders(repo, tasks=tasks, last=last):
        if found.sender == agent:
            how = f"agent_reassign({found.id}, to)" if mcp else f"taskfs reassign {found.id} --to B"
            line = i18n.say("- stale: {line}; hand it on: {how}", line=found.line(), how=how)
        elif found.holder == agent:
            how = (
                i18n.say("agent_update(task_id, text), or give it up: agent_fail(task_id, reason)")
                if mcp
                else i18n.say(
                    "taskfs send {id} --status update ..., or give it up: --status failed",
                    id=found.id,
                )
            )
            line = i18n.say(
                "- stale: you hold {id} quiet for {quiet}; report progress ({how})",
                id=found.id,
                quiet=found.quiet_text,
                how=how,
            )
        else:
            continue
        out.append((found, line))
        if len(out) >= limit:
            break
    return out
