"""`agent_inbox`: what waits for the agent, as `taskfs inbox --json` says it (compact records;
`full` for every record whole), answered from what it said the last time while nothing it rests
on changed (`taskfs.readmodel.answers`), as the command is."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.types import CallToolResult
from pydantic import Field

from taskfs.api.lifecycle.resume import standing_of
from taskfs.api.messages import delivery
from taskfs.api.messages import inbox as inbox_api
from taskfs.api.views import agents as views
from taskfs.mcp.declared import shape, writes
from taskfs.mcp.tools import Tools, answer

INBOX = shape("counts", "held", "toClaim", "questions", "results", "unread")


def register_inbox_tool(tools: Tools) -> None:
    s = tools.session

    def agent_inbox(
        mark_read: Annotated[
            bool, Field(description="Mark the unread messages shown as read.")
        ] = False,
        full: Annotated[bool, Field(description="Every record whole.")] = False,
        label: Annotated[str | None, Field(description="Only tasks with this label.")] = None,
    ) -> CallToolResult:
        def call() -> dict[str, Any]:
            repo, agent = s.repo(), s.agent()
            labels = [label] if label else []
            if not mark_read:  # what it answered the last time, while that still holds
                return stored_inbox(repo, agent, s.session_name, full, labels)
            box = inbox_api.inbox(repo, agent, session=s.session_name, labels=labels)
            if box.markable:
                delivery.mark_read(repo, agent, box.markable)
            return views.inbox(box, door="mcp", full=full, standing=standing_of(repo, box))

        return answer(call)

    tools.add(
        agent_inbox,
        "Start here: tasks you hold, questions to answer, results, unread.",
        writes(idempotent=True),  # mark_read marks what it shows as read
        INBOX,
    )


def stored_inbox(
    repo: Any, agent: str, session: str | None, full: bool, labels: list[str]
) -> dict[str, Any]:
    """`agent_inbox`'s document: stored the last time it was asked, while nothing it rests on
    changed (`taskfs.readmodel.answers`), else made and stored."""
    import json
    import time

    from taskfs.readmodel import answers, clock

    asked = ("agent_inbox", agent, session, full, tuple(labels))
    root = str(repo.root)
    found = answers.answer(asked, root)
    if found is not None:
        return dict(json.loads(found))
    where = answers.where(root)
    before = answers.identity(where[0], where[1], repo.tasks_rel) if where else ()
    stamp = time.time_ns()
    with clock.deferred() as recording:
        box = inbox_api.inbox(repo, agent, session=session, labels=labels)
        doc = views.inbox(box, door="mcp", full=full, standing=standing_of(repo, box))
        text = json.dumps(doc, ensure_ascii=False)
    if where is not None:
        answers.store(
            where[0], where[1], asked, before=before, stamp=stamp, text=text, recording=recording
        )
    return dict(json.loads(clock.fill(text, recording.nonce)))
