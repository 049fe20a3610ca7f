"""The JSON shapes of the agents' answers (messages, inbox, bind), shared by the CLI and MCP.

A message row is the message file's own fields (interlink's names: `msg_id`, `task_id`,
`in_reply_to`, ...) plus how far it got (`delivery`: pending, sent, read) and whether it may be
acted on (`verified`, and `problems` with their codes when not).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from taskfs.api.views.documents import summary
from taskfs.api.views.sent import attention

__all__ = [
    "bound",
    "delivered",
    "entry",
    "inbox",
    "message",
    "message_state",
    "outbox",
    "sent",
    "sent_or_opened",
    "summary",
]


def message(checked: Any) -> dict[str, Any]:
    return {
        **checked.record.to_document(),
        "delivery": checked.delivery,
        "signed": checked.record.signature is not None or checked.record.sig is not None,
        "verified": checked.ok,
        "problems": [p.to_json() for p in checked.problems],
        "file": checked.stored.rel,
    }


def _sent_header(record: Any, task_id: str | None, status: str | None) -> dict[str, Any]:
    """What every answer to a message sent says of it: its id, task, parties, status, session,
    that it was sent, and whether it is signed (either encoding)."""
    return {
        "msg_id": record.msg_id,
        "id": task_id,
        "task_id": task_id,
        "from": record.sender,
        "to": record.recipient,
        "status": status,
        "session": record.session,
        "delivery": "sent",
        "signed": record.signature is not None or record.sig is not None,
    }


def sent(result: Any) -> dict[str, Any]:
    moved = result.transition
    return {
        **_sent_header(result.record, result.record.task_id, result.record.status),
        "state": result.state,
        "transition": {"from": moved[0], "to": moved[1]} if moved else None,
        "checkRequested": result.check_requested,
        "file": result.file,
        "commit": result.commit,
    }


def inbox(
    box: Any,
    *,
    door: str = "cli",
    full: bool = False,
    standing: tuple[Sequence[Any], Mapping[str, list[tuple[str, str]]]] = ((), {}),
) -> dict[str, Any]:
    """An inbox as a document. Compact by default (issue 38): a message is its `msg_id`,
    `task_id`, `from`, `status` and `text` (and `to` when it was put to someone else), shown
    once (a question or a result is not also unread, nor the message that ended a task the
    sender is told of), a request says what it lacks by name only, and a sent task needing its
    sender says what happened; `full` gives every record whole, as `agent_history` and
    `messages` do. `door` (cli, mcp) spells the next steps. `standing`: the tasks the agent
    holds and what each task a claim would refuse waits for (`resume.standing_of`), as the
    text inbox's first rows say them: an agent that starts again finds its work here."""
    held, waiting = standing
    if full:
        return {**_full_inbox(box), "held": _held(held)}
    shown = {c.record.msg_id for c in (*box.questions, *box.results)}
    shown |= {t.ended_message for t in box.ended if t.ended_message}
    return {
        "agent": box.agent,
        "badge": box.badge,
        "counts": {**_counts(box), "held": len(held)},
        "held": _held(held),
        "toClaim": [_to_claim(t, box, waiting) for t in box.to_claim],
        "questions": [
            {**compact(c, box.agent), "asOwner": c.record.msg_id in box.as_owner}
            for c in box.questions
        ],
        "results": [compact(c, box.agent) for c in box.results],
        "unread": [compact(c, box.agent) for c in box.unread if c.record.msg_id not in shown],
        "refused": [
            {**compact(c, box.agent), "problems": [p.code for p in c.problems]} for c in box.refused
        ],
        "superseded": [lost.to_json() for lost in box.superseded],
        "requests": [_asked_of(i) for i in box.requests],
        "requested": [_asked_by(i, door) for i in box.requested],
        "checks": [_check(c) for c in box.checks],
        "amendments": [_amendment(a, door) for a in box.amendments],
        "ended": [_ended(t) for t in box.ended],
        "quiet": [_quiet(t) for t in box.quiet],
    }


def compact(checked: Any, reader: str) -> dict[str, Any]:
    """A message as the compact inbox shows it (the rest: `full`, `agent_history`)."""
    record = checked.record
    out: dict[str, Any] = {
        "msg_id": record.msg_id,
        "task_id": record.task_id,
        "from": record.sender,
        "status": record.status,
        "text": record.text,
    }
    if record.recipient != reader:
        out["to"] = record.recipient
    return out


