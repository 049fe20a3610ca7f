"""Signing keys: private parts outside the repository, public parts committed in it.

Two kinds of keys exist: an `agent` key signs that agent's messages, a `runner` key signs the
evidence a runner records. A private key lives in the key folder (`$TASKFS_KEY_DIR`, default
`~/.config/taskfs/keys`) as `<kind>-<name>.pem`, readable by its owner only; it is never
written inside a working tree, where every agent could read it. The public key is committed
as `.taskfs/keys/<kind>/<name>.pub` so every clone can verify, as the key's interlink id (43
characters of URL-safe base64; the older `ed25519:` spelling keeps being read, and runner keys,
which interlink never sees, keep it). The names are
local petnames: the key is the identity. A peer's key admitted under a name (`admit`) is what
interlink keeps in its peers.json: a message signed by it is taken as from that name.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from taskfs.core import layout, signing, wire
from taskfs.core.layout import KEYS_DIR
from taskfs.core.ledger_kinds import OPERATOR
from taskfs.errors import fail
from taskfs.store import fs, keypaths
from taskfs.store.git import Git
from taskfs.store.git.objects import ObjectSource
from taskfs.store.keypaths import KEY_DIR_ENV, private_name
from taskfs.store.operator import inside, operator_path

KeyKind = keypaths.KeyKind
public_rel = keypaths.public_rel
revoked_rel = keypaths.revoked_rel


def key_dir() -> Path:
    return operator_path(KEY_DIR_ENV, "keys")


def private_path(kind: KeyKind, name: str) -> Path:
    return key_dir() / private_name(kind, name)


def create(root: Path, kind: KeyKind, name: str) -> tuple[signing.KeyPair, str]:
    """A new key pair for `name`: the private part saved outside `root`, the public part
    written (not committed) at the returned repository-relative path."""
    _free(root, kind, name)
    return _save(root, kind, name, signing.generate_keypair())


def import_seed(root: Path, name: str, seed: bytes) -> tuple[signing.KeyPair, str]:
    """`name`'s agent key from an interlink secret key's seed: saved like a new key."""
    _free(root, "agent", name)
    public = wire.unb64(wire.public_id(seed), 32, "a public key")
    try:
        pair = signing.KeyPair(private=seed, public=public)
    except signing.SigningError as exc:
        raise fail("key_invalid", path="the seed file", reason=str(exc)) from None
    if wire.small_order(pair.public):
        raise fail("key_invalid", path="the seed file", reason="its public key is small-order")
    return _save(root, "agent", name, pair)


def admit(root: Path, name: str, public: bytes) -> str:
    """A peer's public key written (not committed) under `name`: the path, repository-relative."""
    if not layout.is_agent_name(name):
        raise fail("invalid_agent", value=name)
    rel = public_rel("agent", name)
    if (root / rel).exists() or standing_key(root, name) is not None:
        raise fail("key_exists", kind="agent", name=name, path=rel)
    fs.replace(root / rel, (wire.b64(public) + "\n").encode())
    return rel


def _free(root: Path, kind: KeyKind, name: str) -> None:
    if not layout.is_agent_name(name):
        raise fail("invalid_agent", value=name)
    private = private_path(kind, name)
    if inside(private, root):
        raise fail("key_unsafe", path=str(private))
    if private.exists():
        raise fail("key_exists", kind=kind, name=name, path=str(private))
    if (root / public_rel(kind, name)).exists() or (
        kind == "agent" and standing_key(root, name) is not None
    ):
        # Another machine holds this name's private key: replacing its public key would
        # silently disown everything it signed (a key whose revocation does not hold stands).
        raise fail("key_exists", kind=kind, name=name, path=public_rel(kind, name))


def _save(
    root: Path, kind: KeyKind, name: str, pair: signing.KeyPair
) -> tuple[signing.KeyPair, str]:
    private = private_path(kind, name)
    private.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fs.replace(private, signing.private_key_pem(pair.private), mode=0o600)
    rel = public_rel(kind, name)
    # An agent key is an interlink identity, written as its id; a runner key keeps the spelling
    # the operator's trust list uses.
    text = wire.b64(pair.public) if kind == "agent" else signing.public_key_text(pair.public)
    fs.replace(root / rel, (text + "\n").encode())
    return pair, rel


def parse_public(text: str) -> bytes:
    """A committed public key: its interlink id, or the older `ed25519:` spelling."""
    if text.startswith("ed25519:"):
        return signing.parse_public_key(text)
    try:
        return wire.parse_id(text)
    except wire.WireError as exc:
        raise signing.SigningError(str(exc)) from None


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


def public_key(root: Path, kind: KeyKind, name: str) -> bytes | None:
    """The well-formed public key of `name` in the working tree; None when there is none."""
    try:
        text = (root / public_rel(kind, name)).read_text(encoding="utf-8").strip()
        return parse_public(text)
    except (OSError, UnicodeDecodeError, signing.SigningError):
        return None


