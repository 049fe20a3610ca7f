"""Ed25519 signatures over a canonical, domain-separated encoding of named text fields.

Agents sign task messages (domain `interlink-v2`) and the acceptance-check runner signs evidence
files (domain `taskfs-evidence-v1`), so that a recipient can neither forge a passing check nor
another agent's message. This module is the pure part: the encoding, keys as bytes and text, sign
and verify. It touches no files; other modules decide where keys live.

Byte layout (everything another implementation needs to verify a taskfs signature)
-----------------------------------------------------------------------------------
`u32(n)` is `n` as 4 bytes, unsigned big-endian. Text is encoded as UTF-8 (strict; text that
cannot be encoded, such as a lone surrogate, cannot be signed).

    canonical_encoding(fields) =
        for each (name, value) of fields, in the given order, concatenated:
            u32(len(NAME)) || NAME                  NAME  = UTF-8 of name
            0xFF 0xFF 0xFF 0xFF                     if value is None
            u32(len(VALUE)) || VALUE                otherwise, VALUE = UTF-8 of value
        (no count, no terminator; an empty list encodes to zero bytes)

    signed_bytes(domain, fields) = DOMAIN || 0x00 || canonical_encoding(fields)
                                   DOMAIN = UTF-8 of domain (non-empty, no NUL)

    signature = Ed25519 (RFC 8032, pure: no pre-hash, no context) of signed_bytes,
                under the key whose 32-byte seed is the private key
    signature text  = "ed25519:" + base64(signature)   standard alphabet, padded: 88 characters
    public key text = "ed25519:" + base64(public key)  32 raw bytes: 44 characters
    key_id          = first 16 hex digits (lower case) of sha256(raw public key)

Example: `canonical_encoding([("a", "bc"), ("d", None)])` is
`00000001 61 00000002 6263 00000001 64 ffffffff` (hex, spaces added).

The encoding is unambiguous: every name and value carries its own length, so reading from the
start recovers the exact list; `None` has a marker that no length can take (lengths stop at
0xFFFFFFFE), so `None` and `""` differ; names are unique, so a field cannot be shadowed by a
second one of the same name. Field order is part of what is signed: signer and verifier list
the fields in the same documented order. The domain cannot contain NUL, so the first zero byte
ends it: no choice of domain and fields can produce the bytes of another domain.

Why domain separation: the domain is inside the signed bytes, so a signature made for one purpose
verifies for no other. A message signed under `interlink-v2` can never be replayed as evidence
under `taskfs-evidence-v1` (or the reverse), even when the same key signs both and the field
lists happen to coincide.

Why Ed25519 and not HMAC: with HMAC every party that can verify holds the key that signs, so any
agent able to check messages could forge any other agent's messages and any runner's evidence.
With Ed25519 only the holder of the private key can sign; everybody else gets the public key,
which verifies and nothing more. Ed25519 signatures are also deterministic (same key and bytes
give the same signature) and cheap (tens of microseconds to sign, about a hundred to verify).

What `verify` accepts: exactly one text per signature (canonical padded base64; the unused bits of
the last character must be zero), and only public keys that are canonical encodings of points that
are not of small order. `cryptography` (OpenSSL) accepts the eight small-order points as public
keys, and under one of them (the identity) a fixed, key-less signature verifies for every message;
a key like that would let anyone speak for the agent that registered it, so it is refused here.

Errors: `SigningError` (a `ValueError`) for malformed content: key text, PEM, key bytes of the
wrong length, duplicate field names, a bad domain. `TypeError` when a caller passes the wrong
Python type to `canonical_encoding`, `signed_bytes`, `sign` or `verify`. `verify` itself answers
False, without raising, for anything wrong with the signature text, the public key bytes or the
field text (a value that cannot be encoded was never signed); it raises only for caller errors
that `sign` would raise for too (duplicate names, a bad domain, wrong types).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

# `cryptography` (OpenSSL's bindings) is imported by the functions that sign, verify or read a
# key, not here: most commands that import this module never do any of it, and the import
# costs them 10-15 ms.
if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

__all__ = [
    "EVIDENCE_DOMAIN",
    "MESSAGE_DOMAIN",
    "KeyPair",
    "SigningError",
    "canonical_encoding",
    "generate_keypair",
    "key_id",
    "load_private_key_pem",
    "parse_public_key",
    "private_key_pem",
    "public_key_text",
    "sign",
    "signed_bytes",
    "verify",
]

MESSAGE_DOMAIN = "interlink-v2"
EVIDENCE_DOMAIN = "taskfs-evidence-v1"

_PREFIX = "ed25519:"
_SEED_LENGTH = 32
_PUBLIC_LENGTH = 32
_SIGNATURE_LENGTH = 64
_NONE_MARKER = b"\xff\xff\xff\xff"
# Longest name or value, in UTF-8 bytes: 0xFFFFFFFF is the None marker, so no length may equal it.
_MAX_LENGTH = 0xFFFFFFFE

# Ed25519 point encodings: y (little-endian, 255 bits) plus the sign of x in the top bit.
_P = 2**255 - 19
_Y_MASK = (1 << 255) - 1
# y of the points of order 8; the other small-order points have y = 0, 1 or p - 1.
_Y_ORDER_8 = 0x05FC536D880238B13933C6D305ACDFD5F098EFF289F4C345B027B2C28F95E826
_SMALL_ORDER_Y = frozenset({0, 1, _P - 1, _Y_ORDER_8, _P - _Y_ORDER_8})


class SigningError(ValueError):
    """Malformed key, key text, PEM or signing input."""


class _UnencodableTextError(SigningError):
    """Text that has no UTF-8 encoding (a lone surrogate), so it can never have been signed."""


@dataclass(frozen=True)
class KeyPair:
    """An Ed25519 key pair as raw bytes: the 32-byte seed and the 32-byte public key.

    Construction checks that `public` is the public key of `private`. The seed is left out of
    `repr` so that it does not end up in logs or tracebacks.
    """

    private: bytes = field(repr=False)
    public: bytes

    def __post_init__(self) -> None:
        if not isinstance(self.private, bytes) or not isinstance(self.public, bytes):
            raise TypeError("KeyPair holds raw bytes")
        if len(self.public) != _PUBLIC_LENGTH:
            raise SigningError(f"a public key is {_PUBLIC_LENGTH} bytes, not {len(self.public)}")
        if _private_key(self.private).public_key().public_bytes_raw() != self.public:
            raise SigningError("the public key does not belong to the private key")


def canonical_encoding(fields: Sequence[tuple[str, str | None]]) -> bytes:
    """Encode (name, value) pairs, in order, as described in the module docstring.

    Raises `SigningError` (a `ValueError`) for a repeated name, text that cannot be encoded as
    UTF-8 or a name or value longer than 0xFFFFFFFE bytes; `TypeError` for items that are not
    `(str, str | None)` pairs.
    """
    if isinstance(fields, (str, bytes)):
        raise TypeError("fields is a sequence of (name, value) pairs, not a string")
    parts: list[bytes] = []
    seen: set[str] = set()
    for item in fields:
        if not isinstance(item, tuple) or len(item) != 2:
            raise TypeError(f"each field is a (name, value) pair, not {type(item).__name__}")
        name, value = item
        if not isinstance(name, str):
            raise TypeError(f"a field name is a str, not {type(name).__name__}")
        if value is not None and not isinstance(value, str):
            raise TypeError(f"field {name!r} has a {type(value).__name__} value, not str or None")
        if name in seen:
            raise SigningError(f"field name {name!r} appears more than once")
        seen.add(name)
        parts.append(_length_prefixed(_utf8(name, f"field name {name!r}")))
        if value is None:
            parts.append(_NONE_MARKER)
        else:
            parts.append(_length_prefixed(_utf8(value, f"the value of field {name!r}")))
    return b"".join(parts)


def signed_bytes(domain: str, fields: Sequence[tuple[str, str | None]]) -> bytes:
    """The exact bytes a signature covers: UTF-8 domain, a zero byte, the canonical encoding."""
    if not isinstance(domain, str):
        raise TypeError(f"the domain is a str, not {type(domain).__name__}")
    if not domain or "\x00" in domain:
        raise SigningError("the signing domain must be non-empty and free of NUL characters")
    try:
        domain_bytes = domain.encode("utf-8")
    except UnicodeEncodeError:
        raise SigningError("the signing domain is not encodable as UTF-8") from None
    return domain_bytes + b"\x00" + canonical_encoding(fields)


def generate_keypair() -> KeyPair:
    """A new random key pair (from the operating system's random source)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    return KeyPair(private=key.private_bytes_raw(), public=key.public_key().public_bytes_raw())


def public_key_text(public: bytes) -> str:
    """`ed25519:` followed by the standard, padded base64 of the 32 raw public key bytes."""
    _check_public(public)
    return _PREFIX + base64.b64encode(public).decode("ascii")


def parse_public_key(text: str) -> bytes:
    """The raw 32 bytes of a public key written by `public_key_text`.

    Strict: no surrounding whitespace, the exact prefix, canonical padded base64, 32 bytes, and a
    key that is a canonical encoding of a point of large order. Raises `SigningError` otherwise
    (also for input that is not a str).
    """
    raw = _decode_prefixed(text, _PUBLIC_LENGTH, "public key")
    _check_public(raw)
    return raw


def private_key_pem(private: bytes) -> bytes:
    """The seed as an unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).

    Unencrypted: whoever stores it keeps it outside the repository with owner-only permissions.
    """
    from cryptography.hazmat.primitives import serialization

    return _private_key(private).private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.PKCS8,
        encryption_algorithm=serialization.NoEncryption(),
    )


