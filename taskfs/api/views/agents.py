"""The JSON shapes of the agents' answers (messages, inbox, bind), shared by the CLI and MCP.

A message row is the message file's own fields (interlink's names: `msg_id`, `task_id`,
`in_reply_to`, ...) plus how far it got (`delivery`: pending, sent, read) and whether it may be
acted on (`verified`, and `problems` with their codes when not).
"""

from __future__ import annotations

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


def sent(result: Any) -> dict[str, Any]:
    record = result.record
    moved = result.transition
    return {
        "msg_id": record.msg_id,
        "id": record.task_id,
        "task_id": record.task_id,
        "from": record.sender,
        "to": record.recipient,
        "status": record.status,
        "session": record.session,
        "delivery": "sent",
        "signed": record.signature is not None or record.sig is not None,
        "state": result.state,
        "transition": {"from": moved[0], "to": moved[1]} if moved else None,
        "checkRequested": result.check_requested,
        "file": result.file,
        "commit": result.commit,
    }


def inbox(box: Any) -> dict[str, Any]:
    return {
        "agent": box.agent,
        "badge": box.badge,
        "counts": {
            "toClaim": len(box.to_claim),
            "questions": len(box.questions),
            "results": len(box.results),
            "unread": len(box.unread),
            "refused": len(box.refused),
            "superseded": len(box.superseded),
            "requests": len(box.requests) + len(box.requested),
            "ended": len(box.ended),
            "quiet": len(box.quiet),
        },
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
        "ended": [attention(t) for t in box.ended],
        "quiet": [attention(t) for t in box.quiet],
    }


def _request(intake: Any) -> dict[str, Any]:
    """An open intake in an inbox: who asked whom, its words, what it lacks."""
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
        record = result.record
        return {
            "msg_id": record.msg_id,
            "id": None,
            "task_id": None,
            "from": record.sender,
            "to": record.recipient,
            "status": None,
            "session": record.session,
            "delivery": "sent",
            "signed": record.sig is not None,
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
        record = result.record
        return {
            "msg_id": record.msg_id,
            "id": record.task_id,
            "task_id": record.task_id,
            "from": record.sender,
            "to": record.recipient,
            "status": None,
            "session": record.session,
            "delivery": "sent",
            "signed": record.sig is not None,
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
