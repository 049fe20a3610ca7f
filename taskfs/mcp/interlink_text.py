"""The one-line text answers of interlink's five tools, made from taskfs's JSON documents.

The wording is interlink's `src/bin/interlink-mcp.rs`, word for word wherever interlink has a
line for the case (`queued for ... (msg_id ...) — <its presence note>`, `sent cancel for task
...`, its log line `→ peer [state] (msg_id ...): text`, `nothing pending; ...`, `N pending:`,
`no message with msg_id ...`, and its `invalid_params` messages), so a model used to interlink
reads taskfs's answers the same way; what taskfs knows more (a commit, a transition, why a
message waits) is in the structured content. Where interlink has no line (a message to an agent
of this ledger, which a commit delivers), the line says what happened after the dash.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from taskfs.core.presence import Routed, delivery_note

LIMIT = 20
NO_BUS = "no bus answered: the bridge chooses the session when it posts it"


def params_line(code: str, data: Mapping[str, Any]) -> str:
    """The `invalid_params` message interlink answers with, for what taskfs refuses as it
    does: a peer not admitted (`Policy::resolve`), a peer with no session to choose
    (`route_session`, `resolve_session`), a status it does not know."""
    if code == "recipient_unknown":
        return f"unknown peer '{data.get('agent')}'"
    if code == "session_unroutable" and data.get("interlink"):
        return str(data["interlink"])
    return str(data.get("reason") or code)


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
    if doc.get("peer"):
        # interlink's line, word for word: what taskfs knows more (the commit, a transition)
        # is in the structured content.
        note = doc["routeNote"]
    elif doc.get("opening"):
        note = f"task opened ({doc['state']}), recorded in git"
    elif doc.get("request"):
        note = f"request opened ({doc['state']}), recorded in git"
    else:
        note = f"committed to git ({str(doc.get('commit') or '')[:12]})"
        moved = doc.get("transition")
        if moved:
            note += f"; the task moved {moved['from']} -> {moved['to']}"
        if doc.get("checkRequested"):
            note += "; asks for the acceptance check (the task is not completed by it)"
    return f"queued for {_dest(doc)} (msg_id {doc['msg_id']}){tag} — {note}"


def canceled(doc: dict[str, Any]) -> str:
    """`cancel_task`: interlink's line, with the session the cancel goes to."""
    return f"sent cancel for task '{doc['task_id']}' to {_dest(doc)} (msg_id {doc['msg_id']})"


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
        return "nothing pending; all sent messages were accepted by the bus"
    # Why each waits (not committed, not pushed, held by the bridge) is in the structure.
    lines = [f"→ {row.get('to')} (msg_id {row['msg_id']})" for row in rows]
    return f"{len(rows)} pending:\n" + "\n".join(lines)


def not_found(msg_id: str) -> str:
    """`message_status` of an id nobody wrote: interlink's line."""
    return f"no message with msg_id '{msg_id}' in the log"
