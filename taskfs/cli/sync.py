"""`taskfs sync` and the rendering of `claim --sync`: parse, call the library, render."""

from __future__ import annotations

from typing import Any

import click

from taskfs.api.context import acting_agent
from taskfs.cli.group import agent_option, cli, json_option
from taskfs.cli.output import act, open_repo
from taskfs.core import shapes


@cli.command(name="sync")
@click.option("--remote", help="The remote to sync with (default: the branch's upstream).")
@agent_option
@json_option
def sync_command(remote: str | None, agent: str | None, as_json: bool) -> int:
    """Fetch, merge and push the ledger; forks are settled the same way on every clone."""
    from taskfs.api.sync import remote as sync

    def call() -> sync.Synced:
        return sync.sync(open_repo(), remote=remote, agent=acting_agent(agent, required=False))

    return act(as_json, call, synced)


def claim_synced(task_id: str, agent: str | None, as_json: bool) -> int:
    """`claim --sync`: claim, push, and lose to a claim that reached the remote first."""
    from taskfs.api.sync import remote as sync

    def call() -> sync.ClaimSynced:
        return sync.claim_sync(open_repo(), task_id, acting_agent(agent) or "")

    def show(result: sync.ClaimSynced) -> tuple[dict[str, Any], str]:
        doc = shapes.document(
            True,
            id=result.id,
            state=result.state,
            commit=result.commit,
            pushed=result.upstream.name,
            attempts=result.attempts,
        )
        return doc, f"{result.id}: {result.state} (pushed to {result.upstream.name})"

    return act(as_json, call, show)


def synced(result: Any) -> tuple[dict[str, Any], str]:
    from taskfs.api.views import synced as views

    doc = shapes.document(True, **views.document(result))
    fetched = result.fetched[:12] if result.fetched else "nothing"
    pushed = f"pushed {result.pushed[:12]}" if result.pushed else "nothing to push"
    tries = f" ({result.attempts} attempts)" if result.attempts > 1 else ""
    merged = {"none": "nothing to merge", "fast-forward": "fast-forwarded", "merge": "merged"}
    done = merged.get(result.integration, result.integration)
    lines = [f"{result.upstream.name}: fetched {fetched}, {done}, {pushed}{tries}"]
    for d in result.demoted:
        fate = f"renamed {d.now}" if d.now else "withdrawn"
        lines.append(
            f"lost to a published transition: {d.id} {d.file} by {d.lost.by} ({fate}); "
            f"{d.lost.winner_state} by {d.lost.winner_by} was pushed first"
        )
    lines += [f"superseded: {lost.text()}" for lost in result.superseded]
    return doc, "\n".join(lines)
