"""interlink's wire format: vectors from interlink's own `canonical()`, verify_strict, JSON."""

from __future__ import annotations

import json
import os
import re

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from hypothesis import given
from hypothesis import strategies as st

from taskfs.core import wire
from tests import interlink_ref as ref


def key(start: int) -> bytes:
    return bytes((start + i) % 256 for i in range(32))


# The expected bytes below were produced ONCE by interlink's own `canonical()`: the function was
# copied from wilfreddenton/interlink at 550331e (src/identity.rs; it uses only Rust's standard
# library) into a throwaway program outside this repository, with AgentId reduced to its raw key
# bytes and MessageKind/TaskStatus to their `as_str`, compiled with `rustc --edition 2021`
# (rustc on the development machine), run on these three messages, and its hex output pasted
# here. The keys are the byte runs `key(start)` (not curve points: canonical() never checks).
VECTORS = [
    (
        {
            "sender": key(0),
            "recipient": key(32),
            "ts": 1764633600000,
            "kind": "message",
            "msg_id": "00112233445566778899aabbccddeeff",
            "text": "hello",
            "status": None,
            "task_id": None,
            "in_reply_to": None,
        },
        "696e7465726c696e6b2d763200000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d"
        "1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f00e05bdc9a01000007"
        "0000006d6573736167652000000030303131323233333434353536363737383839396161626263636464"
        "656566660500000068656c6c6f000000000000000000000000",
    ),
    (
        {
            "sender": key(0x80),
            "recipient": key(0xA0),
            "ts": 2**64 - 1,
            "kind": "message",
            "msg_id": "ffeeddccbbaa99887766554433221100",
            "text": "Grüße, 世界 — ✓\nzweite Zeile",
            "status": "needs_input",
            "task_id": "login",
            "in_reply_to": "00112233445566778899aabbccddeeff",
        },
        "696e7465726c696e6b2d763200808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d"
        "9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfffffffffffffffff07"
        "0000006d6573736167652000000066666565646463636262616139393838373736363535343433333232"
        "31313030240000004772c3bcc39f652c20e4b896e7958c20e2809420e29c930a7a7765697465205a6569"
        "6c650b0000006e656564735f696e707574050000006c6f67696e20000000303031313232333334343535"
        "3636373738383939616162626363646465656666",
    ),
    (
        {
            "sender": key(0xE0),
            "recipient": key(0x10),
            "ts": 1,
            "kind": "pair_accept",
            "msg_id": "m-1",
            "text": "",
            "status": "result",
            "task_id": "t-1",
            "in_reply_to": None,
        },
        "696e7465726c696e6b2d763200e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfd"
        "feff101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f01000000000000000b"
        "000000706169725f616363657074030000006d2d310000000006000000726573756c7403000000742d31"
        "00000000",
    ),
]


@pytest.mark.parametrize(("fields", "expected"), VECTORS)
def test_canonical_bytes_are_interlinks_own(fields: dict[str, object], expected: str) -> None:
    assert wire.canonical(**fields).hex() == expected  # type: ignore[arg-type]
    # The test's independent encoder agrees too (it is what other tests verify exports with).
    as_json = {
        "from": ref.b64e(fields["sender"]),  # type: ignore[arg-type]
        "to": ref.b64e(fields["recipient"]),  # type: ignore[arg-type]
        **{k: v for k, v in fields.items() if k not in ("sender", "recipient")},
    }
    assert ref.canonical(as_json).hex() == expected


def test_keys_and_signatures_are_url_safe_base64_without_padding() -> None:
    seed = os.urandom(32)
    public = Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
    ident = wire.public_id(seed)
    assert len(ident) == 43
    assert "=" not in ident
    assert ident == ref.public_id(seed)
    assert wire.parse_id(ident) == public
    for bad in (ident + "=", ident[:-1], ident.replace(ident[0], "+"), "ed25519:" + ident, 7):
        with pytest.raises(wire.WireError):
            wire.parse_id(bad)
    # A last character with non-zero unused bits is another text for the same bytes: refused.
    last = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    twin = ident[:-1] + last[last.index(ident[-1]) ^ 1]
    with pytest.raises(wire.WireError):
        wire.parse_id(twin)
    assert wire.parse_seed(wire.b64(seed) + "\n") == seed
    assert re.fullmatch("[0-9a-f]{32}", wire.new_msg_id())


def signed(seed: bytes, **changes: object) -> wire.Message:
    to = wire.public_id(os.urandom(32))
    fields: dict[str, object] = {
        "sender": wire.public_id(seed),
        "recipient": to,
        "text": "Should empty passwords log a warning?",
        "ts": 1764633600000,
        "msg_id": wire.new_msg_id(),
        "task_id": "login",
        "status": "needs_input",
    }
    fields.update(changes)
    return wire.sign(seed, wire.Message(**fields))  # type: ignore[arg-type]


