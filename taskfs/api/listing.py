"""Listings answered from the ledger cache: `ls` and `ready`.

They are called thousands of times a day, so this module imports nothing heavy: no pydantic,
no YAML. What they answer is what the full reader would (store/index.py says why).
"""

from __future__ import annotations

from taskfs.store import index
from taskfs.store.index import Summary, summaries
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
        if t.length  # an envelope that no intake has taken yet is not a task
        and (state is None or t.state == state)
        and (to is None or t.envelope.recipient == to)
        and (context is None or t.envelope.context_id == context)
    ]


def ready(repo: Repository, agent: str | None = None) -> list[Summary]:
    """The tasks a claim would succeed on now (by `agent`, when one is named): the same rules
    as the claim's gates, answered from the ledger cache."""
    from taskfs.api import rules

    tasks = summaries(repo)
    graph = rules.dependency_graph(t.envelope for t in tasks.values())
    parents = rules.parent_map(t.envelope for t in tasks.values())
    return [
        task
        for task in tasks.values()
        if task.state == "submitted"
        and task.length
        and not task.problems
        and (agent is None or task.envelope.recipient in (None, agent))
        and not rules.unfinished_dependencies(task, tasks)
        and not rules.rivals(task, tasks, graph, parents)
    ]


def ls_json(
    repo: Repository,
    *,
    state: str | None = None,
    to: str | None = None,
    context: str | None = None,
) -> str | None:
    """`ls --json`'s document, joined from the rows the ledger cache keeps rendered; None when
    the cache has to catch up first (then `ls` answers, and brings it up to date)."""
    from taskfs.api.views import SCHEMA_VERSION

    shown = index.listed(repo)
    if shown is None:
        return None
    rows = [
        text
        for task_state, task_to, task_context, text in shown
        if (state is None or task_state == state)
        and (to is None or task_to == to)
        and (context is None or task_context == context)
    ]
    return f'{{"schemaVersion": {SCHEMA_VERSION}, "ok": true, "tasks": [{", ".join(rows)}]}}'
