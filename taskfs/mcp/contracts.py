"""The MCP tools that change what a contract is: `agent_discover` (a follow-up found while
working on a task, kept as a request to its sender) and `agent_amend` (the sender's new version
of a contract, or its holder's acceptance of one), as `taskfs discover` and `taskfs amend` do,
through the same api functions and with the same documents."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.types import CallToolResult
from pydantic import Field

from taskfs.api.intake import linked
from taskfs.api.tasks import amend as amending
from taskfs.api.views.amendments import amended
from taskfs.errors import fail
from taskfs.mcp.declared import TASK, shape, writes
from taskfs.mcp.intake import document
from taskfs.mcp.tools import TaskIdValue, Tools, answer

TaskId = Annotated[TaskIdValue, Field(description="The task's id.")]


def register_contract_tools(tools: Tools) -> None:
    s = tools.session

    def agent_discover(
        task_id: Annotated[TaskIdValue, Field(description="The task you found it in.")],
        text: Annotated[str, Field(description="What needs doing, in prose.")],
        to: Annotated[str | None, Field(description="Who for; default: its sender.")] = None,
    ) -> CallToolResult:
        def call() -> dict[str, Any]:
            found = linked.discover(s.repo(), task_id, s.agent(), text, to=to or None, door="mcp")
            return document(found, s.agent())

        return answer(call)

    def agent_amend(
        task_id: TaskId,
        envelope: Annotated[
            str | None, Field(description="Sender: the whole new envelope (YAML).")
        ] = None,
        reason: Annotated[str | None, Field(description="Why it changes.")] = None,
        accept: Annotated[bool, Field(description="Holder: accept the pending one.")] = False,
    ) -> CallToolResult:
        def call() -> dict[str, Any]:
            if accept:
                return amended(amending.accept(s.repo(), task_id, s.agent()))
            if not envelope:
                raise fail("usage", reason="give the whole new envelope, or accept=true")
            done = amending.amend(s.repo(), task_id, s.agent(), envelope, reason=reason)
            return amended(done)

        return answer(call, tool="agent_amend")

    tools.add(
        agent_discover,
        "File a follow-up found while working on a task: a request linked to it, to its "
        "sender (who proposes an envelope).",
        writes(),
        TASK,
    )
    tools.add(
        agent_amend,
        "Amend a task you sent (in force at once if unclaimed, else its holder accepts), or "
        "as its holder accept the pending amendment.",
        writes(),
        shape("id", "state", "inForce"),
    )
