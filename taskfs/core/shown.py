"""Which tasks a listing shows: the filters of `ls` and the recipient rule of `ready`.

Pure and import-free: the full listings (`taskfs.api.tasks.listing`, `taskfs.core.readiness`) and
the prepared answers that skip them (`taskfs.readmodel.prepared`) filter with these same two.
"""

from __future__ import annotations


def listed(
    state: str,
    to: str | None,
    context: str,
    *,
    wanted_state: str | None,
    wanted_to: str | None,
    wanted_context: str | None,
) -> bool:
    """Whether `ls --state --to --context` shows a task in `state`, addressed `to`, of
    `context` (an option not given shows every task)."""
    return (
        (wanted_state is None or state == wanted_state)
        and (wanted_to is None or to == wanted_to)
        and (wanted_context is None or context == wanted_context)
    )


def offered_to(recipient: str | None, agent: str | None) -> bool:
    """Whether `agent` may claim a task addressed to `recipient` (anyone when there is none;
    every task when no agent is named)."""
    return agent is None or recipient is None or recipient == agent
