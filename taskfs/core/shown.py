"""Which tasks `ready` offers an agent: the recipient rule.

Pure and import-free: the claim's party rule (`taskfs.core.lifecycle`), its readiness
(`taskfs.core.readiness`) and the listings answered from the read model's store
(`taskfs.readmodel.listing`) all ask this same one (issue 35, item 8: one rule, stated once).
The filters of `ls` are `taskfs.readmodel.filters`, on both paths.
"""

from __future__ import annotations


def offered_to(recipient: str | None, agent: str | None) -> bool:
    """Whether `agent` may claim a task addressed to `recipient` (anyone when there is none;
    every task when no agent is named)."""
    return agent is None or recipient is None or recipient == agent
