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
from mcp.types import (
    CallToolResult,
    CompleteRequestParams,
    CompleteResult,
    Completion,
    EmptyResult,
    SetLevelRequestParams,
)
from pydantic import Field

from taskfs import __version__, i18n
from taskfs.api.capabilities import bind as capabilities
from taskfs.api.context import acting_agent
from taskfs.api.intake import requests
from taskfs.api.lifecycle import transitions
from taskfs.api.messages import sending as messages
from taskfs.api.messages import threads
from taskfs.api.tasks import lint, queries
from taskfs.api.tasks.submit import Source
from taskfs.api.views import agents as views
from taskfs.api.views.documents import evidence as evidence_rows
from taskfs.api.views.documents import moved
from taskfs.core.display import safe
from taskfs.errors import Problem, TaskfsError
from taskfs.mcp import intake as intake_tools
from taskfs.mcp.checking import CHECK, check_tool
from taskfs.mcp.contracts import register_contract_tools
from taskfs.mcp.declared import MESSAGE, TASK, reads, shape, writes
from taskfs.mcp.gate import Gate
from taskfs.mcp.inbox import register_inbox_tool
from taskfs.mcp.interlink import register_interlink_tools
from taskfs.mcp.sent import register_sent_tools
from taskfs.mcp.syncing import register_sync_tool
from taskfs.mcp.tools import OptionalTaskIdValue, Session, TaskIdValue, Tools, answer

INSTRUCTIONS = (
    "taskfs: tasks delegated between agents, kept as files in git. Start with agent_inbox; "
    "a refused call names its error codes."
)


def _moved(result: Any) -> dict[str, Any]:
    return moved(result)


TaskId = Annotated[TaskIdValue, Field(description="The task's id (agent_inbox lists them).")]
Text = Annotated[str, Field(description="Message text (signed).")]
Reason = Annotated[str, Field(description="Why, in a sentence; recorded with the transition.")]

SEND = (
    "Delegate a task. `envelope` is YAML; required keys: objective, outputFormat, "
    "toolAndSourceGuidance, boundaries, filesAndInterfaces, acceptanceCheck.passFailCommand, "
    "acceptanceCheck.endToEndVerification, contextID. filesAndInterfaces: path globs (or "
    "interface:NAME) the recipient owns; passFailCommand: shell, exit 0 = pass. Optional: to, "
    "id, dependsOn, parent, priority (0-4), labels. Incomplete: kept as a request; send "
    "the rest with its task_id."
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
            OptionalTaskIdValue | None, Field(description="Your request's id, to complete it.")
        ] = None,
    ) -> CallToolResult:
        def call() -> dict[str, Any]:
            repo = s.repo()
            # As `new --json`: what was submitted is never edited, so its weak points now.
            warnings = lint.advice(repo, [Source("envelope", envelope.encode())])
            result = requests.request(
                repo, s.agent(), envelope, task_id=task_id or None, door="mcp"
            )
            doc = intake_tools.document(result, s.agent())
            if doc.get("state") != "intake":
                doc["warnings"] = [w.to_json() for w in warnings]
            return doc

        return answer(call, tool="agent_send")

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
        return answer(lambda: say(task_id, text, in_reply_to=in_reply_to, intent="answer"))

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
        return answer(
            lambda: say(
                task_id, text, status="update", in_reply_to=in_reply_to, to=to, intent="note"
            )
        )

    agent_check = check_tool(tools)

    def agent_complete(
        task_id: TaskId,
        artifacts: Annotated[
            dict[str, str] | None,
            Field(description="What you produced: name -> location (path or URL)."),
        ] = None,
    ) -> CallToolResult:
        def call() -> dict[str, Any]:
            from taskfs.api.lifecycle import completing
            from taskfs.core.records import Artifact

            made = [Artifact(name=k, location=v) for k, v in (artifacts or {}).items()]
            return _moved(completing.complete(s.repo(), task_id, s.agent(), artifacts=made))

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
                return intake_tools.document(requests.read(repo, task_id), s.agent())
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
                "evidence": evidence_rows(task),
                "messages": [views.message(c) for c in thread.messages],
            }

        return answer(call)

    def agent_bind(task_id: TaskId) -> CallToolResult:
        return answer(lambda: views.bound(capabilities.bind(s.repo(), task_id, s.agent())))

    for fn, description, hints, output in (
        (agent_send, SEND, writes(), TASK),
        (
            agent_claim,
            "Claim a task addressed to you (submitted -> working).",
            writes(idempotent=True),
            TASK,
        ),
        (
            agent_ask,
            "Ask the task's sender a question (working -> input_required).",
            writes(),
            MESSAGE,
        ),
        (
            agent_answer,
            "Answer a question by its msg_id (input_required -> working).",
            writes(),
            MESSAGE,
        ),
        (
            agent_update,
            "Send a progress note or reply about a task; moves nothing.",
            writes(),
            MESSAGE,
        ),
        (agent_check, CHECK, writes(destructive=True, open_world=True), CHECKED),
        (agent_complete, COMPLETE, writes(idempotent=True), TASK),
        (
            agent_refuse,
            "Refuse a task addressed to you (submitted -> rejected).",
            writes(destructive=True, idempotent=True),
            TASK,
        ),
        (
            agent_fail,
            "Give up on your task, saying why (-> failed).",
            writes(destructive=True, idempotent=True),
            MESSAGE,
        ),
        (
            agent_cancel,
            "Cancel a task you sent (-> canceled); the worker is asked to stop.",
            writes(destructive=True, idempotent=True),
            MESSAGE,
        ),
        # A request that is not yet a task (an intake) has no envelope: only id and state are
        # always there.
        (agent_status, "A task's state, parties and envelope.", reads(), TASK),
        (
            agent_history,
            "A task's transitions, evidence and messages (with their msg_ids).",
            reads(),
            HISTORY,
        ),
        (
            agent_bind,
            "Your tools for a task: toolsAllowed within the capability ledger.",
            reads(),
            BOUND,
        ),
    ):
        tools.add(fn, description, hints, output)