def _counts(box: Any) -> dict[str, int]:
    return {
        "toClaim": len(box.claimable),
        "questions": len(box.questions),
        "results": len(box.results),
        "unread": len(box.unread),
        "refused": len(box.refused),
        "superseded": len(box.superseded),
        "requests": len(box.requests) + len(box.requested),
        "checks": len(box.checks),
        "amendments": len(box.amendments),
        "ended": len(box.ended),
        "quiet": len(box.quiet),
    }


def _to_claim(task: Any, box: Any, waiting: Mapping[str, list[tuple[str, str]]]) -> dict[str, Any]:
    row = summary(task)
    out = {"id": task.id, "from": row["from"], "objective": task.envelope.objective}
    out.update({k: row[k] for k in ("priority", "labels") if k in row})
    if task.id in box.ready:
        return {**out, "ready": True}
    # What a claim would refuse it for now: each task in the way, and why as people read it.
    blocked = [{"id": other, "why": why} for other, why in waiting.get(task.id, [])]
    return {**out, "ready": False, "blockedBy": blocked}


def _held(held: Sequence[Any]) -> list[dict[str, Any]]:
    """The tasks the agent holds (`resume.Held`): open ones first, then those canceled under
    it that it has not acknowledged (stop working on them)."""
    out = []
    for task in held:
        row: dict[str, Any] = {"id": task.id, "state": task.state, "objective": task.objective}
        if task.question_id:
            row["question"] = {"msg_id": task.question_id, "text": task.question}
        if task.state == "canceled":
            row.update(by=task.by, reason=task.reason)
        out.append(row)
    return out


def _asked_of(intake: Any) -> dict[str, Any]:
    """A request to the reader: who asked, in what words, and what its envelope lacks."""
    from taskfs.core.intake import missing_fields

    out: dict[str, Any] = {"id": intake.id, "from": intake.requester}
    words = " ".join(intake.words())
    if words:
        out["text"] = words
    out["missing"] = missing_fields(intake.missing())
    if intake.pending_proposal() is not None:
        out["proposed"] = True  # the reader proposed one: it waits for the requester
    return out


def _asked_by(intake: Any, door: str) -> dict[str, Any]:
    """The reader's own request: a proposal to accept (its words: what the acceptance makes
    the reader's own, named by the id it accepts), or what it still lacks."""
    from taskfs.api.views.intake import accept_hint
    from taskfs.core.intake import missing_fields, proposal_digest, proposal_id

    out: dict[str, Any] = {"id": intake.id, "to": intake.recipient}
    proposal = intake.pending_proposal()
    if proposal is not None:
        out["proposedBy"] = proposal.record.by
        out["proposal"] = proposal.record.text
        out["proposalId"] = proposal_id(proposal)
        out["proposalDigest"] = proposal_digest(proposal)
        out["next"] = accept_hint(intake, "mcp" if door == "mcp" else "cli")
    else:
        out["missing"] = missing_fields(intake.missing())
    return out


def _check(check: Any) -> dict[str, Any]:
    """A failed check of a task the reader holds, run by someone else: why, in a few lines."""
    from taskfs.api.views.checks import tail

    lines = [f"exit {check.exit_code}" if check.exit_code is not None else "fail"]
    for text in (check.output.get("stderr", ""), check.output.get("stdout", "")):
        if text:
            lines.append(tail(text, lines=CHECK_LINES))
    return {
        "task_id": check.task_id,
        "from": check.by,
        "status": "fail",
        "text": "\n".join(lines),
        "evidence": check.evidence,
    }


CHECK_LINES = 5  # of each stream, in the compact inbox: the reason (`agent_history`: more)


def _amendment(pending: Any, door: str) -> dict[str, Any]:
    """An amendment of a task the reader holds, waiting for its acceptance."""
    how = (
        f"agent_amend(task_id={pending.task_id!r}, accept=true)"
        if door == "mcp"
        else f"taskfs amend {pending.task_id} --accept"
    )
    out: dict[str, Any] = {"task_id": pending.task_id, "from": pending.by}
    if pending.reason:
        out["text"] = pending.reason
    return {**out, "changed": list(pending.changed), "next": how}


def _ended(task: Any) -> dict[str, Any]:
    return {"id": task.id, "state": task.state, "endedBy": task.ended_by, "reason": task.reason}


def _quiet(task: Any) -> dict[str, Any]:
    from taskfs.readmodel import clock

    minutes = None if task.last is None else clock.minutes(task.last, task.now)
    return {
        "id": task.id,
        "state": task.state,
        "holder": task.holder,
        "quietMinutes": minutes,
    }


