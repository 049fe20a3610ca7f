"""Held work that is stuck: `taskfs reassign` hands it on (the stale-holder report itself is
part of `taskfs nudge`, `taskfs prime` and the board)."""

from __future__ import annotations

from typing import Any

import click

from taskfs import i18n
from taskfs.api.context import acting_agent
from taskfs.cli.group import agent_option, cli, json_option
from taskfs.cli.output import act, open_repo
from taskfs.core import shapes


@cli.command()
@click.argument("task_id")
@click.option("--to", "to", required=True, metavar="AGENT", help="Who takes the work over.")
@agent_option
@click.option("--reason", help="Why, added to the cancellation's reason.")
@json_option
def reassign(task_id: str, to: str, agent: str | None, reason: str | None, as_json: bool) -> int:
    """Hand a task you sent to another agent: cancel it and submit the same contract to them."""
    from taskfs.api.lifecycle import reassign as api

    def call() -> api.Reassigned:
        acting = acting_agent(agent) or ""
        target = acting_agent(to) or ""
        return api.reassign(open_repo(), task_id, target, acting, reason=reason)

    def show(done: api.Reassigned) -> tuple[dict[str, Any], str]:
        doc = shapes.document(
            True, id=done.id, state="canceled", newId=done.new_id, to=done.to, commit=done.commit
        )
        return doc, i18n.say(
            "{id}: canceled; {new_id}: submitted to {to}",
            id=done.id,
            new_id=done.new_id,
            to=done.to,
        )

    return act(as_json, call, show)
