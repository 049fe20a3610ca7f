"""An independent implementation of interlink's message signature, for tests only.

Written from wilfreddenton/interlink at 550331e, `src/identity.rs` (`canonical`, `sign_full`,
`SignedMessage::verify`) and ed25519-dalek's `verify_strict`, NOT from taskfs's code: it imports
nothing of taskfs, so a test that signs with it and hands the result to taskfs (or verifies what
taskfs exported) checks taskfs against interlink, not against itself.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

L = 2**252 + 27742317777372353535851937790883648493
P = 2**255 - 19
# The eight small-order points, as their canonical encodings' y (sign bit ignored).
_Y8 = 0x05FC536D880238B13933C6D305ACDFD5F098EFF289F4C345B027B2C28F95E826
SMALL_ORDER_Y = {0, 1, P - 1, _Y8, P - _Y8}


def b64e(raw: bytes) -> str:
    # base64::engine::general_purpose::URL_SAFE_NO_PAD
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def b64d(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def canonical(msg: dict[str, Any]) -> bytes:
    """identity.rs `canonical`: domain, from, to, ts u64 LE, then kind, msg_id, text, status,
    task_id, in_reply_to, each u32 LE length + UTF-8 (absent = empty)."""
    out = b"interlink-v2\x00" + b64d(msg["from"]) + b64d(msg["to"]) + struct.pack("<Q", msg["ts"])
    for name in ("kind", "msg_id", "text", "status", "task_id", "in_reply_to"):
        value = msg.get(name) or ""
        if name == "kind" and not value:
            value = "message"  # #[serde(default)]
        data = value.encode("utf-8")
        out += struct.pack("<I", len(data)) + data
    return out


def sign(seed: bytes, msg: dict[str, Any]) -> dict[str, Any]:
    """`sign_full`, as serde serialises the result: key order and absent keys left out."""
    key = Ed25519PrivateKey.from_private_bytes(seed)
    body = {"from": b64e(key.public_key().public_bytes_raw()), **msg}
    order = ["from", "to", "text", "ts", "msg_id", "kind"]
    order += ["task_id", "status", "in_reply_to", "reply_to"]
    out = {k: body[k] for k in order if body.get(k) is not None}
    out.setdefault("kind", "message")
    out = {k: out[k] for k in order if k in out}
    out["sig"] = b64e(key.sign(canonical(out)))
    return out


def line(msg: dict[str, Any]) -> str:
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":"))


def _small(point: bytes) -> bool:
    y = int.from_bytes(point, "little") & ((1 << 255) - 1)
    return y >= P or y in SMALL_ORDER_Y


def verify(msg: dict[str, Any]) -> bool:
    """`SignedMessage::verify` with dalek's `verify_strict`."""
    public, sig = b64d(msg["from"]), b64d(msg["sig"])
    if len(public) != 32 or len(sig) != 64 or b64e(sig) != msg["sig"]:
        return False
    if _small(public) or _small(sig[:32]) or int.from_bytes(sig[32:], "little") >= L:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(sig, canonical(msg))
    except InvalidSignature:
        return False
    return True


def public_id(seed: bytes) -> str:
    return b64e(Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw())


def secret_scalar(seed: bytes) -> int:
    """RFC 8032 5.1.5: the clamped scalar a seed stands for (to build edge-case signatures)."""
    h = bytearray(hashlib.sha512(seed).digest()[:32])
    h[0] &= 248
    h[31] &= 127
    h[31] |= 64
    return int.from_bytes(h, "little")


def sign_with_r(seed: bytes, r_point: bytes, message: bytes) -> bytes:
    """A signature whose R is `r_point` and that satisfies [S]B = R + [k]A when R is the
    identity: S = k * a. Only ed25519's equation holds; dalek's verify_strict refuses it."""
    public = Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
    k = int.from_bytes(hashlib.sha512(r_point + public + message).digest(), "little") % L
    s = (k * secret_scalar(seed)) % L
    return r_point + s.to_bytes(32, "little")


def announce_canonical(pubkey: bytes, name: str, session: dict[str, str], ts: int) -> bytes:
    """identity.rs `announce_canonical`: domain, pubkey, then name, session_id, cwd, git_root,
    summary, each u32 LE length + UTF-8, then ts u64 LE."""
    out = b"interlink-announce-v1\x00" + pubkey
    for value in (
        name,
        session["session_id"],
        session.get("cwd", ""),
        session.get("git_root", ""),
        session.get("summary", ""),
    ):
        data = value.encode("utf-8")
        out += struct.pack("<I", len(data)) + data
    return out + struct.pack("<Q", ts)


def announce(seed: bytes, name: str, session: dict[str, str], ts: int) -> dict[str, Any]:
    """`AgentKey::announce`, as serde serialises the `Announcement`."""
    key = Ed25519PrivateKey.from_private_bytes(seed)
    public = key.public_key().public_bytes_raw()
    full = {k: session.get(k, "") for k in ("session_id", "cwd", "git_root", "summary")}
    sig = key.sign(announce_canonical(public, name, full, ts))
    return {"pubkey": b64e(public), "name": name, "session": full, "ts": ts, "sig": b64e(sig)}


def verify_announcement(entry: dict[str, Any]) -> bool:
    """`Announcement::verify` (`age_ms`, the bus's, is not signed)."""
    try:
        public, sig = b64d(entry["pubkey"]), b64d(entry["sig"])
        message = announce_canonical(public, entry["name"], entry["session"], entry["ts"])
        if len(public) != 32 or len(sig) != 64 or _small(public) or _small(sig[:32]):
            return False
        Ed25519PublicKey.from_public_bytes(public).verify(sig, message)
    except (KeyError, TypeError, ValueError, InvalidSignature):
        return False
    return int.from_bytes(sig[32:], "little") < L
