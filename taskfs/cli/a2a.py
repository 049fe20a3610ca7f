"""`taskfs a2a`: the repository as an A2A agent (`serve`), and tasks delegated to a remote A2A
agent, mirrored here (`send`, `follow`). The A2A SDK is imported only when one of these runs."""

from __future__ import annotations

import click

from taskfs.cli.app import agent_option, cli
from taskfs.cli.output import acting_agent, open_repo, refuse
from taskfs.errors import TaskfsError


@cli.group()
def a2a() -> None:
    """Speak Agent2Agent (A2A 1.0): serve this ledger, or delegate to a remote agent."""


@a2a.command()
@agent_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=9470,
    show_default=True,
    help="Port to listen on (0: any free port; the URL is printed on stdout).",
)
def serve(agent: str | None, host: str, port: int) -> int:
    """Serve the repository as A2A agent AGENT until interrupted."""
    try:
        name = acting_agent(agent) or ""
        repo = open_repo()
        from taskfs.a2a.server import serve as run

        return run(repo.root, name, host, port)
    except TaskfsError as exc:
        return refuse(False, exc.problems)
