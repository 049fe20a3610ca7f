"""Signing keys: private parts outside the repository, public parts committed in it.

Two kinds of keys exist: an `agent` key signs that agent's messages, a `runner` key signs the
evidence a runner records. A private key lives in the key folder (`$TASKFS_KEY_DIR`, default
`~/.config/taskfs/keys`) as `<kind>-<name>.pem`, readable by its owner only; it is never
written inside a working tree, where every agent could read it. The public key is committed
as `.taskfs/keys/<kind>/<name>.pub` so every clone can verify.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from taskfs.core import ids, signing
from taskfs.errors import fail
from taskfs.store import fs

KeyKind = Literal["agent", "runner"]
PUBLIC_DIR = ".taskfs/keys"


def key_dir() -> Path:
    configured = os.environ.get("TASKFS_KEY_DIR")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "taskfs" / "keys"


def private_path(kind: KeyKind, name: str) -> Path:
    return key_dir() / f"{kind}-{name}.pem"


def public_rel(kind: KeyKind, name: str) -> str:
    return f"{PUBLIC_DIR}/{kind}/{name}.pub"


def create(root: Path, kind: KeyKind, name: str) -> tuple[signing.KeyPair, str]:
    """A new key pair for `name`: the private part saved outside `root`, the public part
    written (not committed) at the returned repository-relative path."""
    if not ids.is_agent_name(name):
        raise fail("invalid_agent", value=name)
    private = private_path(kind, name)
    if _inside(private, root):
        raise fail("key_unsafe", path=str(private))
    if private.exists():
        raise fail("key_exists", kind=kind, name=name, path=str(private))
    pair = signing.generate_keypair()
    private.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fs.replace(private, signing.private_key_pem(pair.private), mode=0o600)
    rel = public_rel(kind, name)
    fs.replace(root / rel, (signing.public_key_text(pair.public) + "\n").encode())
    return pair, rel


def load_private(kind: KeyKind, name: str) -> signing.KeyPair | None:
    """The private key of `name`, or None when this machine has none."""
    path = private_path(kind, name)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise fail("key_invalid", path=str(path), reason=exc.strerror or str(exc)) from None
    try:
        return signing.load_private_key_pem(data)
    except signing.SigningError as exc:
        raise fail("key_invalid", path=str(path), reason=str(exc)) from None


def public_keys(root: Path, kind: KeyKind) -> dict[str, bytes]:
    """Every well-formed public key of `kind` committed in the repository, by name."""
    folder = root / PUBLIC_DIR / kind
    keys: dict[str, bytes] = {}
    try:
        entries = sorted(folder.iterdir())
    except FileNotFoundError:
        return keys
    for entry in entries:
        name = entry.name.removesuffix(".pub")
        if entry.suffix != ".pub" or not ids.is_agent_name(name):
            continue
        try:
            keys[name] = signing.parse_public_key(entry.read_text(encoding="utf-8").strip())
        except (OSError, UnicodeDecodeError, signing.SigningError):
            continue
    return keys


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True
