"""Which transitions are signed, and by what key: the one place writers ask.

A status file is signed by its agent when this machine holds that agent's private key; a
repository with `requireSignedTransitions: true` refuses to write one that is not. Most
agents have no key: for them this costs one `stat`, and the signing library is never loaded.
"""

from __future__ import annotations

from typing import Any

from taskfs.errors import fail
from taskfs.store import keypaths
from taskfs.store.repository import Repository


def signed(repo: Repository, agent: str, document: dict[str, Any], action: str) -> dict[str, Any]:
    """`document` (a status file's fields, `by` = `agent`) carrying `agent`'s signature when
    this machine holds its key; refused with `agent_not_allowed` when the repository requires
    signed transitions and it cannot be signed, `key_invalid` when the key here is not the one
    the repository registered for `agent`."""
    required = repo.config.require_signed_transitions
    if not keypaths.has_private("agent", agent):
        if required:
            raise _unsigned(agent, action, f"no private key of {agent!r} is on this machine")
        return document
    from taskfs.core.transition_signing import sign_document
    from taskfs.store import keys

    pair = keys.load_private("agent", agent)
    registered = keys.public_key(repo.root, "agent", agent)
    if pair is None or registered is None:
        if required:
            why = f"{agent!r} has no registered key ({keypaths.public_rel('agent', agent)})"
            raise _unsigned(agent, action, why)
        return document
    if registered != pair.public:
        reason = (
            f"it is not the key registered for {agent!r} in "
            f"{keypaths.public_rel('agent', agent)}, so nothing it signs would verify"
        )
        raise fail("key_invalid", path=str(keys.private_path("agent", agent)), reason=reason)
    return sign_document(document, pair.private)


def _unsigned(agent: str, action: str, why: str) -> Exception:
    reason = (
        f"this repository requires signed transitions (requireSignedTransitions) and {why}; "
        f"`taskfs keys new --agent {agent}` makes one"
    )
    return fail("agent_not_allowed", agent=agent, action_text=action, reason=reason)
