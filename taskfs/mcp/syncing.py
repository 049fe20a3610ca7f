"""`agent_sync`: the ledger exchanged with the git remote, as `taskfs sync` does, for an agent
that has only the MCP tools (in a clone, it neither publishes its acts nor sees anyone else's
without it). The same api function and the same document as `sync --json`."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.types import CallToolResult
from pydantic import Field

from taskfs.api.sync import remote as sync
from taskfs.api.views import synced as views
from taskfs.mcp.declared import shape, writes
from taskfs.mcp.tools import Tools, answer

SYNC = (
    "In a clone: exchange the ledger with the git remote (fetch, merge, push), before looking "
    "for work and after acting. Your acts that lost to ones pushed first: demoted."
)


def register_sync_tool(tools: Tools) -> None:
    s = tools.session

    def agent_sync(
        remote: Annotated[str | None, Field(description="Default: the branch's upstream.")] = None,
    ) -> CallToolResult:
        def call() -> dict[str, Any]:
            done = sync.sync(s.repo(), remote=remote or None, agent=s.maybe_agent())
            return views.document(done)

        return answer(call)

    # It reaches the remote (open world), and may undo an unpublished transition that lost to
    # a published one (destructive); a second call right after changes nothing more.
    tools.add(
        agent_sync,
        SYNC,
        writes(destructive=True, idempotent=True, open_world=True),
        shape("integration"),
    )