def public_keys(root: Path, kind: KeyKind) -> dict[str, bytes]:
    """Every well-formed public key of `kind` committed in the repository, by name."""
    folder = root / KEYS_DIR / kind
    keys: dict[str, bytes] = {}
    try:
        entries = sorted(folder.iterdir())
    except FileNotFoundError:
        return keys
    for entry in entries:
        name = entry.name.removesuffix(".pub")
        if entry.suffix != ".pub" or not layout.is_agent_name(name):
            continue
        try:
            keys[name] = parse_public(entry.read_text(encoding="utf-8").strip())
        except (OSError, UnicodeDecodeError, signing.SigningError):
            continue
    return keys


def revoked_keys(root: Path) -> dict[str, bytes]:
    """The agent keys `keys remove` revoked, by name (a name's latest revocation wins): what
    history signed before the revocation is still checked against."""
    from taskfs.core import yamlio

    found: dict[str, tuple[str, bytes]] = {}
    try:
        entries = sorted((root / keypaths.REVOKED_DIR).iterdir())
    except FileNotFoundError:
        return {}
    for entry in entries:
        try:
            value = yamlio.load(entry.read_bytes())
            name, at = value["name"], str(value["at"])
            raw = parse_public(str(value["key"]))
        except (OSError, yamlio.YamlError, TypeError, KeyError, signing.SigningError):
            continue
        if layout.is_agent_name(name) and at >= found.get(name, ("", b""))[0]:
            found[name] = (at, raw)
    return {name: raw for name, (_at, raw) in found.items()}


def standing_key(root: Path, name: str) -> bytes | None:
    """The key that signs for agent `name` now: its public key in the tree; else the key that
    a revocation which does not hold (`revocation_holds`) claims to revoke, which stands still.
    None when `name` has no key. Costs a `stat` and a folder listing for an agent without one."""
    key = public_key(root, "agent", name)
    if key is not None:
        return key
    found = latest_revocation(root, name)
    if found is None:
        return None
    document, revoked = found
    operator = public_key(root, "agent", OPERATOR) if document.get("by") == OPERATOR else None
    return None if revocation_holds(document, revoked, operator) else revoked


def standing_keys(root: Path) -> dict[str, bytes]:
    """Every agent key that stands now, by name (`standing_key`)."""
    found = public_keys(root, "agent")
    try:
        entries = os.listdir(root / keypaths.REVOKED_DIR)
    except (FileNotFoundError, NotADirectoryError):
        return found
    for name in {entry.rsplit("-", 1)[0] for entry in entries} - set(found):
        key = standing_key(root, name) if layout.is_agent_name(name) else None
        if key is not None:
            found[name] = key
    return found


def revocation_holds(document: dict[str, Any], revoked: bytes, by_key: bytes | None) -> bool:
    """Whether a revocation record is its `by`'s to make (`ledger_kinds.may_revoke`) and signed
    as every act of an agent with a key is: the owner's with the key it revokes, the operator's
    with its own key when it has one (`by_key`)."""
    from taskfs.core import act_signing
    from taskfs.core.ledger_kinds import may_revoke

    name, by = document.get("name"), document.get("by")
    if not isinstance(name, str) or not isinstance(by, str) or may_revoke(name, by) is not None:
        return False
    signer = revoked if by == name else by_key
    return signer is None or act_signing.verifies("revocation", document, signer)


def latest_revocation(root: Path, name: str) -> tuple[dict[str, Any], bytes] | None:
    """The latest revocation record of `name`'s key in the tree, and the key it names."""
    try:
        entries = sorted(os.listdir(root / keypaths.REVOKED_DIR))
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not any(entry.startswith(f"{name}-") for entry in entries):
        return None
    from taskfs.core import yamlio  # only where a revocation of this name is to be read

    latest: tuple[str, dict[str, Any], bytes] | None = None
    for entry in entries:
        if not entry.startswith(f"{name}-"):
            continue
        try:
            value = yamlio.load((root / keypaths.REVOKED_DIR / entry).read_bytes())
            raw = parse_public(str(value["key"]))
            at = str(value["at"])
        except (OSError, yamlio.YamlError, TypeError, KeyError, signing.SigningError):
            continue
        if value.get("name") == name and (latest is None or at >= latest[0]):
            latest = (at, value, raw)
    return None if latest is None else (latest[1], latest[2])


