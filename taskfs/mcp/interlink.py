"""interlink's five tools, under their own names and argument names, beside the agent_* tools.

Thin: each is one `taskfs.api.interlink` call and its view; the rules are the library's.
"""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult

from taskfs.api import agent_views as views
from taskfs.api import interlink
from taskfs.cli.output import acting_agent
from taskfs.mcp.server import Tools, answer


def register_interlink_tools(tools: Tools) -> None:
    s = tools.session

    def named(agent: str) -> str:
        return acting_agent(agent) or ""

    def send_message(  # noqa: PLR0917 (interlink's own argument list)
        to: str,
        text: str,
        session: str | None = None,
        task_id: str | None = None,
        status: str | None = None,
        in_reply_to: str | None = None,
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

        return answer(call)

    def cancel_task(to: str, task_id: str) -> CallToolResult:
        def call() -> dict[str, Any]:
            sent = interlink.cancel_task(s.repo(), s.agent(), named(to), task_id)
            return {
                **views.sent(sent),
                "cooperative": True,
                "note": "recorded and committed; nothing was stopped by force: the worker sees "
                "the cancellation in its inbox and is expected to stop",
            }

        return answer(call)

    def message_status(msg_id: str) -> CallToolResult:
        return answer(lambda: views.message_state(interlink.message_status(s.repo(), msg_id)))

    def conversation_history(peer: str) -> CallToolResult:
        def call() -> dict[str, Any]:
            found = interlink.conversation_history(
                s.repo(), s.agent(), named(peer), session=s.session_name
            )
            return {"peer": peer, "messages": [views.entry(e) for e in found]}

        return answer(call)

    def list_pending() -> CallToolResult:
        return answer(lambda: views.outbox(interlink.list_pending(s.repo(), s.agent())))

    tools.add(send_message, "interlink: message a peer; an envelope without task_id opens a task.")
    tools.add(cancel_task, "interlink: cancel a task (cooperative: stops nothing by force).")
    tools.add(message_status, "interlink: pending, sent or read, and the task's state.")
    tools.add(conversation_history, "interlink: the messages between you and a peer, oldest first.")
    tools.add(list_pending, "interlink: your messages not yet committed, or not yet pushed.")
