"""interlink's wire format: its signed bytes, its key and signature text, its message JSON.

Pure: values in, values out. This is the encoding of wilfreddenton/interlink (0.8.0,
`src/identity.rs`), which every new taskfs message signature uses, so that any interlink agent
verifies taskfs's messages and taskfs verifies theirs. (Messages signed before it keep
verifying under the old encoding in `taskfs.core.signing`; see `taskfs.core.messages`.)

The signed bytes
----------------
    "interlink-v2" 0x00                          13 bytes
    from public key, to public key               32 raw bytes each
    ts                                           u64 little-endian, unix milliseconds
    kind, msg_id, text, status, task_id, in_reply_to
                                                 each u32 little-endian byte length + UTF-8
An absent optional field is the empty string. No field names are encoded.

Text forms: a key (an interlink id) and a signature are base64 with the URL-safe alphabet and
no padding (43 and 86 characters); the secret key file holds the 32-byte seed the same way.

Verification is ed25519-dalek's `verify_strict`: besides the equation, a small-order public
key, a small-order R and an S not below the group order are refused (the first two let a
signature bind nothing; the last gives one message two signatures).
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
from typing import Any, NamedTuple

DOMAIN = b"interlink-v2\x00"
KINDS = ("message", "pair_request", "pair_accept")
STATUSES = ("update", "needs_input", "result", "failed", "canceled")
ID_LENGTH = 43
SIG_LENGTH = 86
MAX_TS = 2**64 - 1
_U32 = 2**32 - 1

# Ed25519 point encodings: y (little-endian, 255 bits) plus the sign of x in the top bit.
_P = 2**255 - 19
_L = 2**252 + 27742317777372353535851937790883648493
_Y_MASK = (1 << 255) - 1
# y of the points of order 8; the other small-order points have y = 0, 1 or p - 1.
_Y_ORDER_8 = 0x05FC536D880238B13933C6D305ACDFD5F098EFF289F4C345B027B2C28F95E826
_SMALL_ORDER_Y = frozenset({0, 1, _P - 1, _Y_ORDER_8, _P - _Y_ORDER_8})


class WireError(ValueError):
    """Text that is no interlink key, signature or message."""


# -- keys and signatures as text -------------------------------------------------------------


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def unb64(text: object, length: int, what: str) -> bytes:
    """Exactly `length` bytes from URL-safe base64 without padding, in its one canonical text."""
    if not isinstance(text, str):
        raise WireError(f"{what} is text, not {type(text).__name__}")
    if len(text) != (length * 4 + 2) // 3 or not text.isascii():
        raise WireError(f"{what} is {length} bytes in URL-safe base64 without padding")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise WireError(f"{what} is not URL-safe base64") from None
    # Re-encoding refuses other alphabets' characters and non-zero unused bits.
    if len(raw) != length or b64(raw) != text:
        raise WireError(f"{what} is not canonical URL-safe base64 without padding")
    return raw


def small_order(point: bytes) -> bool:
    """Whether a point encoding is non-canonical or one of the eight small-order points."""
    y = int.from_bytes(point, "little") & _Y_MASK
    return y >= _P or y in _SMALL_ORDER_Y


def parse_id(text: object) -> bytes:
    """The raw public key an interlink id names; `WireError` for anything else, small-order
    keys included."""
    raw = unb64(text, 32, "an interlink id")
    if small_order(raw):
        raise WireError("the key is a small-order point: signatures under it bind nothing")
    return raw


def parse_seed(text: str) -> bytes:
    """The 32-byte seed of an interlink secret key file (one line; surrounding blanks go)."""
    return unb64(text.strip(), 32, "an interlink secret key")


def new_msg_id() -> str:
    """interlink's: 16 random bytes as 32 lowercase hex digits."""
    return secrets.token_hex(16)


# -- the signed bytes --------------------------------------------------------------------------


class Message(NamedTuple):
    """interlink's `SignedMessage`: `sender`/`recipient` are interlink ids (its `from`/`to`)."""

    sender: str
    recipient: str
    text: str
    ts: int
    msg_id: str
    kind: str = "message"
    task_id: str | None = None
    status: str | None = None
    in_reply_to: str | None = None
    reply_to: str | None = None
    sig: str = ""

    def canonical(self) -> bytes:
        return canonical(
            parse_id(self.sender),
            parse_id(self.recipient),
            self.ts,
            self.kind,
            self.msg_id,
            self.text,
            self.status,
            self.task_id,
            self.in_reply_to,
        )

    def to_json(self) -> str:
        """One line, exactly serde's shape and key order; absent optional keys left out."""
        data: dict[str, Any] = {
            "from": self.sender,
            "to": self.recipient,
            "text": self.text,
            "ts": self.ts,
            "msg_id": self.msg_id,
            "kind": self.kind,
        }
        for name in ("task_id", "status", "in_reply_to", "reply_to"):
            value = getattr(self, name)
            if value is not None:
                data[name] = value
        data["sig"] = self.sig
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))

    def verified(self) -> bool:
        """Whether `sig` is the sender's signature over these fields, under `verify_strict`."""
        try:
            public = parse_id(self.sender)
            message = self.canonical()
        except (WireError, UnicodeEncodeError):
            return False
        return verify_strict(public, message, self.sig)


