"""The intake's MCP tools (contract section 12): a recipient proposes an envelope for a request
that is not yet a contract, and the requester accepts it as its own. `agent_send` keeps
requests (prose, a partial envelope) and completes them; these two finish the conversation."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.types import CallToolResult
from pydantic import Field

from taskfs.api.intake import proposals, requests
from taskfs.api.views import intake as views
from taskfs.mcp.declared import TASK, writes
from taskfs.mcp.tools import TaskIdValue, Tools, answer

TaskId = Annotated[TaskIdValue, Field(description="The request's id (agent_inbox lists them).")]
Envelope = Annotated[str, Field(description="The envelope you propose, as YAML.")]


def document(result: requests.Answer | Any, agent: str | None = None) -> dict[str, Any]:
    """The answer of a door act: an intake's document, or a task submitted at once. `next`
    is the step of `agent` (the caller): the requester's (send what it lacks, or accept the
    proposal), or, for the recipient that proposed, to wait for that acceptance."""
    if isinstance(result, requests.Answer):
        doc = views.document(result.intake, result.problems, submitted=result.submitted)
        if doc["state"] == "intake":
            doc["next"] = views.next_step(result.intake, "mcp", agent)
        if result.accepted is not None:
            doc["accepted"] = result.accepted
        if result.envelope is not None:
            doc["envelope"] = result.envelope
        return doc
    return {"id": result.id, "state": result.state}


def register_intake_tools(tools: Tools) -> None:
    s = tools.session

    def agent_propose(task_id: TaskId, envelope: Envelope) -> CallToolResult:
        return answer(
            lambda: document(proposals.propose(s.repo(), task_id, s.agent(), envelope), s.agent())
        )

    def agent_accept(
        task_id: TaskId,
        proposal: Annotated[
            str | None,
            Field(description="The proposalId or proposalDigest you read."),
        ] = None,
    ) -> CallToolResult:
        # Who the task is for is the requester's own word: a proposal naming a recipient the
        # request did not is refused here; the requester says it with agent_send on the id.
        def call() -> dict[str, Any]:
            return document(
                proposals.accept(s.repo(), task_id, s.agent(), proposal=proposal), s.agent()
            )

        return answer(call)

    tools.add(
        agent_propose,
        "Propose an envelope for a request addressed to you that is not yet a task; only the "
        "requester's agent_accept submits it.",
        writes(),
        TASK,
    )
    tools.add(
        agent_accept,
        "Accept the proposal you read for your request: it becomes a task.",
        writes(idempotent=True),
        TASK,
    )
