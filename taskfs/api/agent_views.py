"""The JSON shapes of the agents' answers (messages, inbox, bind), shared by the CLI and MCP.

A message row is the message file's own fields (interlink's names: `msg_id`, `task_id`,
`in_reply_to`, ...) plus how far it got (`delivery`: pending, sent, read) and whether it may be
acted on (`verified`, and `problems` with their codes when not).
"""

from __future__ import annotations

from typing import Any

from taskfs.api.views import document, refusal, summary

__all__ = ["bound", "delivered", "document", "inbox", "message", "refusal", "sent", "summary"]


def message(checked: Any) -> dict[str, Any]:
    return {
        **checked.record.to_document(),
        "delivery": checked.delivery,
        "signed": checked.record.signature is not None,
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
        "delivery": "sent",
        "signed": record.signature is not None,
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
        },
        "toClaim": [{**summary(t), "ready": t.id in box.ready} for t in box.to_claim],
        "questions": [message(c) for c in box.questions],
        "results": [message(c) for c in box.results],
        "unread": [message(c) for c in box.unread],
        "refused": [message(c) for c in box.refused],
    }


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
