"""The sender's MCP tools: the tasks it sent (`agent_tasks`, as `taskfs sent`), and handing
one on (`agent_reassign`) or trying it again (`agent_retry`), as the commands of the same
names do, through the same api functions and with the same documents."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.types import CallToolResult
from pydantic import Field

from taskfs.api.context import acting_agent
from taskfs.api.lifecycle import reassign as handing
from taskfs.api.lifecycle import sent as api
from taskfs.api.views import sent as views
from taskfs.mcp.declared import reads, shape, writes
from taskfs.mcp.tools import TaskIdValue, Tools, answer

TaskId = Annotated[TaskIdValue, Field(description="A task you sent.")]
HANDED_ON = shape("id", "newId", "newState")


def register_sent_tools(tools: Tools) -> None:
    s = tools.session

    def agent_tasks(
        label: Annotated[str | None, Field(description="Only tasks with this label.")] = None,
    ) -> CallToolResult:
        def call() -> dict[str, Any]:
            labels = [label] if label else []
            return {"tasks": [views.row(r) for r in api.sent(s.repo(), s.agent(), labels=labels)]}

        return answer(call)

    def agent_reassign(
        task_id: TaskId,
        to: Annotated[str, Field(description="The agent that takes it over.")],
        reason: Annotated[str, Field(description="Why, for the record.")] = "",
    ) -> CallToolResult:
        def call() -> dict[str, Any]:
            target = acting_agent(to) or ""
            done = handing.reassign(s.repo(), task_id, target, s.agent(), reason=reason or None)
            return views.handed_on(done)

        return answer(call)

    def agent_retry(
        task_id: TaskId,
        to: Annotated[str | None, Field(description="Who tries it (default: the same).")] = None,
    ) -> CallToolResult:
        def call() -> dict[str, Any]:
            target = acting_agent(to, required=False)
            return views.handed_on(handing.retry(s.repo(), task_id, s.agent(), to=target))

        return answer(call)

    tools.add(
        agent_tasks,
        "Tasks you sent: state, holder, ageMinutes, quietMinutes (quiet: its holder went "
        "quiet), endedBy/reason (refused or failed), successor.",
        reads(),
        shape("tasks"),
    )
    tools.add(
        agent_reassign,
        "Hand a task you sent to another agent: cancels it, sends its contract to `to`.",
        writes(destructive=True),
        HANDED_ON,
    )
    tools.add(
        agent_retry,
        "Send a refused or failed task's contract again as a new task; tasks that depended on "
        "it wait for the new one.",
        writes(),
        HANDED_ON,
    )