def _full_inbox(box: Any) -> dict[str, Any]:
    """Every record whole (`inbox --full`, `agent_inbox(full=true)`)."""
    return {
        "agent": box.agent,
        "badge": box.badge,
        "counts": _counts(box),
        "toClaim": [
            {**summary(t), "objective": t.envelope.objective, "ready": t.id in box.ready}
            for t in box.to_claim
        ],
        "questions": [
            {**message(c), "asOwner": c.record.msg_id in box.as_owner} for c in box.questions
        ],
        "results": [message(c) for c in box.results],
        "unread": [message(c) for c in box.unread],
        "refused": [message(c) for c in box.refused],
        "superseded": [lost.to_json() for lost in box.superseded],
        "requests": [_request(i) for i in box.requests],
        "requested": [_request(i) for i in box.requested],
        "checks": [
            {**_check(c), "exitCode": c.exit_code, "output": dict(c.output), "at": c.at}
            for c in box.checks
        ],
        "amendments": [
            {**_amendment(a, "cli"), "amendment": a.name, "at": a.at} for a in box.amendments
        ],
        "ended": [attention(t) for t in box.ended],
        "quiet": [attention(t) for t in box.quiet],
    }


def _request(intake: Any) -> dict[str, Any]:
    """An open intake in a full inbox: who asked whom, its words, what it lacks."""
    from taskfs.api.views.intake import document

    return document(intake, intake.missing())


def delivered(result: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"path": result.path, "ok": result.ok}
    if result.sent is not None:
        row.update(sent(result.sent))
    if result.already:
        row["delivery"] = "sent"
        row["already"] = True
    row["errors"] = [p.to_json() for p in result.problems]
    return row


def bound(result: Any) -> dict[str, Any]:
    return {
        "id": result.id,
        "agent": result.agent,
        "toolsGranted": list(result.tools_granted),
        "envelope": result.envelope.to_document(),
        "ledger": result.ledger,
    }


# -- interlink's tools (taskfs.api.messages.interlink) ------------------------------------------


def opening(opened: Any) -> dict[str, Any]:
    """A task opening, shaped as a message row (its text is the objective)."""
    task = opened.task
    return {
        "msg_id": opened.msg_id,
        "task_id": task.id,
        "from": opened.sender,
        "to": opened.recipient,
        "status": None,
        "in_reply_to": None,
        "at": opened.at,
        "text": task.envelope.objective,
        "opening": True,
        "delivery": opened.delivery,
        "signed": False,
        "verified": True,
        "problems": [],
        "file": opened.file,
    }


def entry(found: Any) -> dict[str, Any]:
    """One row of a conversation: a message, or the opening of a task."""
    from taskfs.api.messages.interlink import Opening

    if isinstance(found, Opening):
        return opening(found)
    return {**message(found), "opening": False}


def sent_or_opened(result: Any) -> dict[str, Any]:
    from taskfs.api.messages.interlink import Opening, Requested
    from taskfs.api.messages.wire import Said

    if isinstance(result, Said):  # a message about no task: conversation
        return {
            **_sent_header(result.record, None, None),
            "state": None,
            "transition": None,
            "checkRequested": False,
            "file": result.file,
            "commit": result.commit,
        }
    if isinstance(result, Opening):
        row = opening(result)
        return {**row, "id": row["task_id"], "state": result.task.state, "transition": None}
    if isinstance(result, Requested):  # a request on a new task id: not a task yet
        return {
            **_sent_header(result.record, result.record.task_id, None),
            "state": result.answer.state,
            "request": True,
            "missing": [p.to_json() for p in result.answer.problems],
            "transition": None,
            "checkRequested": False,
            "file": result.file,
            "commit": result.answer.commit,
        }
    return sent(result)


def message_state(found: Any) -> dict[str, Any]:
    row = entry(found.entry)
    return {
        "msg_id": row["msg_id"],
        "task_id": row.get("task_id"),
        "delivery": row["delivery"],
        "state": found.task_state,
        "verified": row["verified"],
        "message": row,
    }


def outbox(box: Any) -> dict[str, Any]:
    held = box.held or {}
    uncommitted = [{**entry(c), "pending": "uncommitted"} for c in box.uncommitted]
    unbridged = [
        {**entry(c), "pending": "unbridged", "held": held.get(c.record.msg_id)}
        for c in box.unbridged
    ]
    unpushed = [{**entry(e), "pending": "unpushed"} for e in box.unpushed]
    return {
        "upstream": box.upstream,
        "counts": {
            "uncommitted": len(uncommitted),
            "unbridged": len(unbridged),
            "unpushed": len(unpushed),
        },
        "messages": uncommitted + unbridged + unpushed,
    }
