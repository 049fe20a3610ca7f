"""Which tasks `ready` offers an agent, and in which order: the recipient rule, the rank.

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


# A task that names no priority is in the middle of beads' 0-4 (`core.envelope`).
DEFAULT_PRIORITY = 2


def rank(priority: int | None, submitted_at: str | None, task_id: str) -> str:
    """The key `ready` orders by, as text that sorts as it should (the read model's store
    orders by it too): the most urgent first (priority 0), then the oldest (the time of the
    transition into `submitted`, UTC ISO 8601, which sorts as text), then the id."""
    level = DEFAULT_PRIORITY if priority is None else priority
    return f"{level}|{_utc(submitted_at)}|{task_id}"


def _utc(at: str | None) -> str:
    """`at` as `layout.format_time` writes it (what a writer of another clone or version wrote
    with an offset is brought to UTC first); empty when there is none."""
    if not at:
        return ""
    if at.endswith("Z") and len(at) == 27:
        return at
    from taskfs.core.layout import format_time, parse_time_or_none

    moment = parse_time_or_none(at)
    return "" if moment is None else format_time(moment)
