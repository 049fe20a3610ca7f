"""The hottest questions, answered without loading the command-line framework.

Agents ask `taskfs ls --json` and `taskfs ready --json` constantly, so these two skip click
and the forty command definitions it would build: the arguments are read here, the same
library call is made and the same document printed (`taskfs.cli.output`). Anything this does
not recognise exactly (another option, a bad value, `--help`, text output for people) returns
None, and click handles it as usual, error messages included.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from taskfs.core.lifecycle import STATES

OPTIONS = {"ls": ("--state", "--to", "--context"), "ready": ("--agent",)}


def run(args: Sequence[str]) -> int | None:
    """The exit status, or None when click should handle these arguments."""
    if not args or args[0] not in OPTIONS or "--json" not in args:
        return None
    command, values = args[0], _options(args[1:], OPTIONS[args[0]])
    if values is None:
        return None
    if values.get("--state") not in (None, *STATES):
        return None  # click names the allowed states
    from taskfs.api import listing
    from taskfs.cli import render
    from taskfs.cli.output import act, acting_agent, open_repo

    if command == "ls":
        joined = _ls_from_cache(values)
        if joined is not None:
            sys.stdout.write(joined + "\n")
            return 0
        return act(
            True,
            lambda: listing.ls(
                open_repo(),
                state=values.get("--state"),
                to=values.get("--to"),
                context=values.get("--context"),
            ),
            render.task_list,
        )
    agent = values.get("--agent", os.environ.get("TASKFS_AGENT"))
    return act(
        True,
        lambda: listing.ready(open_repo(), acting_agent(agent, required=False)),
        render.task_list,
    )


def _ls_from_cache(values: dict[str, str]) -> str | None:
    from taskfs.api import listing
    from taskfs.cli.output import open_repo
    from taskfs.errors import TaskfsError

    try:
        return listing.ls_json(
            open_repo(),
            state=values.get("--state"),
            to=values.get("--to"),
            context=values.get("--context"),
        )
    except TaskfsError:
        return None  # the full path names what is wrong


def _options(args: Sequence[str], known: Sequence[str]) -> dict[str, str] | None:
    values: dict[str, str] = {}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--json":
            continue
        name, eq, value = arg.partition("=")
        if name not in known or name in values:
            return None
        if not eq:
            if not rest:
                return None
            value = rest.pop(0)
        values[name] = value
    return values