def canonical(  # noqa: PLR0917 (interlink's own field list)
    sender: bytes,
    recipient: bytes,
    ts: int,
    kind: str,
    msg_id: str,
    text: str,
    status: str | None,
    task_id: str | None,
    in_reply_to: str | None,
) -> bytes:
    """The bytes interlink signs (see the module's account). `ValueError` for keys that are not
    32 bytes, a `ts` outside u64, text without a UTF-8 encoding or longer than u32 lengths."""
    if len(sender) != 32 or len(recipient) != 32:
        raise WireError("a public key is 32 raw bytes")
    if not 0 <= ts <= MAX_TS:
        raise WireError("ts is an unsigned 64-bit number of milliseconds")
    parts = [DOMAIN, sender, recipient, ts.to_bytes(8, "little")]
    for value in (kind, msg_id, text, status or "", task_id or "", in_reply_to or ""):
        data = value.encode("utf-8")
        if len(data) > _U32:
            raise WireError("a field is longer than 2^32 - 1 bytes")
        parts += [len(data).to_bytes(4, "little"), data]
    return b"".join(parts)


def sign(seed: bytes, message: Message) -> Message:
    """`message` carrying the signature of the key whose seed is given (its `from` must be
    that key's id)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.from_private_bytes(seed)
    if b64(key.public_key().public_bytes_raw()) != message.sender:
        raise WireError("the message's from is not the signing key's id")
    signature = key.sign(message.canonical())
    return message._replace(sig=b64(signature))


def public_id(seed: bytes) -> str:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return b64(Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw())


def verify_strict(public: bytes, message: bytes, sig: object) -> bool:
    """ed25519-dalek's `verify_strict`: refuses small-order keys, small-order (or
    non-canonical) R and S >= L before checking the equation."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        raw = unb64(sig, 64, "a signature")
    except WireError:
        return False
    r, s = raw[:32], int.from_bytes(raw[32:], "little")
    if len(public) != 32 or small_order(public) or small_order(r) or s >= _L:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(raw, message)
    except (InvalidSignature, ValueError):
        return False
    return True


# -- the message as JSON -----------------------------------------------------------------------


def parse_line(line: str) -> Message:
    """One `SignedMessage` JSON object (unknown keys ignored, as serde does); `WireError` naming
    what is wrong otherwise. Pairing kinds parse: the caller decides what to do with them."""
    try:
        data = json.loads(line, object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError):
        raise WireError("not JSON") from None
    if not isinstance(data, dict):
        raise WireError("not a JSON object")
    for name in ("from", "to", "text", "msg_id", "sig"):
        if not isinstance(data.get(name), str):
            raise WireError(f"{name!r} is required text")
    ts = data.get("ts")
    if not isinstance(ts, int) or isinstance(ts, bool) or not 0 <= ts <= MAX_TS:
        raise WireError("'ts' is required: unix milliseconds, an unsigned 64-bit number")
    kind = data.get("kind", "message")
    if kind not in KINDS:
        raise WireError(f"'kind' is one of {', '.join(KINDS)}")
    optional: dict[str, str | None] = {}
    for name in ("task_id", "status", "in_reply_to", "reply_to"):
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            raise WireError(f"{name!r} is text or absent")
        optional[name] = value
    if optional["status"] is not None and optional["status"] not in STATUSES:
        raise WireError(f"'status' is one of {', '.join(STATUSES)}")
    for name in ("from", "to", "text", "msg_id", "task_id", "in_reply_to", "reply_to"):
        value = data.get(name)
        if isinstance(value, str) and not _encodable(value):
            raise WireError(f"{name!r} is not valid UTF-8 text")
    return Message(
        sender=data["from"],
        recipient=data["to"],
        text=data["text"],
        ts=ts,
        msg_id=data["msg_id"],
        kind=kind,
        sig=data["sig"],
        **optional,
    )


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # serde refuses a struct with a field given twice; so does this.
    out = dict(pairs)
    if len(out) != len(pairs):
        raise WireError("a key appears twice")
    return out


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
