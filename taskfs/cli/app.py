"""The click commands: parse, call the library, render. No rule lives here.

Every command that answers a question or changes the ledger takes `--json` and then prints
exactly one JSON document on stdout. Exit status: 0 done, 1 refused (a named error) or a
failed check, 2 the command line itself was wrong. No input ends in a traceback.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from taskfs.cli import render
from taskfs.core import ids
from taskfs.errors import Problem, TaskfsError, fail, problem

T = TypeVar("T")
# A renderer answers (JSON document, text for people). The text may be a function, called only
# when it is printed, so that `--json` never pays for rendering tables.
Renderer = Callable[[T], tuple[dict[str, Any], "str | Callable[[], str]"]]


def run(args: list[str]) -> int:
    wants_json = "--json" in args
    try:
        result = cli.main(args, prog_name="taskfs", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.UsageError as exc:
        _usage_error(exc, wants_json)
        return 2
    except click.Abort:
        click.echo("Aborted.", err=True)
        return 130
    except click.ClickException as exc:
        _usage_error(exc, wants_json)
        return 2
    return int(result or 0)


def _usage_error(exc: click.ClickException, wants_json: bool) -> None:
    if wants_json:
        emit_json(render.refusal([problem("usage", reason=exc.format_message())]))
    exc.show()


def emit_json(doc: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")


def act(as_json: bool, call: Callable[[], T], show: Renderer[T]) -> int:
    """Call the library; print its answer or its refusal; return the exit status."""
    try:
        result = call()
    except TaskfsError as exc:
        refuse(as_json, exc.problems)
        return 2 if "usage" in exc.codes else 1
    except Exception as exc:
        if os.environ.get("TASKFS_DEBUG"):
            traceback.print_exc()
        reason = f"{type(exc).__name__}: {exc}"
        return refuse(as_json, [problem("internal_error", reason=reason)])
    doc, text = show(result)
    if as_json:
        emit_json(doc)
    else:
        shown = text() if callable(text) else text
        if shown:
            click.echo(shown)
    return 0 if doc.get("ok", True) else 1


def refuse(as_json: bool, problems: list[Problem] | tuple[Problem, ...]) -> int:
    if as_json:
        emit_json(render.refusal(problems))
    for found in problems:
        where = found.data.get("source") or found.data.get("path")
        prefix = f"{where}: " if where else ""
        click.echo(f"error[{found.code}]: {prefix}{found.message}", err=True)
    return 1


def acting_agent(agent: str | None, *, required: bool = True) -> str | None:
    """The --agent value (or TASKFS_AGENT), checked to be a valid agent name."""
    if agent is None or agent == "":
        if required:
            raise fail("agent_required")
        return None
    if not ids.is_agent_name(agent):
        raise fail("invalid_agent", value=agent)
    return agent


def open_repo() -> Any:
    from taskfs.store.repository import Repository

    return Repository.open(Path.cwd())


json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
agent_option = click.option(
    "--agent",
    envvar="TASKFS_AGENT",
    help="The acting agent (default: $TASKFS_AGENT).",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="taskfs", message="taskfs %(version)s")
@click.option(
    "--lang",
    metavar="LANG",
    help="Language of error messages, e.g. tr (default: $TASKFS_LANG, then the locale). "
    "Codes never change.",
)
def cli(lang: str | None) -> None:
    """Task envelopes for delegating work between agents, kept as files in git."""
    from taskfs import i18n

    # Always set, so that one process running several commands (tests, hosts) forgets it.
    i18n.choose(lang)


# The command modules register themselves on `cli` when imported.
from taskfs.cli import (  # noqa: E402,F401
    agents,
    commands,
    evidence,
    hosts,
    ownership,
    review,
    sync,
    watch,
)
