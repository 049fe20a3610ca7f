"""Signing keys: `taskfs keys new`. The private part stays on this machine, outside the
repository; the public part is committed so every clone can verify."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from taskfs.core import signing
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
    return NewKey(
        kind=kind,
        name=name,
        public_key=signing.public_key_text(pair.public),
        key_id=signing.key_id(pair.public),
        public_path=rel,
        private_path=keys.private_path(kind, name),
        commit=commit,
    )
