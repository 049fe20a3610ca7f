"""The one-line text answers of interlink's five tools, made from taskfs's JSON documents.

The wording follows interlink's `src/bin/interlink-mcp.rs` (`queued for ... (msg_id ...)`,
`sent cancel for task ...`, its log line `→ peer [state] (msg_id ...): text`), so a model
used to interlink reads taskfs's answers the same way. Where taskfs knows more (a commit, a
transition), the line says it after the dash, where interlink puts its delivery note.
"""

from __future__ import annotations

from typing import Any

LIMIT = 20


def sent(doc: dict[str, Any]) -> str:
    """`send_message`: the message (or the task it opened) and where it went."""
    task, status = doc.get("task_id"), doc.get("status")
    tag = f" [task {task} · {status}]" if task and status else f" [task {task}]" if task else ""
    dest = doc["to"] + (f" ({doc['session']})" if doc.get("session") else "")
    if doc.get("opening"):
        note = f"task opened ({doc['state']}), recorded in git"
    else:
        note = f"committed to git ({str(doc.get('commit') or '')[:12]})"
        moved = doc.get("transition")
        if moved:
            note += f"; the task moved {moved['from']} -> {moved['to']}"
        if doc.get("checkRequested"):
            note += "; asks for the acceptance check (the task is not completed by it)"
    return f"queued for {dest} (msg_id {doc['msg_id']}){tag} — {note}"


def canceled(doc: dict[str, Any]) -> str:
    """`cancel_task`."""
    return (
        f"sent cancel for task '{doc['task_id']}' to {doc['to']} (msg_id {doc['msg_id']}) — "
        "cooperative: nothing was stopped by force"
    )


def record(row: dict[str, Any], me: str) -> str:
    """One log line: direction arrow, peer, state, then the body."""
    mine = row.get("from") == me
    arrow = "→" if mine else "←"
    peer = (row.get("to") if mine else row.get("from")) or "?"
    return f"{arrow} {peer} [{row.get('delivery')}] (msg_id {row['msg_id']}): {row.get('text')}"


def status(doc: dict[str, Any], me: str) -> str:
    """`message_status`."""
    return record(doc["message"], me)


def history(doc: dict[str, Any], me: str) -> str:
    """`conversation_history`: one line per message, newest last."""
    rows = doc.get("messages") or []
    if not rows:
        return f"no message history with {doc['peer']}"
    return "\n".join(record(row, me) for row in rows)


def pending(doc: dict[str, Any], me: str) -> str:
    """`list_pending`: what has not left yet, committed or pushed."""
    rows = doc.get("messages") or []
    if not rows:
        where = "committed and pushed" if doc.get("upstream") else "committed"
        return f"nothing pending; all sent messages were {where}"
    lines = [f"→ {row.get('to')} (msg_id {row['msg_id']}) {row.get('pending')}" for row in rows]
    return f"{len(rows)} pending:\n" + "\n".join(lines)
