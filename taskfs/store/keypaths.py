"""Where keys live, without the cryptography: the hot write paths ask only whether a private key
exists (one `stat`) before they load anything that signs."""

from __future__ import annotations

from typing import Literal

from taskfs.core import layout
from taskfs.core.layout import KEYS_DIR
from taskfs.store.operator import operator_path

KeyKind = Literal["agent", "runner"]
KEY_DIR_ENV = "TASKFS_KEY_DIR"


def private_name(kind: KeyKind, name: str) -> str:
    return f"{kind}-{name}.pem"


def public_rel(kind: KeyKind, name: str) -> str:
    return f"{KEYS_DIR}/{kind}/{name}.pub"


# Where `keys remove` records a revoked agent key: one file per key, never edited.
REVOKED_DIR = layout.REVOKED_DIR


def revoked_rel(name: str, key_id: str) -> str:
    return f"{REVOKED_DIR}/{name}-{key_id}.yaml"


def has_private(kind: KeyKind, name: str) -> bool:
    """Whether this machine holds a private key for `name` (not whether it is usable)."""
    return (operator_path(KEY_DIR_ENV, "keys") / private_name(kind, name)).exists()
