"""The bodies of the hottest commands, free of click.

The click commands (`taskfs.cli.commands`) and the fast path that skips click
(`taskfs.cli.fast`) both call these, so that a command prints the same document whichever
way its arguments were read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from taskfs.cli import render
from taskfs.cli.output import act, acting_agent, open_repo


def ls(state: str | None, to: str | None, context: str | None, as_json: bool) -> int:
    from taskfs.api import listing

    return act(
        as_json,
        lambda: listing.ls(open_repo(), state=state, to=to, context=context),
        render.task_list,
    )


def ready(agent: str | None, as_json: bool) -> int:
    from taskfs.api import listing

    return act(
        as_json,
        lambda: listing.ready(open_repo(), acting_agent(agent, required=False)),
        render.task_list,
    )


def transition(
    task_id: str,
    target: str,
    agent: str | None,
    reason: str | None,
    as_json: bool,
    *,
    artifacts: Sequence[Any] = (),
) -> int:
    from taskfs.api import transitions

    return act(
        as_json,
        lambda: transitions.transition(
            open_repo(),
            task_id,
            target,
            acting_agent(agent) or "",
            reason=reason,
            artifacts=artifacts,
        ),
        render.moved,
    )


def claim(task_id: str, agent: str | None, as_json: bool) -> int:
    """`claim`: submitted -> working; a task the agent already holds is said so, exit 0."""
    from taskfs.api import claiming

    def show(result: Any) -> tuple[dict[str, Any], str]:
        if isinstance(result, claiming.Held):
            doc = render.document(True, id=result.id, state=result.state, already=True)
            return doc, f"{result.id}: already yours ({result.state}); nothing changed"
        return render.moved(result)

    return act(
        as_json, lambda: claiming.claim(open_repo(), task_id, acting_agent(agent) or ""), show
    )
