"""The click commands: parse, call the library, render. No rule lives here.

Every command that answers a question or changes the ledger takes `--json` and then prints
exactly one JSON document on stdout. Exit status: 0 done, 1 refused (a named error) or a
failed check, 2 the command line itself was wrong. No input ends in a traceback.
"""

from __future__ import annotations

import click

from taskfs.cli.group import cli
from taskfs.cli.output import emit_json, refuse
from taskfs.core import shapes
from taskfs.errors import TaskfsError, problem

__all__ = ["cli", "run"]


def run(args: list[str]) -> int:
    wants_json = "--json" in args
    from taskfs import i18n
    from taskfs.cli.localize import localize

    # The language is needed before click parses anything: its usage errors and --help
    # (eager, so handled before the group's callback) are in the user's language too.
    i18n.choose(_lang_option(args))
    localize(cli)
    try:
        result = cli.main(args, prog_name="taskfs", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.UsageError as exc:
        _usage_error(exc, wants_json)
        return 2
    except TaskfsError as exc:  # a parameter refused by name (`taskfs.cli.ids`)
        return refuse(wants_json, exc.problems)
    except click.Abort:
        click.echo("Aborted.", err=True)
        return 130
    except click.ClickException as exc:
        _usage_error(exc, wants_json)
        return 2
    return int(result or 0)


def _lang_option(args: list[str]) -> str | None:
    """The value of the group's `--lang`, which comes before the command's name."""
    rest = iter(args)
    for arg in rest:
        if arg == "--lang":
            return next(rest, None)
        if arg.startswith("--lang="):
            return arg.partition("=")[2]
        if not arg.startswith("-"):
            return None
    return None


def _usage_error(exc: click.ClickException, wants_json: bool) -> None:
    if wants_json:
        emit_json(shapes.refusal([problem("usage", reason=exc.format_message())]))
    exc.show()


# The command modules register themselves on `cli` when imported.
from taskfs.cli import (  # noqa: E402,F401
    a2a,
    agents,
    amending,
    board,
    bridge,
    commands,
    evidence,
    hosts,
    intake,
    ownership,
    review,
    stuck,
    sync,
    watch,
    wire,
)


@cli.command()
@click.option("--keep", is_flag=True, help="Keep the throwaway repository and print where.")
def demo(keep: bool) -> int:
    """A complete delegation between two agents in a throwaway repository."""
    from taskfs.demo import run_demo

    return run_demo(run, keep=keep)
