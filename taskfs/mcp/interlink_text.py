"""The one-line text answers of interlink's five tools, made from taskfs's JSON documents.

The wording follows interlink's `src/bin/interlink-mcp.rs` (`queued for ... (msg_id ...)`,
`sent cancel for task ...`, its log line `→ peer [state] (msg_id ...): text`), so a model
used to interlink reads taskfs's answers the same way. Where taskfs knows more (a commit, a
transition), the line says it after the dash, where interlink puts its delivery note.
"""

from __future__ import annotations

from typing import Any

from taskfs.core.presence import Routed, delivery_note

LIMIT = 20
NO_BUS = "no bus answered: the bridge chooses the session when it posts it"


def route_note(routed: Routed | None) -> str:
    """interlink's note on the target session's presence, or why none is known yet."""
    return NO_BUS if routed is None else delivery_note(routed)


def _dest(doc: dict[str, Any]) -> str:
    return f"{doc['to']}" + (f" ({doc['session']})" if doc.get("session") else "")


def sent(doc: dict[str, Any]) -> str:
    """`send_message`: the message (or the task it opened), the session it goes to and, for a
    peer, interlink's note on that session's presence."""
    task, status = doc.get("task_id"), doc.get("status")
    tag = f" [task {task} · {status}]" if task and status else f" [task {task}]" if task else ""
    if doc.get("opening"):
        note = f"task opened ({doc['state']}), recorded in git"
    else:
        note = f"committed to git ({str(doc.get('commit') or '')[:12]})"
        moved = doc.get("transition")
        if moved:
            note += f"; the task moved {moved['from']} -> {moved['to']}"
        if doc.get("checkRequested"):
            note += "; asks for the acceptance check (the task is not completed by it)"
    if doc.get("peer"):
        note = f"{doc['routeNote']}; {note}"
    return f"queued for {_dest(doc)} (msg_id {doc['msg_id']}){tag} — {note}"


def canceled(doc: dict[str, Any]) -> str:
    """`cancel_task`: interlink's line, with the session the cancel goes to."""
    return (
        f"sent cancel for task '{doc['task_id']}' to {_dest(doc)} (msg_id {doc['msg_id']}) — "
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
    """`list_pending`: what has not left yet: not accepted by a bus, not committed, not
    pushed."""
    rows = doc.get("messages") or []
    if not rows:
        where = "committed and pushed" if doc.get("upstream") else "committed"
        return f"nothing pending; all sent messages were accepted by the bus or {where}"
    lines = []
    for row in rows:
        why = f": {row['held']}" if row.get("held") else ""
        lines.append(f"→ {row.get('to')} (msg_id {row['msg_id']}) {row.get('pending')}{why}")
    return f"{len(rows)} pending:\n" + "\n".join(lines)