CHECKED = shape("msg_id", "evidence", verdict={"enum": ["pass", "fail"]})
HISTORY = shape("id", "state", "history", "messages")
BOUND = shape("id", "toolsGranted", "envelope")


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
    gate = Gate()
    server: MCPServer[Any] = MCPServer(
        "taskfs",
        version=__version__,
        instructions=i18n.text(i18n.TOOLS, INSTRUCTIONS),
        log_level="WARNING",
        lifespan=_stdout_to_stderr,
        middleware=[gate],
    )
    tools = gate.tools = Tools(server, session)
    _utilities(server)
    register_agent_tools(tools)
    register_inbox_tool(tools)
    intake_tools.register_intake_tools(tools)
    register_contract_tools(tools)
    register_sent_tools(tools)
    register_sync_tool(tools)
    register_interlink_tools(tools)
    return tools


def _utilities(server: MCPServer[Any]) -> None:
    """The protocol's utilities, which a client may call on any server. `logging/setLevel`:
    taskfs sends no log messages (what it would log goes to stderr), so every level is taken
    and nothing is left to filter. `completion/complete`: taskfs has no prompts or resource
    templates, so nothing completes (an empty list)."""

    async def set_level(_ctx: Any, _params: SetLevelRequestParams) -> EmptyResult:
        return EmptyResult()

    async def complete(_ctx: Any, _params: CompleteRequestParams) -> CompleteResult:
        return CompleteResult(completion=Completion(values=[]))

    lowlevel = server._lowlevel_server
    lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)
    lowlevel.add_request_handler("completion/complete", CompleteRequestParams, complete)


def serve(
    agent: str | None, session: str | None = None, http: tuple[str, int] | None = None
) -> int:
    """Serve until the client closes stdin, or over HTTP at `http` (host, port) until
    interrupted. A bad agent name is refused before serving; so are, over HTTP, the refusals of
    `taskfs.mcp.http` (raised)."""
    name = agent or os.environ.get("TASKFS_AGENT") or None
    try:
        acting_agent(name, required=False)
    except TaskfsError as exc:
        _refuse(exc.problems)
        return 1
    routed = session or os.environ.get("TASKFS_SESSION") or None
    tools = build(Session(name, Path.cwd(), routed))
    if http is not None:
        from taskfs.mcp.http import serve_http

        return serve_http(tools, *http)
    from taskfs.mcp import framing

    framing.run(tools.server, tools.running)  # every line gets an answer
    return 0


def _refuse(problems: tuple[Problem, ...]) -> None:
    for found in problems:
        sys.stderr.write(safe(f"error[{found.code}]: {found.message}") + "\n")
