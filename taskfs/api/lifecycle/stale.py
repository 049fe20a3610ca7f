"""Held work that is stuck: tasks whose holder has gone quiet for `nudge.staleHours` (default
24) hours, with no transition, no message and no commit touching the files the task owns.

`taskfs nudge`, `taskfs prime` and the board report them, so that a dead worker is noticed and
its sender can hand the work on (`taskfs reassign`) instead of the files staying locked.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone

from taskfs import i18n
from taskfs.api.views import entries
from taskfs.core.layout import parse_time
from taskfs.errors import TaskfsError
from taskfs.store.all_tasks import load_all
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task

HELD_STATES = ("working", "input_required", "auth_required")


@dataclass(frozen=True)
class Stale:
    id: str
    holder: str
    sender: str | None
    state: str
    last: datetime  # the latest transition, message or commit touching the owned files
    hours: float  # how long ago that was

    @property
    def quiet_text(self) -> str:
        if self.hours >= 1:
            return i18n.say("{hours} h", hours=round(self.hours))
        return i18n.say("{minutes} min", minutes=round(self.hours * 60))

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
    last = last or (lambda task: last_activity(repo, task))
    limit = repo.config.nudge.stale_hours if hours is None else hours
    found = []
    for task in tasks if tasks is not None else load_all(repo).values():
        holder = task.chain.holder
        if task.state not in HELD_STATES or holder is None:
            continue
        moved = last(task)
        if moved is None:
            continue
        quiet = (now - moved).total_seconds() / 3600
        if quiet >= limit:
            found.append(Stale(task.id, holder, task.envelope.sender, task.state, moved, quiet))
    return sorted(found, key=lambda s: (-s.hours, s.id))


def last_activity(repo: Repository, task: Task) -> datetime | None:
    moments = [moment(link.record.at) for link in task.chain.links]
    with contextlib.suppress(TaskfsError):
        moments += [moment(m.at) for m in entries.task_messages(repo, task.id)]
    moments.append(_last_commit(repo, task.envelope.files_and_interfaces))
    known = [m for m in moments if m is not None]
    return max(known) if known else None


def _last_commit(repo: Repository, owned: Iterable[str]) -> datetime | None:
    specs = [f":(glob){e}" for e in owned if not e.startswith(("interface:", "!"))]
    seconds = repo.git.last_commit_time(specs)
    return datetime.fromtimestamp(seconds, timezone.utc) if seconds is not None else None


def moment(text: str) -> datetime | None:
    """A ledger time (`at`) as an aware datetime; None when it is not one."""
    try:
        found = parse_time(text)
    except ValueError:
        return None
    return found if found.tzinfo is not None else found.replace(tzinfo=timezone.utc)


def reports(
    repo: Repository, agent: str, *, limit: int = 5, mcp: bool = False
) -> list[tuple[Stale, str]]:
    """Short lines for `prime`, each with the task it is about: the stale tasks `agent` sent
    (which it may hand on) or holds (which it should report on or give up); the steps are
    spelled as MCP tools with `mcp`, else as commands."""
    out: list[tuple[Stale, str]] = []
    for found in stale_holders(repo):
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
