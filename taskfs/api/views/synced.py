"""A sync's answer (`taskfs.api.sync.remote.Synced`) as the command line's `sync --json` and
MCP's `agent_sync` give it: the remote and branch, what was fetched, merged and pushed, and the
unpublished transitions that lost to published ones."""

from __future__ import annotations

from typing import Any


def document(result: Any) -> dict[str, Any]:
    """The fields of a sync's answer besides `ok`."""
    return {
        "remote": result.upstream.remote,
        "branch": result.upstream.branch,
        "fetched": result.fetched,
        "integration": result.integration,
        "head": result.head,
        "pushed": result.pushed,
        "attempts": result.attempts,
        "demoted": [{**d.lost.to_json(), "file": d.file, "now": d.now} for d in result.demoted],
        "superseded": [lost.to_json() for lost in result.superseded],
    }
