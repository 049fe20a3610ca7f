"""interlink's five tools, under their own names and argument names, beside the agent_* tools.

Thin: each is one `taskfs.api.messages.interlink` call and its view; the rules are the library's. As
interlink's server does, each answers in one line of text for the model (its wording, in
`interlink_text`), while the structured content keeps taskfs's JSON document. Arguments are
typed and read as interlink's (`src/bin/interlink-mcp.rs`): every optional one may be null, an
empty `status` (or `session`, `task_id`, `in_reply_to`) is an absent one, `status` is any text,
trimmed, and one interlink does not know is named, `limit` is an unsigned 32-bit number, and
`to: "self"` names one's own identity. Where interlink answers a call with a JSON-RPC error
(`invalid_params`: an unknown status, a peer with no session to choose, a peer not admitted),
so does this; taskfs's own refusals (a transition not allowed, say) are tool errors naming
their codes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent
from pydantic import Field

from taskfs.api.context import acting_agent
from taskfs.api.messages import interlink
from taskfs.api.views import agents as views
from taskfs.core.display import safe
from taskfs.errors import TaskfsError
from taskfs.mcp import interlink_text as say
from taskfs.mcp.declared import MESSAGE, reads, shape, writes
from taskfs.mcp.tools import OptionalTaskIdValue, TaskIdValue, Tools, answer

To = Annotated[
    str,
    Field(description='The peer\'s agent name here (petname); "self": another session of yours.'),
]
Text = Annotated[
    str,
    Field(
        description="The message text. Without task_id, a YAML envelope opens a task "
        "addressed to `to`."
    ),
]
Session = Annotated[
    str | None,
    Field(description="The peer's session to reach (an unsigned hint)."),
]
TaskId = Annotated[
    OptionalTaskIdValue | None,
    Field(
        description="The task it is about; omit to open one (envelope text) or to go on with "
        "the last one exchanged with `to`."
    ),
]
Status = Annotated[
    str | None,
    Field(
        description="update, needs_input (asks; the task waits), result (asks for the "
        "acceptance check), failed or canceled; omit for a plain message or an answer."
    ),
]
InReplyTo = Annotated[
    str | None,
    Field(description="The msg_id this answers (a needs_input question)."),
]

SEND_MESSAGE = (
    "interlink: message a peer; an envelope without task_id opens a task. Unlike interlink, "
    '"result" asks for the acceptance check, not the end; a recipient\'s "update" claims it.'
)
CANCEL_TASK = (
    "interlink: abort a task you delegated (or one delegated to you) with a signed "
    "'canceled' status; cooperative, it stops nothing by force."
)
MESSAGE_STATUS = (
    "interlink: a message's delivery (pending: no bus took it yet, or not committed; sent: a "
    "bus took it, or committed for an agent here; read: marked read; received: one to you) "
    "and its task's state."
)
CONVERSATION_HISTORY = (
    "interlink: the recent messages between you and a peer (both directions), newest last."
)
LIST_PENDING = (
    "interlink: your messages not yet accepted by the bus (the bridge posts them), not yet "
    "committed, or not yet pushed."
)


# What interlink refuses with `invalid_params` before it queues anything.
PARAMS_ERRORS = frozenset({"session_unroutable", "recipient_unknown"})
U32_MAX = 2**32 - 1


def _params_error(exc: TaskfsError) -> MCPError | None:
    """The JSON-RPC error interlink answers with, when it would."""
    codes = {p.code for p in exc.problems}
    # A status interlink does not know (taskfs's own rules on a known one are tool errors).
    status = any(
        p.code == "invalid_value" and p.field == "status" and "value" in p.data
        for p in exc.problems
    )
    if not (codes <= PARAMS_ERRORS or (status and codes == {"invalid_value"})):
        return None
    # interlink's own words (its `invalid_params` message); the codes travel in `data`.
    message = "\n".join(say.params_line(p.code, p.data) for p in exc.problems)
    return MCPError(INVALID_PARAMS, message, {"errors": [p.to_json() for p in exc.problems]})


def _answer(
    call: Callable[[], dict[str, Any]],
    text: Callable[[dict[str, Any]], str],
    tool: str = "",
    *,
    refused: Callable[[dict[str, Any]], str | None] | None = None,
) -> CallToolResult:
    """`tools.answer`, except that what interlink refuses with a JSON-RPC error is one, and a
    refusal interlink has a line for (`refused`) reads as that line."""
    params: list[MCPError] = []

    def guarded() -> dict[str, Any]:
        try:
            return call()
        except TaskfsError as exc:
            error = _params_error(exc)
            if error is not None:
                params.append(error)
            raise

    result = answer(guarded, text, tool=tool)
    if params:
        raise params[0]
    line = refused(result.structured_content or {}) if refused and result.is_error else None
    if line is not None:
        result.content = [TextContent(type="text", text=safe(line))]
    return result


def register_interlink_tools(tools: Tools) -> None:
    s = tools.session

    def named(agent: str) -> str:
        if agent.strip().lower() == "self":
            return s.agent()
        return acting_agent(agent) or ""

    def send_message(  # noqa: PLR0917 (interlink's own argument list)
        to: To,
        text: Text,
        session: Session = None,
        task_id: TaskId = None,
        status: Status = None,
        in_reply_to: InReplyTo = None,
    ) -> CallToolResult:
        def call() -> dict[str, Any]:
            repo = s.repo()
            queued = interlink.send_message(
                repo,
                s.agent(),
                named(to),
                text,
                session=session,
                task_id=task_id,
                status=status,
                in_reply_to=in_reply_to,
            )
            row = views.sent_or_opened(queued.result)
            return {
                **row,
                **_routed(queued),
                "delivery": interlink.delivery(repo, s.agent(), queued),
            }

        return _answer(call, say.sent, tool="send_message")

    def cancel_task(
        to: Annotated[str, Field(description="The peer running the task, by its agent name.")],
        task_id: Annotated[TaskIdValue, Field(description="The task to abort.")],
        reason: Annotated[
            str | None,
            Field(description="Why, surfaced to the peer: the signed text of the message."),
        ] = None,
    ) -> CallToolResult:
        def call() -> dict[str, Any]:
            repo = s.repo()
            queued = interlink.cancel_task(repo, s.agent(), named(to), task_id, reason=reason)
            return {
                **views.sent_or_opened(queued.result),
                **_routed(queued),
                "delivery": interlink.delivery(repo, s.agent(), queued),
                "cooperative": True,
                "note": "recorded and committed; nothing was stopped by force: the worker sees "
                "the cancellation in its inbox and is expected to stop",
            }

        return _answer(call, say.canceled)

    def message_status(
        msg_id: Annotated[str, Field(description="The msg_id send_message returned.")],
    ) -> CallToolResult:
        def call() -> dict[str, Any]:
            found = interlink.message_status(s.repo(), msg_id, s.agent())
            return views.message_state(found)

        def unknown(doc: dict[str, Any]) -> str | None:
            codes = [e.get("code") for e in doc.get("errors", [])]
            return say.not_found(msg_id) if codes == ["message_not_found"] else None

        return _answer(call, lambda doc: say.status(doc, s.agent()), refused=unknown)

    def conversation_history(
        peer: Annotated[str, Field(description="The peer, by its agent name here.")],
        limit: Annotated[
            int | None,
            Field(
                ge=0,
                le=U32_MAX,
                description=f"How many recent messages to show (default {say.LIMIT}).",
            ),
        ] = None,
    ) -> CallToolResult:
        def call() -> dict[str, Any]:
            found = interlink.conversation_history(
                s.repo(),
                s.agent(),
                named(peer),
                session=s.session_name,
                limit=interlink.HISTORY_DEFAULT if limit is None else limit,
            )
            return {"peer": peer, "messages": [views.entry(e) for e in found]}

        return _answer(call, lambda doc: say.history(doc, s.agent()))

    def list_pending() -> CallToolResult:
        def call() -> dict[str, Any]:
            return views.outbox(interlink.list_pending(s.repo(), s.agent()))

        return _answer(call, lambda doc: say.pending(doc, s.agent()))

    status = shape("msg_id", "delivery", "message")
    tools.add(send_message, SEND_MESSAGE, writes(), shape("msg_id"), lines=True)
    cancels = writes(destructive=True, idempotent=True)
    tools.add(cancel_task, CANCEL_TASK, cancels, MESSAGE, lines=True)
    tools.add(message_status, MESSAGE_STATUS, reads(), status, lines=True)
    tools.add(conversation_history, CONVERSATION_HISTORY, reads(), shape("messages"), lines=True)
    tools.add(list_pending, LIST_PENDING, reads(), shape("messages"), lines=True)
    for name in ("send_message", "cancel_task", "message_status", "conversation_history"):
        listed = tools.server._tool_manager.get_tool(name)
        if listed is not None:
            listed.parameters = nullable(listed.parameters)


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """Every optional parameter may be null, as schemars types interlink's `Option<T>`
    (`"type": ["string", "null"]`), in that compact spelling."""
    required = set(schema.get("required", []))
    properties = {}
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type")
        optional = name not in required and isinstance(kind, str)
        properties[name] = {**prop, "type": [kind, "null"]} if optional else prop
    return {**schema, "properties": properties}


def _routed(queued: interlink.Queued) -> dict[str, Any]:
    """Where a message to a peer goes: its session, that session's presence, interlink's note."""
    chosen = queued.route
    if chosen is None:
        return {"peer": False}
    routed = chosen.routed
    return {
        "peer": True,
        "session": chosen.session,
        "presence": routed.presence if routed else None,
        "routeNote": say.route_note(routed),
    }
