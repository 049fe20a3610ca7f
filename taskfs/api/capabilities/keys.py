"""Signing keys: `taskfs keys new`. The private part stays on this machine, outside the
repository; the public part is committed so every clone can verify."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from taskfs.core import signing, wire
from taskfs.core.layout import format_time
from taskfs.errors import fail
from taskfs.store import keys
from taskfs.store.keys import KeyKind
from taskfs.store.repository import Repository


@dataclass(frozen=True)
class NewKey:
    kind: KeyKind
    name: str
    public_key: str
    key_id: str
    public_path: str
    private_path: Path
    commit: str

    @property
    def interlink_id(self) -> str:
        """The key as interlink names an agent: URL-safe base64 without padding."""
        return wire.b64(signing.parse_public_key(self.public_key))


def new_key(repo: Repository, kind: KeyKind, name: str) -> NewKey:
    """Make a key pair for `name`; commit its public part in one commit of its own."""
    with repo.writing() as writer:
        pair, rel = keys.create(repo.root, kind, name)
        message = (
            f"taskfs: new {kind} key {name}\n\n"
            f"Taskfs-Key: {kind}/{name} {signing.key_id(pair.public)}\n"
            f"Taskfs-Agent: {name}\n"
        )
        commit = writer.commit_existing([rel], message, name)
    return _new(kind, name, pair, rel, commit)


def import_key(repo: Repository, name: str, seed_text: str) -> NewKey:
    """`name`'s agent key from an interlink secret key file's text (its seed, URL-safe base64
    on one line), so one identity serves both tools: the private part is kept where taskfs
    keeps private keys, outside the repository; the public part is committed."""
    try:
        seed = wire.parse_seed(seed_text)
    except wire.WireError as exc:
        raise fail("key_invalid", path="the seed file", reason=str(exc)) from None
    with repo.writing() as writer:
        pair, rel = keys.import_seed(repo.root, name, seed)
        commit = writer.commit_existing([rel], _message("imported agent", name, pair), name)
    return _new("agent", name, pair, rel, commit)


@dataclass(frozen=True)
class Admitted:
    name: str
    interlink_id: str
    key_id: str
    public_path: str
    commit: str


def add_key(repo: Repository, name: str, public: str, agent: str | None = None) -> Admitted:
    """Admit a peer's key (its interlink id) under the local name `name`, committed: a message
    signed by that key is from `name` here, as interlink's peers.json has it."""
    try:
        raw = keys.parse_public(public.strip())
    except signing.SigningError as exc:
        raise fail("key_invalid", path="--public", reason=str(exc)) from None
    with repo.writing() as writer:
        known = {wire.b64(k): n for n, k in keys.public_keys(repo.root, "agent").items()}
        if wire.b64(raw) in known:
            path = keys.public_rel("agent", known[wire.b64(raw)])
            raise fail("key_exists", kind="agent", name=known[wire.b64(raw)], path=path)
        rel = keys.admit(repo.root, name, raw)
        message = (
            f"taskfs: admit agent key {name}\n\n"
            f"Taskfs-Key: agent/{name} {signing.key_id(raw)}\n"
            f"Taskfs-Agent: {agent or name}\n"
        )
        commit = writer.commit_existing([rel], message, agent or name)
    return Admitted(name, wire.b64(raw), signing.key_id(raw), rel, commit)


@dataclass(frozen=True)
class Revoked:
    name: str
    interlink_id: str
    key_id: str
    public_path: str
    record_path: str
    commit: str


def remove_key(
    repo: Repository, name: str, by: str, reason: str | None = None, now: datetime | None = None
) -> Revoked:
    """Revoke `name`'s agent key (a peer's, as interlink's `remove_peer` does): its public key
    leaves `.taskfs/keys/agent/`, and a record of the revocation (the name, the key, who, when,
    why) enters `.taskfs/keys/revoked/agent/`, in one commit by `by`: the key's owner, signing
    the record with the key it revokes, or the operator (`ledger_kinds.may_revoke`). From then
    on a message signed by that key is `sender_unknown` and none is addressed to it; what it
    signed before keeps verifying, and `audit` notes the revocation (`agent_key_revoked`)
    rather than a key changed."""
    from taskfs.api.lifecycle.signing import sign_act
    from taskfs.api.tasks.filing import record_bytes
    from taskfs.core.ledger_kinds import may_revoke

    now = now or datetime.now(timezone.utc)
    rel = keys.public_rel("agent", name)
    with repo.writing() as writer:
        raw = keys.committed_public_keys(repo.git, "agent").get(name)
        if raw is None:
            raise fail("key_not_found", kind="agent", name=name, path=rel)
        refused = may_revoke(name, by)
        if refused is not None:
            raise fail(
                "agent_not_allowed",
                agent=by,
                action="revoke",
                action_text=f"revoke the key of {name!r}",
                reason=refused,
                rule="revocation",
            )
        ident = signing.key_id(raw)
        record = keys.revoked_rel(name, ident)
        why = reason.strip() if reason and reason.strip() else None
        document: dict[str, object] = {
            "name": name,
            "key": wire.b64(raw),
            "keyId": ident,
            "by": by,
            "at": format_time(now),
            **({"reason": why} if why else {}),
        }
        document = sign_act(repo, by, "revocation", document, f"revoke the key of {name!r}")
        writer.add(record, record_bytes(document))
        writer.remove(rel)
        message = (
            f"taskfs: revoke agent key {name}\n\n"
            + (f"{why}\n\n" if why else "")
            + f"Taskfs-Key-Revoked: agent/{name} {ident}\nTaskfs-Agent: {by}\n"
        )
        commit = writer.commit(message, by, when=now)
    return Revoked(name, wire.b64(raw), ident, rel, record, commit)


@dataclass(frozen=True)
class KnownKey:
    kind: KeyKind
    name: str
    interlink_id: str
    key_id: str
    private: bool  # whether this machine holds its private part


def list_keys(repo: Repository) -> list[KnownKey]:
    """Every committed key, by kind then name."""
    found: list[KnownKey] = []
    for kind in ("agent", "runner"):
        for name, raw in sorted(keys.committed_public_keys(repo.git, kind).items()):
            held = keys.private_path(kind, name).is_file()
            found.append(KnownKey(kind, name, wire.b64(raw), signing.key_id(raw), held))
    return found


def _message(what: str, name: str, pair: signing.KeyPair) -> str:
    return (
        f"taskfs: {what} key {name}\n\n"
        f"Taskfs-Key: agent/{name} {signing.key_id(pair.public)}\n"
        f"Taskfs-Agent: {name}\n"
    )


def _new(kind: KeyKind, name: str, pair: signing.KeyPair, rel: str, commit: str) -> NewKey:
    return NewKey(
        kind=kind,
        name=name,
        public_key=signing.public_key_text(pair.public),
        key_id=signing.key_id(pair.public),
        public_path=rel,
        private_path=keys.private_path(kind, name),
        commit=commit,
    )