def committed_public_keys(git: Git, kind: KeyKind) -> dict[str, bytes]:
    """Every well-formed public key of `kind` as HEAD holds it, by name.

    Committed, not as the working tree has it: a key file dropped in but never committed is
    trusted by no clone, so it is trusted by none here either."""
    keys: dict[str, bytes] = {}
    if git.head_guess() is None:  # read from git's files: no process for a question of one line
        return keys
    with git.reader() as reader:
        for entry, (_mode, oid) in reader.tree(f"HEAD:{KEYS_DIR}/{kind}"):
            name = entry.removesuffix(".pub")
            found = reader.read(oid)
            if not entry.endswith(".pub") or not layout.is_agent_name(name) or found is None:
                continue
            try:
                keys[name] = parse_public(found[1].decode("utf-8").strip())
            except (UnicodeDecodeError, signing.SigningError):
                continue
    return keys


class KeysAt:
    """Public keys as given commits hold them: what a signature made in a commit is checked
    against (the key that stood then, not today's, which a later commit may have replaced).
    Reads go through the caller's `git cat-file` reader and are remembered per blob."""

    def __init__(
        self,
        reader: ObjectSource,
        kind: KeyKind,
        names: Collection[str] | None = None,
        *,
        ghosts: Mapping[str, Sequence[tuple[str, bytes]]] | None = None,
        is_ancestor: Callable[[str, str], bool] | None = None,
    ) -> None:
        self._reader = reader
        self._kind = kind
        self._names = names  # the only names that ever had a key, when the caller knows them
        self._parsed: dict[bytes, bytes | None] = {}
        # Keys taken out by a removal that was no revocation (by hand, or one its rule does not
        # let hold): each still stands, from the commit that removed it on, newest first.
        self._ghosts = ghosts or {}
        self._is_ancestor = is_ancestor

    def key(self, commit: str, name: str) -> bytes | None:
        """The public key that stood for `name` in `commit`: the one it holds, unless a key of
        `name` was removed before it without a revocation that holds (that one stands still);
        None when none stood."""
        if not layout.is_agent_name(name) or (self._names is not None and name not in self._names):
            return None
        for removed_in, key in self._ghosts.get(name, ()):
            if self._is_ancestor is not None and (
                removed_in == commit or self._is_ancestor(removed_in, commit)
            ):
                return key
        found = self._reader.read(f"{commit}:{public_rel(self._kind, name)}")
        if found is None or found[0] != "blob":
            return None
        data = found[1]
        if data not in self._parsed:
            try:
                self._parsed[data] = parse_public(data.decode("utf-8").strip())
            except (UnicodeDecodeError, signing.SigningError):
                self._parsed[data] = None
        return self._parsed[data]


TRUST_LIST_ENV = layout.TRUST_LIST_ENV
_MISSING = object()


def trust_list_path() -> Path:
    return operator_path(TRUST_LIST_ENV, layout.TRUST_LIST_NAME)


def operator_trusted_runners(root: Path) -> dict[str, bytes] | None:
    """The runner keys the operator trusts (`runners: {name: ed25519:...}`), kept outside every
    repository; None when there is no such file at the default place. Fails closed: a list
    inside the working tree, one that $TASKFS_TRUSTED_RUNNERS names but that does not exist,
    and one that cannot be read are `trust_list_unsafe` (never "no list, so trust the keys the
    repository holds", which anyone who can commit can add to)."""
    path = trust_list_path()
    value = _read_trust_list(path, root)
    if value is _MISSING:
        return None
    runners = value.get("runners") if isinstance(value, dict) else None
    if not isinstance(value, dict) or set(value) - {"runners"} or not isinstance(runners, dict):
        reason = "expected a mapping `runners: {NAME: ed25519:...}` and nothing else"
        raise fail("config_invalid", path=str(path), reason=reason)
    keys: dict[str, bytes] = {}
    for name, text in runners.items():
        if not layout.is_agent_name(name):
            raise fail("config_invalid", path=str(path), reason=f"{name!r} is not a key name")
        try:
            keys[name] = signing.parse_public_key(text)
        except signing.SigningError as exc:
            raise fail("config_invalid", path=str(path), reason=f"{name}: {exc}") from None
    return keys


def _read_trust_list(path: Path, root: Path) -> Any:
    """What the trust list holds; `_MISSING` when there is none at the default place."""
    if inside(path, root):
        reason = "it is inside the repository's working tree, where any agent can write"
        raise fail("trust_list_unsafe", path=str(path), reason=reason)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if os.environ.get(TRUST_LIST_ENV):
            reason = f"{TRUST_LIST_ENV} names it, but it does not exist"
            raise fail("trust_list_unsafe", path=str(path), reason=reason) from None
        return _MISSING
    except OSError as exc:
        reason = f"it cannot be read ({exc.strerror or exc})"
        raise fail("trust_list_unsafe", path=str(path), reason=reason) from None
    from taskfs.core import yamlio  # only when there is a list to read

    try:
        return yamlio.load(data)
    except yamlio.YamlError as exc:
        raise fail("config_invalid", path=str(path), reason=exc.reason) from None
