"""Listings answered from the read model's store: `ls` and `ready`.

They are called thousands of times a day, so this module imports nothing heavy: no pydantic,
no YAML. What they answer is what the full reader would (store/index.py says why).
"""

from __future__ import annotations

from typing import Any

from taskfs.readmodel.projection import Summary
from taskfs.store import index
from taskfs.store.repository import Repository


def ls(repo: Repository, *, archived: bool = False, **filters: Any) -> list[Summary]:
    """The tasks `ls` shows (an envelope the watcher has not taken in yet is not a task),
    filtered (`--state`, `--to`, `--context`, `--label`, `--grep`: `readmodel.db.FILTERS`);
    with `archived`, the tasks `taskfs archive` took out of the working tree."""
    return index.listing(repo, archived=archived, **filters)


def ready(repo: Repository, agent: str | None = None, **filters: Any) -> list[Summary]:
    """The tasks a claim would succeed on now (by `agent`, when one is named): the same rules
    as the claim's gates (`taskfs.core.readiness`), kept in the store; filtered as `ls`."""
    return index.ready(repo, agent, **filters)


def catch_up(root: str) -> bool:
    """Bring the read model of the checkout at `root` up to HEAD, when HEAD moved since it
    was settled; the fast path asks this (`taskfs.readmodel.db.answer`) rather than answer
    through the full listing."""
    return index.catch_up(root)
