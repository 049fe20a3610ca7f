"""`taskfs mcp`: the agent tools over the Model Context Protocol, on stdio.

Each tool is a thin call into the same `taskfs.api` function as the CLI and answers with the
same JSON document as the CLI's `--json`: as text (for the model to read) and as structured
content. A refusal is a tool error (`isError`) whose document carries the named codes.

The acting agent is named once per server (`--agent`, else `TASKFS_AGENT`), and so is the
session, one of several under that name (`--session`, else `TASKFS_SESSION`), which filters
what the inbox and conversation tools show. Nothing but
protocol reaches stdout: the SDK points file descriptor 1 at stderr while it serves, and the
server's lifespan points `sys.stdout` there too, so a stray print cannot corrupt the stream.

More tools are added with `Tools.add`; `taskfs.mcp.interlink` serves interlink's five tools
beside these.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from taskfs import __version__
from taskfs.api.capabilities import bind as capabilities
from taskfs.api.context import acting_agent
from taskfs.api.evidence import checks as evidence
from taskfs.api.intake import requests
from taskfs.api.lifecycle import transitions
from taskfs.api.messages import delivery, threads
from taskfs.api.messages import inbox as inbox_api
from taskfs.api.messages import sending as messages
from taskfs.api.tasks import queries
from taskfs.api.views import agents as views
from taskfs.core import shapes
from taskfs.errors import Problem, TaskfsError
from taskfs.mcp import intake as intake_tools
from taskfs.mcp.interlink import register_interlink_tools
from taskfs.mcp.tools import Session, Tools, answer

INSTRUCTIONS = (
    "taskfs: tasks delegated between agents, kept as files in git. Start with agent_inbox; "
    "a refused call names its error codes."
)


def _moved(result: transitions.Moved) -> dict[str, Any]:
    return shapes.transition(result.id, result.state, result.commit)


TaskId = Annotated[str, Field(description="The task's id (agent_inbox lists yours).")]
Text = Annotated[str, Field(description="The message text, signed and committed.")]
Reason = Annotated[str, Field(description="Why, in a sentence; recorded with the transition.")]

SEND = (
    "Delegate a task. `envelope` is YAML; required keys: objective, outputFormat, "
    "toolAndSourceGuidance, boundaries, filesAndInterfaces, acceptanceCheck.passFailCommand, "
    "acceptanceCheck.endToEndVerification, contextID. filesAndInterfaces: path globs (or "
    "interface:NAME) the recipient owns; passFailCommand: shell, exit 0 = pass. Optional: to, "
    "id, dependsOn, parent. Incomplete: kept as a request; send the rest with its task_id."
)
CHECK = (
    "Report your result and check it: sends `text` as the task's `result` message (the same "
    "as the CLI's `send --status result`), then runs the acceptance command here and records "
    "the evidence. ok/verdict say pass or fail. Completes nothing: on pass, call agent_complete."
)
COMPLETE = (
    "Complete your working task (-> completed). Needs passing evidence from agent_check on "
    "the current files; refused otherwise."
)


def register_agent_tools(tools: Tools) -> None:
    s = tools.session

    def say(task_id: str, text: str, **options: Any) -> dict[str, Any]:
        sent = messages.send(s.repo(), task_id, s.agent(), text, **options)
        return views.sent(sent)

    def move(
        task_id: str, state: str, reason: str | None = None, artifacts: Any = ()
    ) -> dict[str, Any]:
        moved = transitions.transition(
            s.repo(), task_id, state, s.agent(), reason=reason, artifacts=artifacts
        )
        return _moved(moved)

    def agent_send(
        envelope: Annotated[str, Field(description="The envelope, as YAML text.")],
        task_id: Annotated[
            str | None, Field(description="Your request's id, to complete it.")
        ] = None,
    ) -> CallToolResult:
        def call() -> dict[str, Any]:
            result = requests.request(
                s.repo(), s.agent(), envelope, task_id=task_id or None, door="mcp"
            )
            return intake_tools.document(result)

        return answer(call, tool="agent_send")

    def agent_inbox(
        mark_read: Annotated[
            bool, Field(description="Mark the unread messages shown as read.")
        ] = False,
    ) -> CallToolResult:
        def call() -> dict[str, Any]:
            repo, agent = s.repo(), s.agent()
            box = inbox_api.inbox(repo, agent, session=s.session_name)
            if mark_read and box.unread:
                delivery.mark_read(repo, agent, [c.record.msg_id for c in box.unread])
            return views.inbox(box)

        return answer(call)

    def agent_claim(task_id: TaskId) -> CallToolResult:
        def call() -> dict[str, Any]:
            from taskfs.api.lifecycle import claiming

            result = claiming.claim(s.repo(), task_id, s.agent())
            if isinstance(result, claiming.Held):
                return {"id": result.id, "state": result.state, "already": True}
            return _moved(result)

        return answer(call)

    def agent_ask(task_id: TaskId, text: Text) -> CallToolResult:
        return answer(lambda: say(task_id, text, status="needs_input"))

    def agent_answer(
        task_id: TaskId,
        in_reply_to: Annotated[
            str, Field(description="The question's msg_id (a unique prefix, or 'last').")
        ],
        text: Text,
    ) -> CallToolResult:
        return answer(lambda: say(task_id, text, in_reply_to=in_reply_to))

    def agent_update(
        task_id: TaskId,
        text: Text,
        in_reply_to: Annotated[
            str | None, Field(description="The msg_id this replies to, if any.")
        ] = None,
        to: Annotated[
            str | None, Field(description="Recipient; default: the task's other party.")
        ] = None,
    ) -> CallToolResult:
        return answer(lambda: say(task_id, text, status="update", in_reply_to=in_reply_to, to=to))

    def agent_check(
        task_id: TaskId,
        text: Annotated[str, Field(description="Your result: what you did, where it is.")],
    ) -> CallToolResult:
        # The `result` message records the claim of a result (and asks a watcher for the check);
        # the check then runs here, so the agent learns the verdict in the same call.
        def call() -> dict[str, Any]:
            sent = views.sent(messages.request_check(s.repo(), task_id, s.agent(), text))
            checked = evidence.check(s.repo(), task_id, agent=s.agent())
            return {
                **sent,
                "ok": checked.passed,
                "verdict": checked.verdict,
                "evidence": checked.evidence,
            }

        return answer(call)

    def agent_complete(
        task_id: TaskId,
        artifacts: Annotated[
            dict[str, str] | None,
            Field(description="What you produced: name -> location (path or URL)."),
        ] = None,
    ) -> CallToolResult:
        def call() -> dict[str, Any]:
            from taskfs.core.records import Artifact

            made = [Artifact(name=k, location=v) for k, v in (artifacts or {}).items()]
            return move(task_id, "completed", artifacts=made)

        return answer(call)

    def agent_refuse(task_id: TaskId, reason: Reason) -> CallToolResult:
        return answer(lambda: move(task_id, "rejected", reason))

    def agent_fail(task_id: TaskId, reason: Reason) -> CallToolResult:
        return answer(lambda: say(task_id, reason, status="failed"))

    def agent_cancel(
        task_id: TaskId,
        reason: Annotated[str, Field(description="Why, shown to the worker.")] = "",
    ) -> CallToolResult:
        return answer(lambda: say(task_id, reason, status="canceled"))

    def agent_status(task_id: TaskId) -> CallToolResult:
        def call() -> dict[str, Any]:
            repo = s.repo()
            if requests.is_request(repo, task_id):
                return intake_tools.document(requests.read(repo, task_id))
            task = queries.show(repo, task_id)
            return {**views.summary(task), "envelope": task.envelope.to_document()}

        return answer(call)

    def agent_history(task_id: TaskId) -> CallToolResult:
        def call() -> dict[str, Any]:
            repo = s.repo()
            task = queries.show(repo, task_id)
            thread = threads.messages(repo, task_id)
            return {
                "id": task.id,
                "state": task.state,
                "history": _history(task),
                "messages": [views.message(c) for c in thread.messages],
            }

        return answer(call)

    def agent_bind(task_id: TaskId) -> CallToolResult:
        return answer(lambda: views.bound(capabilities.bind(s.repo(), task_id, s.agent())))

    for fn, description in (
        (agent_send, SEND),
        (agent_inbox, "Start here: tasks you hold, questions to answer, results, unread."),
        (agent_claim, "Claim a task addressed to you (submitted -> working)."),
        (agent_ask, "Ask the task's sender a question (working -> input_required)."),
        (agent_answer, "Answer a question by its msg_id (input_required -> working)."),
        (agent_update, "Send a progress note or reply about a task; moves nothing."),
        (agent_check, CHECK),
        (agent_complete, COMPLETE),
        (agent_refuse, "Refuse a task addressed to you (submitted -> rejected)."),
        (agent_fail, "Give up on your task, saying why (-> failed)."),
        (agent_cancel, "Cancel a task you sent (-> canceled); the worker is asked to stop."),
        (agent_status, "A task's state, parties and envelope."),
        (agent_history, "A task's transitions and messages (with their msg_ids)."),
        (agent_bind, "Your tools for a task: toolsAllowed within the capability ledger."),
    ):
        tools.add(fn, description)


def _history(task: Any) -> list[dict[str, Any]]:
    from taskfs.api.views.documents import history

    return history(task)


@contextlib.asynccontextmanager
async def _stdout_to_stderr(_server: MCPServer[Any]) -> AsyncIterator[dict[str, Any]]:
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        yield {}
    finally:
        sys.stdout = saved


def build(session: Session) -> Tools:
    server: MCPServer[Any] = MCPServer(
        "taskfs",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        lifespan=_stdout_to_stderr,
    )
    tools = Tools(server, session)
    register_agent_tools(tools)
    intake_tools.register_intake_tools(tools)
    register_interlink_tools(tools)
    return tools


def serve(agent: str | None, session: str | None = None) -> int:
    """Serve until the client closes stdin. A bad agent name is refused before serving."""
    name = agent or os.environ.get("TASKFS_AGENT") or None
    try:
        acting_agent(name, required=False)
    except TaskfsError as exc:
        _refuse(exc.problems)
        return 1
    routed = session or os.environ.get("TASKFS_SESSION") or None
    from taskfs.mcp import framing

    framing.run(build(Session(name, Path.cwd(), routed)).server)  # every line gets an answer
    return 0


def _refuse(problems: tuple[Problem, ...]) -> None:
    for found in problems:
        sys.stderr.write(f"error[{found.code}]: {found.message}\n")
