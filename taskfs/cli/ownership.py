"""`taskfs owners` and `taskfs guard`: who owns a path, and the check a commit must pass."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from taskfs import i18n
from taskfs.api.context import acting_agent
from taskfs.cli.group import agent_option, cli, json_option
from taskfs.cli.output import act, open_repo
from taskfs.core.shapes import document


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@json_option
def owners(paths: tuple[str, ...], as_json: bool) -> int:
    """Which open task owns each PATH (relative to here, or interface:NAME).

    A folder is answered with the tasks owning anything below it.
    """
    from taskfs.api.ownership import owners as ownership

    return act(as_json, lambda: ownership.owners(open_repo(), paths, Path.cwd()), _owners)


@cli.command()
@agent_option
@click.option(
    "--range",
    "rev_range",
    metavar="REV_RANGE",
    help="Check every commit of a range (as git log takes it, e.g. origin/main..HEAD), each "
    "with its author's name as the agent, instead of the staged changes.",
)
@json_option
@click.pass_context
def guard(ctx: click.Context, agent: str | None, rev_range: str | None, as_json: bool) -> int:
    """Refuse staged changes to files owned by another agent's open task (a pre-commit check).

    The agent is --agent or $TASKFS_AGENT, else the author name of the commit being made.
    """
    from taskfs.api.ownership import owners as ownership

    if rev_range is not None:
        if ctx.get_parameter_source("agent") == click.core.ParameterSource.COMMANDLINE:
            raise click.UsageError("--range judges each commit by its author: drop --agent")
        agent = None  # a TASKFS_AGENT in CI's environment says nothing about past commits

    def call() -> list[ownership.GuardedCommit]:
        return ownership.guard(
            open_repo(),
            acting_agent(agent, required=False),
            rev_range=rev_range,
            index_file=os.environ.get("GIT_INDEX_FILE") or None,
        )

    return act(as_json, call, lambda checked: _guarded(checked, rev_range))


def _owners(results: Any) -> tuple[dict[str, Any], str]:
    rows = []
    lines = []
    for result in results:
        listed = [
            {
                "id": o.id,
                "to": o.to,
                "holder": o.holder,
                "state": o.state,
                "entry": o.entry,
                **({"witness": o.witness} if o.witness is not None else {}),
            }
            for o in result.owners
        ]
        rows.append({"path": result.path, "folder": result.folder, "owners": listed})
        shown = (result.path or ".") + ("/" if result.folder and result.path else "")
        if not result.owners:
            lines.append(i18n.say("{path}: no open task owns it", path=shown))
        for o in result.owners:
            held = i18n.say(", held by {agent}", agent=o.holder) if o.holder else ""
            lines.append(
                i18n.say(
                    "{path}: {id} ({state}, to {to}{held}) via {entry}",
                    path=shown,
                    id=o.id,
                    state=o.state,
                    to=o.to or "-",
                    held=held,
                    entry=o.entry,
                )
            )
    return document(True, paths=rows), "\n".join(lines)


def _guarded(checked: Any, rev_range: str | None) -> tuple[dict[str, Any], str]:
    rows = [
        {"commit": c.commit, "agent": c.agent, "paths": list(c.paths)}
        | ({"author": c.author} if c.author is not None else {})
        for c in checked
    ]
    count = sum(len(c.paths) for c in checked)
    what = (
        i18n.say("{count} commits of {range}", count=len(checked), range=rev_range)
        if rev_range
        else i18n.say("the staged changes")
    )
    paths = i18n.say("1 path") if count == 1 else i18n.say("{count} paths", count=count)
    text = "taskfs guard: " + i18n.say("{what} ({paths}): clean", what=what, paths=paths)
    for c in checked:
        if c.author is not None and c.agent != c.author and c.paths:
            # `guard --range` (CI) judges a commit by its author: say when the two differ.
            text += (
                f"\nnote: checked as agent {c.agent!r}, but the commit's author is "
                f"{c.author!r}; `taskfs guard --range` judges commits by author name "
                "(commit as GIT_AUTHOR_NAME=$TASKFS_AGENT)"
            )
    return document(True, checked=rows), text
