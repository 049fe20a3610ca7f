"""Listings answered from the ledger cache: `ls` and `ready`.

They are called thousands of times a day, so this module imports nothing heavy: no pydantic,
no YAML. What they answer is what the full reader would (store/index.py says why).
"""

from __future__ import annotations

from taskfs.core.shown import listed
from taskfs.readmodel.projection import Summary
from taskfs.store import index
from taskfs.store.index import summaries
from taskfs.store.repository import Repository


def ls(
    repo: Repository,
    *,
    state: str | None = None,
    to: str | None = None,
    context: str | None = None,
) -> list[Summary]:
    return [
        t
        for t in summaries(repo).values()
        if t.listed  # an envelope the watcher has not taken in yet is not a task
        and listed(
            t.state,
            t.envelope.recipient,
            t.envelope.context_id,
            wanted_state=state,
            wanted_to=to,
            wanted_context=context,
        )
    ]


def ready(repo: Repository, agent: str | None = None) -> list[Summary]:
    """The tasks a claim would succeed on now (by `agent`, when one is named): the same rules
    as the claim's gates, answered from the ledger cache."""
    from taskfs.core.readiness import claimable

    return claimable(summaries(repo), agent)


def head_moved_elsewhere(root: str, git_dir: str, token: bytes, tasks_rel: str) -> bool:
    """Whether the prepared listings (under `token`) still hold although HEAD moved, because
    the move changed nothing in the tasks folder (a commit of code); the fast path asks this
    (`taskfs.readmodel.prepared.answer`) rather than answer through the full listing."""
    return index.settle_moved_head(root, git_dir, token, tasks_rel)
