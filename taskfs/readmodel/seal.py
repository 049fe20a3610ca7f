"""Seals: how a reader tells that taskfs derived what it finds under `<git dir>/taskfs/cache/`
(issue 36).

Everything there is derived from the ledger and may be deleted at any time; but anyone who can
write the repository can write there too, and a derived value that decides (a dependency's
state, a verdict, a signature's standing, who owns what) must not be taken from them. So every
file and store there carries a seal: a keyed BLAKE2b digest of its bytes (with what it is and
where), under a key kept with the operator's other secrets, outside every repository
(`~/.config/taskfs/cache.key`, or `$TASKFS_CACHE_KEY`), where the capability ledger, the runner
trust list and the private keys live and no sender can write (docs/trust.md). A value whose
seal does not hold was not written by taskfs here: it is derived again, never used.

Without a key (a home that cannot be written and no key there), nothing derived is kept or
read: every answer is derived again, which costs time and changes nothing.

Imports nothing but `os` and CPython's BLAKE2 (`_blake2`, what `hashlib.blake2b` is, without
the OpenSSL bindings `hashlib` loads first): the fast paths check seals.
"""

from __future__ import annotations

import os
from _blake2 import blake2b

TYPE_CHECKING = False  # `typing` costs the hot path 3 ms to import; type checkers know this
if TYPE_CHECKING:
    from collections.abc import Sequence

KEY_ENV = "TASKFS_CACHE_KEY"
KEY_BYTES = 32
SIZE = 16  # bytes of a seal
_PERSON = b"taskfs-derived"
_keys: dict[str, bytes | None] = {}  # by the key file's path, as this process found it


def key_path() -> str:
    configured = os.environ.get(KEY_ENV)
    if configured:
        return os.path.expanduser(configured)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "taskfs", "cache.key")


def key() -> bytes | None:
    """The key seals are made with, made on first use (readable by its owner only); None when
    there is none and none can be made."""
    where = key_path()
    if where in _keys:
        return _keys[where]
    found = _read(where)
    if found is None:
        found = _make(where)
    _keys[where] = found
    return found


def _read(where: str) -> bytes | None:
    try:
        with open(where, "rb") as handle:
            data = handle.read(KEY_BYTES + 1)
    except OSError:
        return None
    return data if len(data) == KEY_BYTES else None


def _make(where: str) -> bytes | None:
    """A new key at `where`, unless another process made one first (then that one)."""
    if os.path.lexists(where):
        return None  # something that is no key: left as it is, and nothing is sealed
    tmp = f"{where}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(where), mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            # Not flushed to disk: a key lost in a crash costs the caches, which are derived.
            os.write(fd, os.urandom(KEY_BYTES))
        finally:
            os.close(fd)
        if not os.path.lexists(where):
            os.link(tmp, where)  # never over a key another process made meanwhile
    except OSError:
        if not os.path.lexists(where):
            return None
    finally:
        _unlink(tmp)
    return _read(where)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        return


def seal(context: bytes, data: bytes) -> bytes | None:
    """The seal of `data` as `context` (what it is: a kind and a name); None without a key."""
    secret = key()
    if secret is None:
        return None
    mark = blake2b(key=secret, digest_size=SIZE, person=_PERSON)
    mark.update(len(context).to_bytes(4, "big") + context)
    mark.update(data)
    return mark.digest()


def wrap(context: bytes, data: bytes) -> bytes | None:
    """`data` with its seal in front; None without a key."""
    mark = seal(context, data)
    return None if mark is None else mark + data


def unwrap(context: bytes, blob: bytes) -> bytes | None:
    """The data `wrap` sealed as `context`; None when `blob` is not that (or there is no key)."""
    if len(blob) < SIZE:
        return None
    data = blob[SIZE:]
    mark = seal(context, data)
    if mark is None or not _same(mark, blob[:SIZE]):
        return None
    return data


def _same(a: bytes, b: bytes) -> bool:
    """Whether two seals are equal, in time that does not depend on where they differ."""
    if len(a) != len(b):
        return False
    differ = 0
    for x, y in zip(a, b, strict=True):
        differ |= x ^ y
    return differ == 0


def digest(data: bytes) -> bytes:
    """An unkeyed digest: what a sealed value names the parts it vouches for by."""
    return blake2b(data, digest_size=SIZE).digest()


def bucket_digest(file: str, rows: Sequence[tuple[str, str, str]]) -> bytes:
    """The digest of a file's ownership entries in the store, (entry, task, place) sorted.
    (Not of their marshalled form: marshal writes a value seen twice as a reference to it, so
    equal rows need not marshal to equal bytes.)"""
    text = "\n".join(f"{raw}\0{task}\0{place}" for raw, task, place in rows)
    return digest(f"{file}\n{text}".encode("utf-8", "surrogateescape"))
