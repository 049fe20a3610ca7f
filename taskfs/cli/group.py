"""The `taskfs` click group and the options every command shares.

The command modules register themselves on `cli` when `taskfs.cli.app` imports them; they
import the group from here, so that nothing imports `app` but its callers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from taskfs.cli.options import AGENT, JSON

F = TypeVar("F", bound=Callable[..., Any])

# Every command's --json and --agent, spelled once with the fast path's (`taskfs.cli.options`).
json_option = click.option(JSON.name, JSON.dest, is_flag=True, help=JSON.help)
agent_option = click.option(AGENT.name, AGENT.dest, envvar=AGENT.envvar, help=AGENT.help)


def listen_options(port: int) -> Callable[[F], F]:
    """`--host` and `--port` of a command that serves HTTP (`a2a serve`, `mcp --http`)."""

    def apply(command: F) -> F:
        command = click.option(
            "--port",
            type=click.IntRange(0, 65535),
            default=port,
            show_default=True,
            help="Port to listen on (0: any free port; the URL is printed on stdout).",
        )(command)
        return click.option(
            "--host", default="127.0.0.1", show_default=True, help="Address to listen on."
        )(command)

    return apply


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
