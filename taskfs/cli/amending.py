"""`taskfs amend`: the sender's new version of a contract, and its holder's acceptance of it
(`taskfs.api.tasks.amend`)."""

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
@click.argument("task_id", metavar="ID", type=TASK_ID)
@click.argument("file", required=False, metavar="[FILE]")
@click.option("--reason", help="Why the contract changes (recorded with it).")
@click.option(
    "--accept", "accepting", is_flag=True, help="As its holder: accept the pending amendment."
)
@click.option("--amendment", metavar="NAME", help="With --accept: which (default: the latest).")
@agent_option
@json_option
def amend(  # noqa: PLR0917 - the command's arguments, as click reads them
    task_id: str,
    file: str | None,
    reason: str | None,
    accepting: bool,
    amendment: str | None,
    agent: str | None,
    as_json: bool,
) -> int:
    """Amend a task you sent (FILE: the whole new envelope; - for stdin), or accept one."""
    from taskfs.api.tasks import amend as api

    def call() -> Any:
        from taskfs.errors import fail

        me = acting_agent(agent) or ""
        if accepting:
            if file is not None:
                raise fail("usage", reason="--accept takes no FILE: the amendment is the sender's")
            return api.accept(open_repo(), task_id, me, amendment=amendment)
        if file is None:
            raise fail("usage", reason="name the new envelope: taskfs amend ID FILE (or --accept)")
        return api.amend(open_repo(), task_id, me, _text(file), reason=reason)

    def show(done: Any) -> tuple[dict[str, Any], str]:
        from taskfs.api.views.amendments import amended

        return shapes.document(True, **amended(done)), said(done)

    return act(as_json, call, show)


def said(done: Any) -> str:
    changed = ", ".join(done.changed)
    if done.in_force:
        return i18n.say("{id}: the contract in force changes ({keys})", id=done.id, keys=changed)
    return i18n.say(
        "{id}: amendment kept ({keys}); its holder accepts it with taskfs amend {id} --accept",
        id=done.id,
        keys=changed,
    )


def _text(file: str) -> str:
    import sys

    from taskfs.api.context import read_input
    from taskfs.errors import fail

    try:
        return read_input(file, sys.stdin.buffer).decode("utf-8")
    except UnicodeDecodeError:
        raise fail("yaml_invalid", reason="the envelope is not UTF-8") from None
