"""`taskfs a2a`: the repository as an A2A agent (`serve`), and tasks delegated to a remote A2A
agent, mirrored here (`send`, `follow`). The A2A SDK is imported only when one of these runs."""

from __future__ import annotations

from typing import Any

import click

from taskfs.api.context import acting_agent
from taskfs.cli.group import agent_option, cli, json_option, listen_options
from taskfs.cli.ids import TASK_ID
from taskfs.cli.output import open_repo, refuse
from taskfs.core.display import safe
from taskfs.errors import TaskfsError


@cli.group()
def a2a() -> None:
    """Speak Agent2Agent (A2A 1.0): serve this ledger, or delegate to a remote agent."""


@a2a.command()
@agent_option
@listen_options(9470)
def serve(agent: str | None, host: str, port: int) -> int:
    """Serve the repository as A2A agent AGENT until interrupted."""
    try:
        name = acting_agent(agent) or ""
        repo = open_repo()
        from taskfs.a2a.server import serve as run

        return run(repo.root, name, host, port)
    except TaskfsError as exc:
        return _refused(False, exc)


@a2a.command()
@click.argument("url")
@click.argument("file")
@agent_option
@click.option("--detach", is_flag=True, help="Return once the remote agent has the task.")
@json_option
def send(url: str, file: str, agent: str | None, detach: bool, as_json: bool) -> int:
    """Delegate the envelope FILE to the A2A agent at URL and mirror its task here."""
    try:
        name = acting_agent(agent) or ""
        repo = open_repo()
        from taskfs.api.context import read_input

        data = read_input(file)
        from taskfs.a2a.mirror import run_send

        outcomes = run_send(repo.root, name, url, file, data, detach=detach)
    except TaskfsError as exc:
        return _refused(as_json, exc)
    return _report(outcomes, as_json)


@a2a.command()
@click.argument("task_ids", nargs=-1, type=TASK_ID)
@agent_option
@json_option
def follow(task_ids: tuple[str, ...], agent: str | None, as_json: bool) -> int:
    """Go on mirroring delegated tasks (every open one when none is named) to their end."""
    try:
        name = acting_agent(agent, required=False)
        repo = open_repo()
        from taskfs.a2a.mirror import run_follow

        outcomes = run_follow(repo.root, list(task_ids), name)
    except TaskfsError as exc:
        return _refused(as_json, exc)
    return _report(outcomes, as_json)


def _report(outcomes: list[Any], as_json: bool) -> int:
    from taskfs.cli.output import emit_json
    from taskfs.core.shapes import document

    ok = all(o.ok for o in outcomes)
    if as_json:
        emit_json(document(ok, tasks=[o.to_json() for o in outcomes]))
    else:
        for o in outcomes:
            remote = f" (remote: {o.remote_state})" if o.remote_state else ""
            # A remote agent's words: shown escaped, never obeyed by the terminal.
            click.echo(safe(f"{o.id}: {o.state}{remote}"))
            for note in o.notes:
                click.echo(safe(f"  {note}"))
            if o.evidence:
                click.echo(safe(f"  evidence: {o.evidence}"))
    return 0 if ok else 1


def _refused(as_json: bool, exc: TaskfsError) -> int:
    refuse(as_json, exc.problems)
    return 2 if "usage" in exc.codes else 1
