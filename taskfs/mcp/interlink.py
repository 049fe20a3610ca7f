"""interlink's five tools, under their own names and argument names, beside the agent_* tools.

Thin: each is one `taskfs.api.messages.interlink` call and its view; the rules are the library's. As
interlink's server does, each answers in one line of text for the model (its wording, in
`interlink_text`), while the structured content keeps taskfs's JSON document. Arguments are
read as interlink reads them: an empty `status` (or `session`, `task_id`, `in_reply_to`) is an
absent one, and `to: "self"` names one's own identity.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.types import CallToolResult
from pydantic import Field

from taskfs.api.context import acting_agent
from taskfs.api.messages import interlink
from taskfs.api.views import agents as views
from taskfs.mcp import interlink_text as say
from taskfs.mcp.declared import MESSAGE, reads, shape, writes
from taskfs.mcp.tools import Tools, answer

To = Annotated[
    str,
    Field(
        description='The peer, by its agent name here (its petname); "self" for your own '
        "identity (another session of yours)."
    ),
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
    Field(description="Which of the peer's sessions to reach (an unsigned routing hint)."),
]
TaskId = Annotated[
    str | None,
    Field(
        description="The task this message is about. Omit to open a task (an envelope text) "
        "or to continue the task last exchanged with `to`."
    ),
]
Status = Annotated[
    Literal["update", "needs_input", "result", "failed", "canceled", ""] | None,
    Field(
        description="needs_input asks (the task waits); result asks for the acceptance check; "
        "omit for a plain message or an answer."
    ),
]
InReplyTo = Annotated[
    str | None,
    Field(description='The msg_id this message answers (a "needs_input" question).'),
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
    "interlink: a message's delivery (pending: not committed; sent: committed; read: its "
    "addressee marked it) and its task's state."
)
CONVERSATION_HISTORY = (
    "interlink: the recent messages between you and a peer (both directions), newest last."
)
LIST_PENDING = "interlink: your messages not yet committed, or not yet pushed."


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
            result = interlink.send_message(
                s.repo(),
                s.agent(),
                named(to),
                text,
                session=session,
                task_id=task_id,
                status=status,
                in_reply_to=in_reply_to,
            )
            return views.sent_or_opened(result)

        return answer(call, say.sent, tool="send_message")

    def cancel_task(
        to: Annotated[str, Field(description="The peer running the task, by its agent name.")],
        task_id: Annotated[str, Field(description="The task to abort.")],
        reason: Annotated[
            str | None,
            Field(description="Why, surfaced to the peer: the signed text of the message."),
        ] = None,
    ) -> CallToolResult:
        def call() -> dict[str, Any]:
            sent = interlink.cancel_task(s.repo(), s.agent(), named(to), task_id, reason=reason)
            return {
                **views.sent(sent),
                "cooperative": True,
                "note": "recorded and committed; nothing was stopped by force: the worker sees "
                "the cancellation in its inbox and is expected to stop",
            }

        return answer(call, say.canceled)

    def message_status(
        msg_id: Annotated[str, Field(description="The msg_id send_message returned.")],
    ) -> CallToolResult:
        def call() -> dict[str, Any]:
            return views.message_state(interlink.message_status(s.repo(), msg_id))

        return answer(call, lambda doc: say.status(doc, s.agent()))

    def conversation_history(
        peer: Annotated[str, Field(description="The peer, by its agent name here.")],
        limit: Annotated[
            int | None,
            Field(description=f"How many recent messages to show (default {say.LIMIT})."),
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

        return answer(call, lambda doc: say.history(doc, s.agent()))

    def list_pending() -> CallToolResult:
        def call() -> dict[str, Any]:
            return views.outbox(interlink.list_pending(s.repo(), s.agent()))

        return answer(call, lambda doc: say.pending(doc, s.agent()))

    status = shape("msg_id", "delivery", "message")
    tools.add(send_message, SEND_MESSAGE, writes(), shape("msg_id"), lines=True)
    cancels = writes(destructive=True, idempotent=True)
    tools.add(cancel_task, CANCEL_TASK, cancels, MESSAGE, lines=True)
    tools.add(message_status, MESSAGE_STATUS, reads(), status, lines=True)
    tools.add(conversation_history, CONVERSATION_HISTORY, reads(), shape("messages"), lines=True)
    tools.add(list_pending, LIST_PENDING, reads(), shape("messages"), lines=True)
