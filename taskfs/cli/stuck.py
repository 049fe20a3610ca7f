"""Work that is stuck or failed: `taskfs reassign` hands it on, `taskfs retry` tries it again
(the quiet and stale holders are reported by `taskfs sent`, `inbox`, `nudge`, `prime` and the
board)."""

from __future__ import annotations

from typing import Any

import click

from taskfs import i18n
from taskfs.api.context import acting_agent
from taskfs.cli.group import agent_option, cli, json_option
from taskfs.cli.ids import TASK_ID
from taskfs.cli.output import act, open_repo
from taskfs.core import shapes


@cli.command()
@click.argument("task_id", type=TASK_ID)
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

    return act(as_json, call, handed_on)


def handed_on(done: Any) -> tuple[dict[str, Any], str]:
    """The answer of `reassign` and `retry`."""
    from taskfs.api.views.sent import handed_on as view

    doc = shapes.document(True, **view(done))
    if done.kind == "retry":
        return doc, i18n.say(
            "{id}: retried; {new_id}: submitted to {to}",
            id=done.id,
            new_id=done.new_id,
            to=done.to or i18n.say("anyone"),
        )
    return doc, i18n.say(
        "{id}: canceled; {new_id}: submitted to {to}",
        id=done.id,
        new_id=done.new_id,
        to=done.to,
    )


@cli.command()
@click.argument("task_id", type=TASK_ID)
@click.option(
    "--to",
    "to",
    metavar="AGENT",
    help="Who tries it this time (default: the same recipient).",
)
@agent_option
@json_option
def retry(task_id: str, to: str | None, agent: str | None, as_json: bool) -> int:
    """Try a failed or rejected task you sent again: its contract, as a new linked task."""
    from taskfs.api.lifecycle import reassign as api

    def call() -> api.Reassigned:
        acting = acting_agent(agent) or ""
        target = acting_agent(to, required=False) if to is not None else None
        return api.retry(open_repo(), task_id, acting, to=target)

    return act(as_json, call, handed_on)


@cli.command()
@agent_option
@click.option(
    "--label",
    "labels",
    multiple=True,
    metavar="LABEL",
    help="Only tasks carrying this label (repeated: every one of them).",
)
@json_option
def sent(agent: str | None, labels: tuple[str, ...], as_json: bool) -> int:
    """The tasks you sent: state, age, how long the holder has been quiet, refusals."""
    from taskfs.api.lifecycle import sent as api
    from taskfs.api.views import sent as views

    def call() -> list[Any]:
        return api.sent(open_repo(), acting_agent(agent) or "", labels=labels)

    def show(rows: list[Any]) -> tuple[dict[str, Any], str]:
        doc = shapes.document(True, tasks=[views.row(r) for r in rows])
        lines = []
        for r in rows:
            flag = ""
            if r.needs_you or r.quiet:
                flag = "  " + views.line(r)
            elif r.successor:
                flag = "  " + i18n.say("-> {id}", id=r.successor)
            marks = " ".join(
                ([f"P{r.priority}"] if r.priority is not None else []) + list(r.labels)
            )
            flag = f"  {marks}{flag}" if marks else flag
            lines.append(
                f"{r.id:<20} {r.state:<15} {r.to or '-':<12} {r.holder or '-':<12} "
                f"{views.duration(r.age_minutes):>7} {views.duration(r.quiet_minutes):>7}{flag}"
            )
        if not lines:
            return doc, i18n.say("you sent no tasks")
        head = (
            f"{'id':<20} {i18n.say('state'):<15} {i18n.say('to'):<12} {i18n.say('holder'):<12} "
            f"{i18n.say('age'):>7} {i18n.say('quiet'):>7}"
        )
        return doc, "\n".join([head, *lines])

    return act(as_json, call, show)
