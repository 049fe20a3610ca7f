"""Which transitions are signed, and by what key: the one place writers ask.

A status file is signed by its agent when this machine holds that agent's private key; a
repository with `requireSignedTransitions: true` refuses to write one that is not. Most
agents have no key: for them this costs one `stat`, and the signing library is never loaded.
"""

from __future__ import annotations

import re
from typing import Any

from taskfs.core.layout import CONFIG_PATH
from taskfs.errors import fail
from taskfs.store import keypaths
from taskfs.store.repository import Repository


def signed(repo: Repository, agent: str, document: dict[str, Any], action: str) -> dict[str, Any]:
    """`document` (a status file's fields, `by` = `agent`) carrying `agent`'s signature when
    this machine holds its key; refused with `agent_not_allowed` when the repository requires
    signed transitions and it cannot be signed, `key_invalid` when the key here is not the one
    the repository registered for `agent`."""
    required = requires_signatures(repo)
    if not keypaths.has_private("agent", agent):
        # A transition a message makes rests on that message, whose signature is the
        # sender's (a peer's key lives on the peer's machine): audit checks it there.
        if required and "message" not in document:
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


# What `taskfs init` writes for the default. A settings file whose every mention of the key is
# this line cannot require signatures; anything else is decided by the validated settings.
_DEFAULT_LINE = re.compile(rb"requireSignedTransitions: false[ \t]*(#[^\n]*)?")


def requires_signatures(repo: Repository) -> bool:
    """`requireSignedTransitions`, read without the settings' model when the text alone says
    it is off: a claim loads neither YAML nor pydantic."""
    try:
        data = (repo.root / CONFIG_PATH).read_bytes()
    except OSError:
        return repo.config.require_signed_transitions
    lines = data.splitlines()
    mentions = [line for line in lines if b"requireSignedTransitions" in line]
    if all(_DEFAULT_LINE.fullmatch(line) for line in mentions) and b"\\" not in data:
        return False
    return repo.config.require_signed_transitions


def _unsigned(agent: str, action: str, why: str) -> Exception:
    reason = (
        f"this repository requires signed transitions (requireSignedTransitions) and {why}; "
        f"`taskfs keys new --agent {agent}` makes one"
    )
    return fail("agent_not_allowed", agent=agent, action_text=action, reason=reason)
