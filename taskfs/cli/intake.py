"""`taskfs intake`: requests that are not yet a contract (contract section 12).

`open` keeps a request (prose, or a partial envelope) and names what it lacks; `add` sends
more of it (the missing fields, or the whole envelope) and submits the task once it is whole;
`propose` is the recipient's envelope drawn from the words; `accept` takes it as the
requester's own; `cancel` closes it. `taskfs show ID` and `taskfs ls` show intakes too.
"""

from __future__ import annotations

import sys

import click

from taskfs.api.context import acting_agent
from taskfs.cli import render
from taskfs.cli.group import agent_option, cli, json_option
from taskfs.cli.ids import TASK_ID
from taskfs.cli.output import act, open_repo


@cli.group()
def intake() -> None:
    """Requests that are not yet a contract: keep, complete, propose, accept, cancel."""


def _words(text: str | None, file: str | None) -> str:
    """The request's words: TEXT, or - for stdin, or the bytes of --file, as UTF-8."""
    from taskfs.api.context import read_input
    from taskfs.errors import fail

    if (text is None) == (file is None):
        raise fail("usage", reason="give the request as TEXT (or - for stdin), or --file FILE")
    if file is None and text != "-":
        return text or ""
    data = read_input(file or "-", sys.stdin.buffer)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise fail("yaml_invalid", reason="the request is not UTF-8") from None


@intake.command("open")
@click.argument("text", required=False)
@click.option("--file", "file", metavar="FILE", help="Read the request from FILE.")
@click.option("--to", "to", metavar="AGENT", help="Who the request is for.")
@click.option(
    "--id",
    "task_id",
    metavar="ID",
    type=TASK_ID,
    help="The id to keep it under (default: a new one).",
)
@agent_option
@json_option
def open_(  # noqa: PLR0917 - the command's arguments, as click reads them
    text: str | None,
    file: str | None,
    to: str | None,
    task_id: str | None,
    agent: str | None,
    as_json: bool,
) -> int:
    """Keep a request (prose, or a partial envelope) and name what it lacks."""
    from taskfs.api.intake import requests

    return act(
        as_json,
        lambda: requests.open_request(
            open_repo(),
            acting_agent(agent) or "",
            _words(text, file),
            to=acting_agent(to, required=False),
            task_id=task_id,
        ),
        render.intake,
    )


@intake.command()
@click.argument("task_id", metavar="ID", type=TASK_ID)
@click.argument("text", required=False)
@click.option("--file", "file", metavar="FILE", help="Read the fields from FILE.")
@agent_option
@json_option
def add(task_id: str, text: str | None, file: str | None, agent: str | None, as_json: bool) -> int:
    """The requester's missing fields (or whole envelope, or more words) for its intake."""
    from taskfs.api.intake import requests

    return act(
        as_json,
        lambda: requests.add_request(
            open_repo(), task_id, acting_agent(agent) or "", _words(text, file)
        ),
        render.intake,
    )


@intake.command()
@click.argument("task_id", metavar="ID", type=TASK_ID)
@click.argument("file", metavar="FILE")
@agent_option
@json_option
def propose(task_id: str, file: str, agent: str | None, as_json: bool) -> int:
    """The recipient proposes an envelope; only the requester's acceptance submits it."""
    from taskfs.api.intake import proposals

    return act(
        as_json,
        lambda: proposals.propose(
            open_repo(), task_id, acting_agent(agent) or "", _words(None, file)
        ),
        render.intake,
    )


@intake.command()
@click.argument("task_id", metavar="ID", type=TASK_ID)
@click.option(
    "--proposal",
    metavar="ID|DIGEST",
    help="The proposal you read (its proposalId or proposalDigest, as show prints them).",
)
@click.option(
    "--to", "to", metavar="AGENT", help="Who the task is for, when the request named nobody."
)
@agent_option
@json_option
def accept(
    task_id: str, proposal: str | None, to: str | None, agent: str | None, as_json: bool
) -> int:
    """The requester takes the proposal it read as its envelope (submitting the task)."""
    from taskfs.api.intake import proposals, requests

    def call() -> requests.Answer:
        acting = acting_agent(agent) or ""
        target = acting_agent(to, required=False)
        return proposals.accept(open_repo(), task_id, acting, proposal=proposal, to=target)

    return act(as_json, call, render.intake)


@intake.command()
@click.argument("task_id", metavar="ID", type=TASK_ID)
@click.option("--reason", help="Why it is canceled.")
@agent_option
@json_option
def cancel(task_id: str, reason: str | None, agent: str | None, as_json: bool) -> int:
    """Close an open intake (its requester or its recipient)."""
    from taskfs.api.intake import requests

    return act(
        as_json,
        lambda: requests.cancel(open_repo(), task_id, acting_agent(agent) or "", reason=reason),
        render.intake,
    )


@cli.command()
@click.argument("task_id", metavar="ID", type=TASK_ID)
@click.argument("text", required=False)
@click.option("--file", "file", metavar="FILE", help="Read the words from FILE.")
@click.option("--to", "to", metavar="AGENT", help="Who it is for (default: the task's sender).")
@click.option(
    "--id",
    "new_id",
    metavar="ID",
    type=TASK_ID,
    help="The id to keep it under (default: a new one).",
)
@agent_option
@json_option
def discover(  # noqa: PLR0917 - the command's arguments, as click reads them
    task_id: str,
    text: str | None,
    file: str | None,
    to: str | None,
    new_id: str | None,
    agent: str | None,
    as_json: bool,
) -> int:
    """File a follow-up found while working on task ID: a request linked to it."""
    from taskfs.api.intake import linked

    return act(
        as_json,
        lambda: linked.discover(
            open_repo(),
            task_id,
            acting_agent(agent) or "",
            _words(text, file),
            to=acting_agent(to, required=False),
            task_id=new_id,
        ),
        render.intake,
    )
