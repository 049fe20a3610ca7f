"""`keys new`: a signing key, its private part outside the repository, its public part committed."""

from __future__ import annotations

from dataclasses import dataclass

from taskfs.core import signing
from taskfs.errors import fail
from taskfs.store import keys
from taskfs.store.repository import Repository


@dataclass(frozen=True)
class NewKey:
    kind: keys.KeyKind
    name: str
    key_id: str
    public: str
    private: str
    commit: str


def new_key(repo: Repository, kind: keys.KeyKind, name: str) -> NewKey:
    """A new key for `name`. A public key already committed for `name` is never replaced:
    every message it signed would stop verifying."""
    with repo.writing() as writer:
        public_rel = keys.public_rel(kind, name)
        if (repo.root / public_rel).exists():
            raise fail("key_exists", kind=kind, name=name, path=public_rel)
        pair, rel = keys.create(repo.root, kind, name)
        commit = writer.commit_existing([rel], f"taskfs: {kind} key for {name}", name)
    return NewKey(
        kind, name, signing.key_id(pair.public), rel, str(keys.private_path(kind, name)), commit
    )