def test_a_signature_verifies_both_ways_and_one_flipped_bit_breaks_it() -> None:
    seed = os.urandom(32)
    message = signed(seed)
    assert message.verified()
    assert ref.verify(json.loads(message.to_json()))
    theirs = ref.sign(seed, {"to": message.recipient, "text": "x", "ts": 5, "msg_id": "a"})
    assert wire.parse_line(ref.line(theirs)).verified()
    raw = bytearray(ref.b64d(message.sig))
    raw[10] ^= 1
    assert not message._replace(sig=wire.b64(bytes(raw))).verified()
    assert not message._replace(text=message.text + "!").verified()
    assert not message._replace(status=None).verified()


IDENTITY = b"\x01" + b"\x00" * 31


def test_verify_strict_refuses_a_small_order_key() -> None:
    # Under the identity point, R = identity and S = 0 satisfy the equation for EVERY message:
    # OpenSSL alone accepts it (shown), verify_strict must not.
    message = b"anything at all"
    forged = IDENTITY + b"\x00" * 32
    Ed25519PublicKey.from_public_bytes(IDENTITY).verify(forged, message)
    assert not wire.verify_strict(IDENTITY, message, wire.b64(forged))
    fake = wire.Message(
        sender=wire.b64(IDENTITY),
        recipient=wire.public_id(os.urandom(32)),
        text="t",
        ts=1,
        msg_id="m",
        sig=wire.b64(forged),
    )
    assert not fake.verified()


def test_verify_strict_refuses_a_small_order_r() -> None:
    seed = os.urandom(32)
    public = Ed25519PrivateKey.from_private_bytes(seed).public_key()
    message = b"interlink-v2\x00 some bytes"
    odd = ref.sign_with_r(seed, IDENTITY, message)
    public.verify(odd, message)  # the equation holds: OpenSSL accepts it
    assert not wire.verify_strict(public.public_bytes_raw(), message, wire.b64(odd))


def test_verify_strict_refuses_s_not_below_the_group_order() -> None:
    seed = os.urandom(32)
    key = Ed25519PrivateKey.from_private_bytes(seed)
    message = b"some bytes"
    good = key.sign(message)
    assert wire.verify_strict(key.public_key().public_bytes_raw(), message, wire.b64(good))
    s = int.from_bytes(good[32:], "little") + ref.L
    malleable = good[:32] + s.to_bytes(32, "little")
    assert not wire.verify_strict(key.public_key().public_bytes_raw(), message, wire.b64(malleable))


def test_the_json_is_serdes_shape_and_order() -> None:
    seed = os.urandom(32)
    bare = signed(seed, task_id=None, status=None)
    assert list(json.loads(bare.to_json())) == ["from", "to", "text", "ts", "msg_id", "kind", "sig"]
    full = signed(seed, in_reply_to="q1", reply_to="abc#s1", text='é\u2028\n"')
    assert list(json.loads(full.to_json())) == [
        "from", "to", "text", "ts", "msg_id", "kind", "task_id", "status", "in_reply_to",
        "reply_to", "sig",
    ]  # fmt: skip
    line = full.to_json()
    assert "\n" not in line
    assert "é" in line
    assert wire.parse_line(line) == full


@pytest.mark.parametrize(
    "line",
    [
        "",
        "[]",
        '{"from": 1}',
        '{"from":"a","to":"b","text":"t","ts":-1,"msg_id":"m","sig":"s"}',
        '{"from":"a","to":"b","text":"t","ts":18446744073709551616,"msg_id":"m","sig":"s"}',
        '{"from":"a","to":"b","text":"t","ts":1.5,"msg_id":"m","sig":"s"}',
        '{"from":"a","to":"b","text":"t","ts":1,"msg_id":"m","sig":"s","kind":"hello"}',
        '{"from":"a","to":"b","text":"t","ts":1,"msg_id":"m","sig":"s","status":"done"}',
        '{"from":"a","to":"b","text":"t","ts":1,"msg_id":"m","sig":"s","sig":"t"}',
        '{"from":"a","to":"b","text":"\\ud800","ts":1,"msg_id":"m","sig":"s"}',
    ],
)
def test_malformed_lines_are_named_never_a_crash(line: str) -> None:
    with pytest.raises(wire.WireError):
        wire.parse_line(line)


@given(
    text=st.text(max_size=40),
    status=st.sampled_from([None, *wire.STATUSES]),
    task_id=st.none() | st.text(min_size=1, max_size=10),
    ts=st.integers(min_value=0, max_value=2**64 - 1),
)
def test_taskfs_and_the_reference_encode_alike(
    text: str, status: str | None, task_id: str | None, ts: int
) -> None:
    try:
        text.encode("utf-8")
        (task_id or "").encode("utf-8")
    except UnicodeEncodeError:
        return
    fields = {
        "from": ref.b64e(key(1)), "to": ref.b64e(key(2)), "text": text, "ts": ts,
        "msg_id": "m", "kind": "message", "status": status, "task_id": task_id,
    }  # fmt: skip
    ours = wire.canonical(key(1), key(2), ts, "message", "m", text, status, task_id, None)
    assert ours == ref.canonical(fields)
