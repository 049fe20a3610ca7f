"""`agent_check`: the recipient reports its result and the acceptance check runs, in one call.

The `result` message records the claim of a result (and asks a watcher for the check); the
check runs here, so the agent learns the verdict in the same call. The check runs in a worker
that a cancelled call or a closed client stops, and it reports progress while it runs
(`taskfs.mcp.running`). The message is committed once the run is over, just before its
evidence, and dated when the call began (so the evidence, named when the run started, still
follows the result it checks, and answers it): a check stopped half-way leaves nothing behind,
neither evidence nor a result that no evidence answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timezone
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from taskfs.api.evidence import checks as evidence
from taskfs.api.messages import sending as messages
from taskfs.api.views import agents as views
from taskfs.api.views import checks
from taskfs.errors import fail
from taskfs.mcp.running import Stopper, Watch
from taskfs.mcp.tools import TaskIdValue, Tools, answer

CHECK = (
    "Report your result and check it: commit your work first (evidence from uncommitted files "
    "completes nothing; workTree says). Sends `text` as the task's `result` message, runs the "
    "acceptance command here, records the evidence. verdict: pass or fail; output: the "
    "command's last lines. Completes nothing: on pass, call agent_complete."
)

TaskId = Annotated[TaskIdValue, Field(description="The task's id (agent_inbox lists them).")]
Result = Annotated[str, Field(description="Your result: what you did, where it is.")]


def check_tool(tools: Tools) -> Callable[..., Awaitable[CallToolResult]]:
    s = tools.session

    async def agent_check(task_id: TaskId, text: Result, ctx: Context) -> CallToolResult:
        def work(stop: Stopper, watch: Watch) -> CallToolResult:
            def call() -> dict[str, Any]:
                why = stop()
                if why is not None:  # stopped before anything was sent: nothing is
                    raise fail("check_stopped", command="agent_check", reason=why)
                # The request is committed after the run; what would refuse it refuses first.
                messages.refuse_check_request(s.repo(), task_id, s.agent(), text)
                sent: list[dict[str, Any]] = []
                # The result asked for the check, so it is dated before the run: its file sorts
                # before the evidence (named when the run started), which answers it; dated
                # after, a watcher took it for a request nobody had answered.
                asked = datetime.now(timezone.utc)

                def report() -> None:
                    result = messages.request_check(s.repo(), task_id, s.agent(), text, now=asked)
                    sent.append(views.sent(result))

                checked = evidence.check(
                    s.repo(),
                    task_id,
                    agent=s.agent(),
                    progress=watch,
                    stop=stop,
                    before_write=report,
                )
                return {**sent[0], **checks.document(checked)}

            return answer(call)

        async def progress(elapsed: float, line: str) -> None:
            await ctx.report_progress(elapsed, None, line or None)

        result: CallToolResult = await tools.running.run(work, progress)
        return result

    return agent_check
