"""Which tasks `ready` offers an agent: the recipient rule.

Pure and import-free: the claim's gates (`taskfs.core.readiness`) and the listings answered from
the read model's store (`taskfs.readmodel.db`, `taskfs.store.index`) filter with this same one.
The filters of `ls` (`--state`, `--to`, `--context`) are the store's query
(`taskfs.readmodel.db.listing_rows`), on both paths.
"""

from __future__ import annotations


def offered_to(recipient: str | None, agent: str | None) -> bool:
    """Whether `agent` may claim a task addressed to `recipient` (anyone when there is none;
    every task when no agent is named)."""
    return agent is None or recipient is None or recipient == agent