def load_private_key_pem(data: bytes) -> KeyPair:
    """The key pair in an unencrypted PEM private key; `SigningError` unless it is Ed25519."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    if not isinstance(data, bytes):
        raise SigningError(f"a PEM private key is bytes, not {type(data).__name__}")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError:
        # cryptography raises TypeError when the key is encrypted and no password was given.
        raise SigningError(
            "the PEM private key is encrypted; taskfs reads only unencrypted keys"
        ) from None
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise SigningError("not a readable PEM private key") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningError(
            f"the PEM holds a private key of type {_key_kind(key)}; taskfs signs with Ed25519 only"
        )
    return KeyPair(private=key.private_bytes_raw(), public=key.public_key().public_bytes_raw())


def key_id(public: bytes) -> str:
    """A short stable name for a public key: the first 16 hex digits of its SHA-256."""
    if not isinstance(public, bytes) or len(public) != _PUBLIC_LENGTH:
        raise SigningError(f"a public key is {_PUBLIC_LENGTH} raw bytes")
    return hashlib.sha256(public).hexdigest()[:16]


def sign(private: bytes, domain: str, fields: Sequence[tuple[str, str | None]]) -> str:
    """Sign `signed_bytes(domain, fields)` with the 32-byte seed; returns `ed25519:` + base64."""
    message = signed_bytes(domain, fields)
    signature = _private_key(private).sign(message)
    return _PREFIX + base64.b64encode(signature).decode("ascii")


def verify(
    public: bytes,
    domain: str,
    fields: Sequence[tuple[str, str | None]],
    signature: str,
) -> bool:
    """Whether `signature` is the signature of `signed_bytes(domain, fields)` under `public`.

    False, never an exception, for a malformed signature text (empty, wrong prefix, bad or
    non-canonical base64, wrong length, non-ASCII, not a str), for public key bytes that are not
    an acceptable key, and for field text that cannot be encoded. Raises only for the caller
    errors `sign` raises for: duplicate names, a bad domain, wrong Python types of the fields or
    of `public`.
    """
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if not isinstance(public, bytes):
        raise TypeError(f"the public key is raw bytes, not {type(public).__name__}")
    try:
        message = signed_bytes(domain, fields)
    except _UnencodableTextError:
        return False
    try:
        raw = _decode_prefixed(signature, _SIGNATURE_LENGTH, "signature")
        _check_public(public)
        Ed25519PublicKey.from_public_bytes(public).verify(raw, message)
    except (SigningError, InvalidSignature, ValueError):
        return False
    return True


# --- helpers ---------------------------------------------------------------------------------


def _utf8(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise _UnencodableTextError(f"{what} is not encodable as UTF-8") from None


def _length_prefixed(data: bytes) -> bytes:
    if len(data) > _MAX_LENGTH:
        raise SigningError(f"a name or value is longer than {_MAX_LENGTH} bytes")
    return len(data).to_bytes(4, "big") + data


def _private_key(private: bytes) -> Ed25519PrivateKey:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    if not isinstance(private, bytes):
        raise TypeError(f"the private key is a raw seed (bytes), not {type(private).__name__}")
    if len(private) != _SEED_LENGTH:
        # The length only: never the key material itself.
        raise SigningError(f"a private key is a {_SEED_LENGTH}-byte seed, not {len(private)}")
    return Ed25519PrivateKey.from_private_bytes(private)


def _check_public(public: bytes) -> None:
    """Refuse anything but a canonical encoding of a point that is not of small order."""
    if not isinstance(public, bytes) or len(public) != _PUBLIC_LENGTH:
        raise SigningError(f"a public key is {_PUBLIC_LENGTH} raw bytes")
    y = int.from_bytes(public, "little") & _Y_MASK
    if y >= _P:
        raise SigningError("the public key is not a canonical point encoding")
    if y in _SMALL_ORDER_Y:
        raise SigningError(
            "the public key is a small-order point: signatures under it bind nothing"
        )


def _key_kind(key: object) -> str:
    from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, rsa, x448, x25519

    kinds: list[tuple[type, str]] = [
        (rsa.RSAPrivateKey, "RSA"),
        (ec.EllipticCurvePrivateKey, "EC"),
        (dsa.DSAPrivateKey, "DSA"),
        (ed448.Ed448PrivateKey, "Ed448"),
        (x25519.X25519PrivateKey, "X25519"),
        (x448.X448PrivateKey, "X448"),
    ]
    return next((name for cls, name in kinds if isinstance(key, cls)), type(key).__name__)


def _decode_prefixed(text: object, length: int, what: str) -> bytes:
    """Decode `ed25519:` + canonical padded base64 of exactly `length` bytes."""
    if not isinstance(text, str):
        raise SigningError(f"a {what} is text, not {type(text).__name__}")
    if not text.startswith(_PREFIX):
        raise SigningError(f"a {what} starts with {_PREFIX!r}")
    body = text[len(_PREFIX) :]
    # Checking the length first bounds the work spent on oversized input.
    if len(body) != 4 * ((length + 2) // 3) or not body.isascii():
        raise SigningError(f"a {what} is {length} bytes in padded base64")
    try:
        raw = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        raise SigningError(f"a {what} is {length} bytes in padded base64") from None
    # Re-encoding catches non-zero unused bits, so that each value has exactly one text.
    if len(raw) != length or base64.b64encode(raw).decode("ascii") != body:
        raise SigningError(f"a {what} is {length} bytes in canonical padded base64")
    return raw
