"""Which acts are signed, and by what key: the one place writers ask.

Every ledger file that records an agent's act (a status file, an intake file, a read mark, an
archive file, a revocation: `taskfs.core.ledger_kinds`) is signed by that agent when this
machine holds its private key. When the agent has a key standing (`keys.standing_key`) and its
private part is not here, taskfs writes nothing in its name: the file would be a forgery that
`audit` names (`signature_required`, citing the kind's rule). The one exception is a transition
that a signed message made (a peer's message: the key lives on the peer's machine), which rests
on that message. A repository with `requireSignedTransitions: true` also refuses a transition
by an agent that has no key at all. Most agents have no key: for them this costs a `stat` of
the private key, one of the public key and a folder listing, and the signing library is never
loaded.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import TYPE_CHECKING, Any

from taskfs.core.layout import CONFIG_PATH
from taskfs.errors import fail
from taskfs.store import keypaths
from taskfs.store.repository import Repository

if TYPE_CHECKING:
    from taskfs.core.signing import KeyPair


def signed(repo: Repository, agent: str, document: dict[str, Any], action: str) -> dict[str, Any]:
    """`document` (a status file's fields, `by` = `agent`) carrying `agent`'s signature when
    this machine holds its key; refused with `signature_required` when `agent` has a key and
    it is not here, `agent_not_allowed` when the repository requires signed transitions and it
    cannot be signed, `key_invalid` when the key here is not the one the repository registered
    for `agent`."""
    return Signer(repo, agent).status(document, action)


def sign_act(
    repo: Repository,
    agent: str,
    kind: str,
    document: dict[str, Any],
    action: str,
    *,
    vouched: bool = False,
) -> dict[str, Any]:
    """`document`, an act of `agent` of ledger kind `kind`, signed with `agent`'s key when it
    is here (`taskfs.core.act_signing`). Refused with `signature_required` when `agent` has a
    key standing and this machine does not hold it (unless `vouched`: a signed message that
    made the act carries the signature), and with `key_invalid` when the key here is not the
    one that stands for `agent`."""
    return Signer(repo, agent).act(kind, document, action, vouched=vouched)


class Signer:
    """`signed` and `sign_act` for the acts of one agent in one change: what they ask of this
    machine (is the private key here?) and of the repository (does a key stand for the agent,
    are signatures required?) is asked once, however many acts the change holds (a `new` of a
    thousand envelopes signs a thousand `submitted` statuses)."""

    def __init__(self, repo: Repository, agent: str) -> None:
        self._repo = repo
        self.agent = agent

    @cached_property
    def _here(self) -> bool:
        return keypaths.has_private("agent", self.agent)

    @cached_property
    def _standing(self) -> bytes | None:
        return _standing(self._repo, self.agent)

    @cached_property
    def _required(self) -> bool:
        return requires_signatures(self._repo)

    @cached_property
    def _pair(self) -> KeyPair | None:
        return act_pair(self._repo, self.agent)

    def status(self, document: dict[str, Any], action: str) -> dict[str, Any]:
        """`signed`: a status file's fields, `by` = this agent."""
        # A transition a message makes rests on that message, whose signature is the sender's
        # (a peer's key lives on the peer's machine): audit checks it there.
        vouched = "message" in document
        if not self._here and self._required and not vouched and self._standing is None:
            raise _unsigned(
                self.agent, action, f"no private key of {self.agent!r} is on this machine"
            )
        return self.act("status", document, action, vouched=vouched)

    def act(
        self, kind: str, document: dict[str, Any], action: str, *, vouched: bool = False
    ) -> dict[str, Any]:
        """`sign_act`: an act of this agent of ledger kind `kind`."""
        agent = self.agent
        if not self._here:
            if not vouched and self._standing is not None:
                raise _missing(agent, kind, action)
            return document
        pair = self._pair
        if pair is None:
            if kind == "status" and self._required and not vouched:
                why = f"{agent!r} has no registered key ({keypaths.public_rel('agent', agent)})"
                raise _unsigned(agent, action, why)
            return document
        from taskfs.core import act_signing

        return act_signing.sign(kind, document, pair.private)


def act_pair(repo: Repository, agent: str) -> KeyPair | None:
    """The key pair `agent` signs its acts and messages with in this repository: its private
    key on this machine when the key standing for it here is that key's public part. None when
    no private key is here, or no key stands for `agent` in this repository (a key made for
    another repository signs nothing here: its signatures would verify under no key this
    ledger holds). `key_invalid` when another key stands for `agent`."""
    from taskfs.store import keys

    pair = keys.load_private("agent", agent)
    if pair is None:
        return None
    registered = _standing(repo, agent)
    if registered is None:
        return None
    if registered != pair.public:
        reason = (
            f"it is not the key registered for {agent!r} in "
            f"{keypaths.public_rel('agent', agent)}, so nothing it signs would verify"
        )
        raise fail("key_invalid", path=str(keys.private_path("agent", agent)), reason=reason)
    return pair


def _standing(repo: Repository, agent: str) -> bytes | None:
    from taskfs.store import keys

    return keys.standing_key(repo.root, agent)


def _missing(agent: str, kind: str, action: str) -> Exception:
    return fail(
        "signature_required",
        agent=agent,
        action_text=action,
        path=keypaths.public_rel("agent", agent),
        rule=kind,
    )


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
    return fail("agent_not_allowed", agent=agent, action_text=action, reason=reason, rule="status")
