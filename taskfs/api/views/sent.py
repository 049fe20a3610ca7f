"""The sender's view as the CLI (`sent`, `reassign`, `retry`, `inbox`) and MCP (`agent_tasks`,
`agent_reassign`, `agent_retry`, `agent_inbox`) show it: one shape for both."""

from __future__ import annotations

from typing import Any

from taskfs import i18n
from taskfs.readmodel import clock


def row(task: Any) -> dict[str, Any]:
    """A sent task: its state, who has it, how old it is, how long its holder has been quiet,
    and, when it came back refused or failed, by whom and why."""
    out: dict[str, Any] = {
        "id": task.id,
        "state": task.state,
        "to": task.to,
        "holder": task.holder,
        "contextID": task.context_id,
        "ageMinutes": _since(task.submitted_at, task),
        "quietMinutes": _since(task.last, task) if task.quiet_minutes is not None else None,
        "quiet": task.quiet,
    }
    if task.priority is not None:
        out["priority"] = task.priority
    if task.labels:
        out["labels"] = list(task.labels)
    if task.ended_by is not None:
        out["endedBy"] = task.ended_by
        out["reason"] = task.reason
    if task.successor is not None:
        out["successor"] = task.successor
    if task.needs_you:
        out["needsYou"] = True
    return out


def attention(task: Any) -> dict[str, Any]:
    """A sent task that needs its sender, in an inbox: the row and its objective."""
    return {**row(task), "objective": task.objective}


def handed_on(done: Any) -> dict[str, Any]:
    """What `reassign` and `retry` answer (`state`: the old task's, as they leave it)."""
    state = "canceled" if done.kind == "reassign" else None
    out: dict[str, Any] = {"id": done.id, "newId": done.new_id, "to": done.to}
    if state is not None:
        out["state"] = state
    return {**out, "newState": "submitted", "commit": done.commit}


def duration(minutes: float | None) -> str:
    if minutes is None:
        return "-"
    if minutes >= 120:
        return i18n.say("{hours} h", hours=round(minutes / 60))
    return i18n.say("{minutes} min", minutes=round(minutes))


def line(task: Any) -> str:
    """A sent task in a sentence, for `sent`, `inbox` and `prime`."""
    if task.needs_you:
        verb = i18n.say("refused") if task.refused else i18n.say("failed")
        why = f": {_short(task.reason)}" if task.reason else ""
        return i18n.say(
            "{id} {verb} by {agent}{why}",
            id=task.id,
            verb=verb,
            agent=task.ended_by,
            why=why,
        )
    if task.quiet:
        return i18n.say(
            "{id} held by {holder} ({state}): quiet for {quiet}",
            id=task.id,
            holder=task.holder,
            state=task.state,
            quiet=clock.duration(task.last, task.now) if task.last else "-",
        )
    return f"{task.id} ({task.state})"


def _since(moment: Any, task: Any) -> int | str | None:
    """Whole minutes from `moment` to the row's now (said when printed: `readmodel.clock`)."""
    return None if moment is None else clock.minutes(moment, task.now)


def _short(text: str | None, limit: int = 100) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
