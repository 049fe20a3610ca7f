"""Tests for taskfs.core.signing: the encoding, keys, sign and verify."""

from __future__ import annotations

import base64
import hashlib
import struct
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from hypothesis import assume, given
from hypothesis import strategies as st

from taskfs.core import signing
from taskfs.core.signing import (
    EVIDENCE_DOMAIN,
    MESSAGE_DOMAIN,
    KeyPair,
    SigningError,
    canonical_encoding,
    generate_keypair,
    key_id,
    load_private_key_pem,
    parse_public_key,
    private_key_pem,
    public_key_text,
    sign,
    signed_bytes,
    verify,
)

Fields = list[tuple[str, str | None]]

KEY = generate_keypair()
OTHER_KEY = generate_keypair()

BASE: Fields = [
    ("task_id", "t-42"),
    ("status", "result"),
    ("in_reply_to", None),
    ("note", ""),
    ("text", "done: see evidence"),
]

# --- an independent reading of the documented layout ------------------------------------------


def _decode(data: bytes) -> Fields:
    """Parse a canonical encoding back into fields, following the module docstring only."""
    out: Fields = []
    i = 0

    def take(n: int) -> bytes:
        nonlocal i
        assert i + n <= len(data), "truncated encoding"
        chunk = data[i : i + n]
        i += n
        return chunk

    while i < len(data):
        (name_length,) = struct.unpack(">I", take(4))
        name = take(name_length).decode("utf-8")
        (value_length,) = struct.unpack(">I", take(4))
        value = None if value_length == 0xFFFFFFFF else take(value_length).decode("utf-8")
        out.append((name, value))
    return out


def _decode_signed(data: bytes) -> tuple[str, Fields]:
    domain, _, rest = data.partition(b"\x00")
    return domain.decode("utf-8"), _decode(rest)


# Characters that look like parts of the encoding once UTF-8 encoded: NUL, small length bytes,
# 0x7f/0x80 boundaries, U+00FF and U+FFFF (whose UTF-8 contains 0xbf/0xbf), and whole fake
# length prefixes and None markers as text.
_TRICKY = st.sampled_from(
    [
        "\x00",
        "\x01",
        "\x02",
        "\x04",
        "\x7f",
        "\x80",
        "\xff",
        "\uffff",
        "\U0001f600",
        "\x00\x00\x00\x01",
        "\x00\x00\x00\x00",
        "\xff\xff\xff\xff",
        "a",
    ]
)
_texts = st.lists(st.one_of(_TRICKY, st.characters(codec="utf-8")), max_size=8).map("".join)
_values = st.none() | _texts
_field_lists = st.lists(st.tuples(_texts, _values), max_size=6, unique_by=lambda f: f[0])
_domains = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=20)


# --- canonical encoding ---------------------------------------------------------------------


def test_canonical_encoding_matches_the_documented_example() -> None:
    expected = bytes.fromhex("00000001610000000262630000000164ffffffff")
    assert canonical_encoding([("a", "bc"), ("d", None)]) == expected


def test_canonical_encoding_counts_utf8_bytes_not_characters() -> None:
    encoded = canonical_encoding([("é", "€")])
    assert encoded == b"\x00\x00\x00\x02" + "é".encode() + b"\x00\x00\x00\x03" + "€".encode()


def test_empty_field_list_encodes_to_nothing() -> None:
    assert canonical_encoding([]) == b""
    assert signed_bytes(MESSAGE_DOMAIN, []) == b"interlink-v2\x00"


def test_none_and_empty_string_encode_differently() -> None:
    assert canonical_encoding([("a", None)]) != canonical_encoding([("a", "")])


def test_duplicate_field_names_are_refused() -> None:
    with pytest.raises(ValueError, match="more than once"):
        canonical_encoding([("a", "1"), ("b", None), ("a", "2")])
    with pytest.raises(ValueError, match="more than once"):
        sign(KEY.private, MESSAGE_DOMAIN, [("a", "1"), ("a", "1")])
    with pytest.raises(ValueError, match="more than once"):
        verify(KEY.public, MESSAGE_DOMAIN, [("a", "1"), ("a", "1")], "ed25519:")


@pytest.mark.parametrize(
    "fields",
    [
        [("a", 1)],
        [(1, "a")],
        [("a", b"bytes")],
        [("a",)],
        [("a", "b", "c")],
        ["ab"],
        [["a", "b"]],
        "ab",
    ],
)
def test_wrong_types_in_fields_raise_type_error(fields: Any) -> None:
    with pytest.raises(TypeError):
        canonical_encoding(fields)


def test_unencodable_text_cannot_be_signed_and_never_verifies() -> None:
    fields: Fields = [("text", "lone \ud800 surrogate")]
    with pytest.raises(SigningError, match="UTF-8"):
        sign(KEY.private, MESSAGE_DOMAIN, fields)
    good = sign(KEY.private, MESSAGE_DOMAIN, [("text", "lone  surrogate")])
    assert verify(KEY.public, MESSAGE_DOMAIN, fields, good) is False


def test_lengths_stop_short_of_the_none_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(signing, "_MAX_LENGTH", 3)
    assert canonical_encoding([("abc", "xyz")])
    with pytest.raises(SigningError, match="longer than"):
        canonical_encoding([("abcd", None)])
    with pytest.raises(SigningError, match="longer than"):
        canonical_encoding([("a", "wxyz")])


def test_signed_bytes_is_domain_nul_encoding() -> None:
    assert signed_bytes(EVIDENCE_DOMAIN, BASE) == (
        b"taskfs-evidence-v1\x00" + canonical_encoding(BASE)
    )


@pytest.mark.parametrize("domain", ["", "interlink-v2\x00", "a\x00b", "\ud800"])
def test_bad_domains_are_refused(domain: str) -> None:
    with pytest.raises(ValueError, match="domain"):
        signed_bytes(domain, BASE)
    with pytest.raises(ValueError, match="domain"):
        sign(KEY.private, domain, BASE)


@given(_field_lists)
def test_decoding_recovers_every_field_list(fields: Fields) -> None:
    # A left inverse exists, so the encoding is injective.
    assert _decode(canonical_encoding(fields)) == fields


@given(_field_lists, _field_lists)
def test_different_field_lists_never_encode_equal(a: Fields, b: Fields) -> None:
    assume(a != b)
    assert canonical_encoding(a) != canonical_encoding(b)


def _boundary_shifts(fields: Fields, i: int, k: int) -> Iterator[Fields]:
    """Variants with the same concatenated text but one boundary moved by k characters."""
    name, value = fields[i]
    if value is not None:
        # The end of the name moves into the value, and the start of the value into the name.
        yield [
            *fields[:i],
            (name[:-k] if k <= len(name) else "", name[-k:] + value),
            *fields[i + 1 :],
        ]
        yield [*fields[:i], (name + value[:k], value[k:]), *fields[i + 1 :]]
        if i + 1 < len(fields):
            next_name, next_value = fields[i + 1]
            # The end of the value moves into the next name.
            yield [
                *fields[:i],
                (name, value[:-k] if k <= len(value) else ""),
                (value[-k:] + next_name, next_value),
                *fields[i + 2 :],
            ]


@given(_field_lists, st.data())
def test_moving_text_across_a_boundary_changes_the_encoding(fields: Fields, data: Any) -> None:
    # The targeted collision attempt: same characters in the same order, different split.
    assume(fields)
    i = data.draw(st.integers(0, len(fields) - 1))
    k = data.draw(st.integers(1, 4))
    for shifted in _boundary_shifts(fields, i, k):
        if shifted == fields or len({n for n, _ in shifted}) != len(shifted):
            continue
        assert canonical_encoding(shifted) != canonical_encoding(fields)


@given(_domains, _field_lists, _domains, _field_lists)
def test_signed_bytes_is_injective_over_domain_and_fields(
    domain_a: str, a: Fields, domain_b: str, b: Fields
) -> None:
    assert _decode_signed(signed_bytes(domain_a, a)) == (domain_a, a)
    assume((domain_a, a) != (domain_b, b))
    assert signed_bytes(domain_a, a) != signed_bytes(domain_b, b)


# --- sign and verify ------------------------------------------------------------------------


def test_round_trip() -> None:
    signature = sign(KEY.private, MESSAGE_DOMAIN, BASE)
    assert signature.startswith("ed25519:")
    assert len(signature) == len("ed25519:") + 88
    assert verify(KEY.public, MESSAGE_DOMAIN, BASE, signature) is True
    # Any sequence of pairs will do: a tuple signs the same bytes as a list.
    assert verify(KEY.public, MESSAGE_DOMAIN, tuple(BASE), signature) is True


def test_signatures_are_deterministic() -> None:
    assert sign(KEY.private, MESSAGE_DOMAIN, BASE) == sign(KEY.private, MESSAGE_DOMAIN, BASE)
    assert sign(KEY.private, MESSAGE_DOMAIN, BASE) != sign(OTHER_KEY.private, MESSAGE_DOMAIN, BASE)


def test_raw_ed25519_over_signed_bytes_agrees() -> None:
    # Interoperability: the signature is plain Ed25519 over signed_bytes, nothing more.
    signature = sign(KEY.private, EVIDENCE_DOMAIN, BASE)
    raw = base64.b64decode(signature.removeprefix("ed25519:"))
    ed25519.Ed25519PublicKey.from_public_bytes(KEY.public).verify(
        raw, signed_bytes(EVIDENCE_DOMAIN, BASE)
    )


def _mutations(fields: Fields) -> Iterator[tuple[str, Fields]]:
    for i, (name, value) in enumerate(fields):
        changed = list(fields)
        changed[i] = (name, "x" if value is None else value + "x")
        yield f"change-{name}", changed
        if value:
            flipped = list(fields)
            head = value[0]
            flipped[i] = (name, chr(ord(head) ^ 1) + value[1:])
            yield f"flip-char-{name}", flipped
        renamed = list(fields)
        renamed[i] = (name + "_", value)
        yield f"rename-{name}", renamed
        dropped = fields[:i] + fields[i + 1 :]
        yield f"drop-{name}", dropped
        if i + 1 < len(fields):
            swapped = list(fields)
            swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
            yield f"swap-{name}", swapped
        if value is None:
            emptied = list(fields)
            emptied[i] = (name, "")
            yield f"none-to-empty-{name}", emptied
        if value == "":
            nulled = list(fields)
            nulled[i] = (name, None)
            yield f"empty-to-none-{name}", nulled
    yield "reversed", list(reversed(fields))
    yield "extra-field", [*fields, ("extra", None)]
    yield "empty", []


_BASE_MUTATIONS = list(_mutations(BASE))


def test_the_mutations_cover_the_required_cases() -> None:
    labels = {label for label, _ in _BASE_MUTATIONS}
    assert {"none-to-empty-in_reply_to", "empty-to-none-note", "swap-task_id"} <= labels


@pytest.mark.parametrize(
    "mutated", [m for _, m in _BASE_MUTATIONS], ids=[label for label, _ in _BASE_MUTATIONS]
)
def test_any_change_to_the_fields_breaks_the_signature(mutated: Fields) -> None:
    signature = sign(KEY.private, MESSAGE_DOMAIN, BASE)
    assert mutated != BASE
    assert verify(KEY.public, MESSAGE_DOMAIN, mutated, signature) is False


@pytest.mark.parametrize("domain", ["interlink-v1", "interlink-v2 ", "Interlink-v2", "x"])
def test_changing_the_domain_breaks_the_signature(domain: str) -> None:
    signature = sign(KEY.private, MESSAGE_DOMAIN, BASE)
    assert verify(KEY.public, domain, BASE, signature) is False


def test_message_and_evidence_signatures_do_not_cross_domains() -> None:
    message_signature = sign(KEY.private, MESSAGE_DOMAIN, BASE)
    evidence_signature = sign(KEY.private, EVIDENCE_DOMAIN, BASE)
    assert message_signature != evidence_signature
    assert verify(KEY.public, EVIDENCE_DOMAIN, BASE, message_signature) is False
    assert verify(KEY.public, MESSAGE_DOMAIN, BASE, evidence_signature) is False
    assert verify(KEY.public, EVIDENCE_DOMAIN, BASE, evidence_signature) is True


def test_another_key_does_not_verify() -> None:
    signature = sign(KEY.private, MESSAGE_DOMAIN, BASE)
    assert verify(OTHER_KEY.public, MESSAGE_DOMAIN, BASE, signature) is False


def _malformed_signatures() -> list[tuple[str, object]]:
    good = sign(KEY.private, MESSAGE_DOMAIN, BASE)
    body = good.removeprefix("ed25519:")
    raw = base64.b64decode(body)
    # 64 bytes leave 4 unused bits in the last base64 character before "==".
    last = body[-3]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    non_canonical = body[:-3] + alphabet[alphabet.index(last) ^ 1] + "=="
    assert base64.b64decode(non_canonical) == raw
    return [
        ("empty", ""),
        ("prefix-only", "ed25519:"),
        ("no-prefix", body),
        ("upper-prefix", "ED25519:" + body),
        ("other-prefix", "ed448:" + body),
        ("bad-base64", "ed25519:" + "!" + body[1:]),
        ("63-bytes", "ed25519:" + base64.b64encode(raw[:63]).decode()),
        ("65-bytes", "ed25519:" + base64.b64encode(raw + b"\x00").decode()),
        ("0-bytes", "ed25519:" + base64.b64encode(b"").decode()),
        ("unpadded", "ed25519:" + body.rstrip("=")),
        ("urlsafe", "ed25519:" + base64.urlsafe_b64encode(raw).decode() + "-_"),
        ("non-canonical-bits", "ed25519:" + non_canonical),
        ("trailing-newline", good + "\n"),
        ("leading-space", " " + good),
        ("inner-space", good[:20] + " " + good[21:]),
        ("non-ascii", good[:-3] + "é=="),
        ("fullwidth", good[:-3] + "\uff21=="),
        ("surrogate", good[:-3] + "\ud800=="),
        ("all-zero", "ed25519:" + base64.b64encode(bytes(64)).decode()),
        ("huge", "ed25519:" + "A" * 1_000_000),
        ("bytes", good.encode()),
        ("none", None),
        ("int", 7),
    ]


_MALFORMED = _malformed_signatures()


@pytest.mark.parametrize(
    "signature", [s for _, s in _MALFORMED], ids=[label for label, _ in _MALFORMED]
)
def test_malformed_signatures_are_false_not_errors(signature: Any) -> None:
    assert verify(KEY.public, MESSAGE_DOMAIN, BASE, signature) is False


@given(st.text())
def test_verify_never_raises_on_arbitrary_text(text: str) -> None:
    assert verify(KEY.public, MESSAGE_DOMAIN, BASE, text) is False
    assert verify(KEY.public, MESSAGE_DOMAIN, BASE, "ed25519:" + text) is False


@given(st.binary(min_size=64, max_size=64))
def test_verify_refuses_random_signatures(raw: bytes) -> None:
    signature = "ed25519:" + base64.b64encode(raw).decode()
    assert verify(KEY.public, MESSAGE_DOMAIN, BASE, signature) is False


@given(_field_lists, _domains)
def test_sign_then_verify_holds_for_random_fields(fields: Fields, domain: str) -> None:
    signature = sign(KEY.private, domain, fields)
    assert verify(KEY.public, domain, fields, signature) is True
    assert verify(OTHER_KEY.public, domain, fields, signature) is False


@given(_field_lists, _field_lists)
def test_a_signature_verifies_only_its_own_fields(a: Fields, b: Fields) -> None:
    assume(a != b)
    assert verify(KEY.public, MESSAGE_DOMAIN, b, sign(KEY.private, MESSAGE_DOMAIN, a)) is False


@pytest.mark.parametrize("public", [b"", bytes(31), bytes(33), b"\x00" * 64])
def test_verify_is_false_for_public_key_bytes_of_the_wrong_length(public: bytes) -> None:
    signature = sign(KEY.private, MESSAGE_DOMAIN, BASE)
    assert verify(public, MESSAGE_DOMAIN, BASE, signature) is False


def test_verify_wants_raw_bytes_not_key_text() -> None:
    signature = sign(KEY.private, MESSAGE_DOMAIN, BASE)
    with pytest.raises(TypeError):
        verify(public_key_text(KEY.public), MESSAGE_DOMAIN, BASE, signature)  # type: ignore[arg-type]


# --- weak public keys -----------------------------------------------------------------------

_P = 2**255 - 19
_Y8 = int.from_bytes(
    bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"), "little"
)
_SMALL_ORDER = [
    (y | (sign_bit << 255)).to_bytes(32, "little")
    for y in (0, 1, _P - 1, _Y8, _P - _Y8)
    for sign_bit in (0, 1)
]
_NON_CANONICAL = [(y).to_bytes(32, "little") for y in (_P, _P + 1, _P + 18)]


@pytest.mark.parametrize("public", _SMALL_ORDER + _NON_CANONICAL)
def test_weak_public_keys_are_refused(public: bytes) -> None:
    text = "ed25519:" + base64.b64encode(public).decode()
    with pytest.raises(SigningError):
        parse_public_key(text)
    with pytest.raises(SigningError):
        public_key_text(public)
    # The key-less forgery R = A, S = 0 passes raw OpenSSL verification for a share of
    # messages under most small-order keys; verify() refuses all of them.
    forged = "ed25519:" + base64.b64encode(public + bytes(32)).decode()
    for i in range(32):
        assert verify(public, MESSAGE_DOMAIN, [("i", str(i))], forged) is False


def test_the_identity_key_really_is_a_universal_forgery_in_raw_openssl() -> None:
    # Why the small-order check exists: without it, anyone could speak for such a key.
    identity = (1).to_bytes(32, "little")
    raw_key = ed25519.Ed25519PublicKey.from_public_bytes(identity)
    forged = identity + bytes(32)
    accepted = 0
    for i in range(16):
        try:
            raw_key.verify(forged, signed_bytes(MESSAGE_DOMAIN, [("i", str(i))]))
            accepted += 1
        except InvalidSignature:
            pass
    assert accepted == 16
    assert not verify(identity, MESSAGE_DOMAIN, [("i", "0")], "ed25519:" + _b64(forged))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# --- keys -----------------------------------------------------------------------------------


def test_generated_keys_are_32_raw_bytes_and_distinct() -> None:
    assert len(KEY.private) == 32
    assert len(KEY.public) == 32
    assert KEY != OTHER_KEY


def test_keypair_checks_its_halves() -> None:
    assert KeyPair(private=KEY.private, public=KEY.public) == KEY
    with pytest.raises(SigningError, match="does not belong"):
        KeyPair(private=KEY.private, public=OTHER_KEY.public)
    with pytest.raises(SigningError):
        KeyPair(private=KEY.private[:31], public=KEY.public)
    with pytest.raises(SigningError):
        KeyPair(private=KEY.private, public=KEY.public + b"\x00")
    with pytest.raises(TypeError):
        KeyPair(private=KEY.private.hex(), public=KEY.public)  # type: ignore[arg-type]


def test_keypair_repr_hides_the_seed() -> None:
    text = repr(KEY)
    assert KEY.private.hex() not in text
    assert repr(KEY.private) not in text
    assert "private" not in text


def test_public_key_text_round_trip() -> None:
    text = public_key_text(KEY.public)
    assert text.startswith("ed25519:")
    assert len(text) == len("ed25519:") + 44
    assert parse_public_key(text) == KEY.public


def _bad_public_key_texts() -> list[tuple[str, object]]:
    body = _b64(KEY.public)
    last = body[-2]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    non_canonical = body[:-2] + alphabet[alphabet.index(last) ^ 1] + "="
    assert base64.b64decode(non_canonical) == KEY.public
    return [
        ("empty", ""),
        ("no-prefix", body),
        ("wrong-prefix", "ed448:" + body),
        ("upper-prefix", "ED25519:" + body),
        ("31-bytes", "ed25519:" + _b64(KEY.public[:31])),
        ("33-bytes", "ed25519:" + _b64(KEY.public + b"\x00")),
        ("64-bytes", "ed25519:" + _b64(KEY.public * 2)),
        ("bad-base64", "ed25519:" + "*" + body[1:]),
        ("unpadded", "ed25519:" + body.rstrip("=")),
        ("non-canonical-bits", "ed25519:" + non_canonical),
        ("trailing-newline", "ed25519:" + body + "\n"),
        ("non-ascii", "ed25519:" + body[:-2] + "é="),
        ("bytes", ("ed25519:" + body).encode()),
        ("none", None),
    ]


_BAD_PUBLIC_TEXTS = _bad_public_key_texts()


@pytest.mark.parametrize(
    "text", [t for _, t in _BAD_PUBLIC_TEXTS], ids=[label for label, _ in _BAD_PUBLIC_TEXTS]
)
def test_parse_public_key_refuses_malformed_text(text: Any) -> None:
    with pytest.raises(SigningError):
        parse_public_key(text)


def test_key_id_is_a_short_stable_digest() -> None:
    kid = key_id(KEY.public)
    assert kid == hashlib.sha256(KEY.public).hexdigest()[:16]
    assert len(kid) == 16
    assert kid == key_id(bytes(KEY.public))
    assert kid != key_id(OTHER_KEY.public)
    with pytest.raises(SigningError):
        key_id(KEY.public[:31])


def test_pem_round_trip() -> None:
    pem = private_key_pem(KEY.private)
    assert pem.startswith(b"-----BEGIN PRIVATE KEY-----\n")
    assert b"ENCRYPTED" not in pem
    loaded = load_private_key_pem(pem)
    assert loaded == KEY
    assert sign(loaded.private, MESSAGE_DOMAIN, BASE) == sign(KEY.private, MESSAGE_DOMAIN, BASE)


def test_pem_written_by_cryptography_loads() -> None:
    key = ed25519.Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    loaded = load_private_key_pem(pem)
    assert loaded.public == key.public_key().public_bytes_raw()


def _pkcs8(key: Any, encryption: Any = None) -> bytes:
    data: bytes = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        encryption or serialization.NoEncryption(),
    )
    return data


_FOREIGN_KEYS: list[tuple[str, Callable[[], bytes], str]] = [
    ("rsa", lambda: _pkcs8(rsa.generate_private_key(65537, 2048)), "RSA"),
    ("ec-p256", lambda: _pkcs8(ec.generate_private_key(ec.SECP256R1())), "EC"),
    ("ed448", lambda: _pkcs8(ed448.Ed448PrivateKey.generate()), "Ed448"),
]


@pytest.mark.parametrize(
    ("make_pem", "kind"),
    [(make, kind) for _, make, kind in _FOREIGN_KEYS],
    ids=[label for label, _, _ in _FOREIGN_KEYS],
)
def test_load_private_key_pem_refuses_other_algorithms(
    make_pem: Callable[[], bytes], kind: str
) -> None:
    with pytest.raises(SigningError, match=f"{kind}.*Ed25519 only"):
        load_private_key_pem(make_pem())


def test_load_private_key_pem_refuses_an_encrypted_key() -> None:
    key = ed25519.Ed25519PrivateKey.generate()
    pem = _pkcs8(key, serialization.BestAvailableEncryption(b"secret"))
    with pytest.raises(SigningError, match="encrypted"):
        load_private_key_pem(pem)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"garbage",
        b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        private_key_pem(bytes(range(32)))[:60],
        ed25519.Ed25519PrivateKey.from_private_bytes(bytes(32))
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo),
        "-----BEGIN PRIVATE KEY-----",
        None,
    ],
    ids=["empty", "garbage", "bad-body", "truncated", "public-key-pem", "str", "none"],
)
def test_load_private_key_pem_refuses_garbage(data: Any) -> None:
    with pytest.raises(SigningError):
        load_private_key_pem(data)


@pytest.mark.parametrize("private", [b"", bytes(31), bytes(33)])
def test_private_keys_of_the_wrong_length_are_refused(private: bytes) -> None:
    with pytest.raises(SigningError, match="32-byte seed"):
        sign(private, MESSAGE_DOMAIN, BASE)
    with pytest.raises(SigningError, match="32-byte seed"):
        private_key_pem(private)


# --- fixed test vector ----------------------------------------------------------------------

VECTOR_SEED = bytes(range(32))
VECTOR_FIELDS: Fields = [
    ("task_id", "t-1"),
    ("from", "alice"),
    ("to", "bob"),
    ("status", "result"),
    ("in_reply_to", None),
    ("text", "héllo\x00wörld"),
]
VECTOR_PUBLIC_TEXT = "ed25519:A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg="
VECTOR_KEY_ID = "56475aa75463474c"
VECTOR_SIGNED_BYTES = bytes.fromhex(
    "696e7465726c696e6b2d7632"  # "interlink-v2"
    "00"
    "00000007"
    "7461736b5f6964"
    "00000003"
    "742d31"  # task_id = "t-1"
    "00000004"
    "66726f6d"
    "00000005"
    "616c696365"  # from = "alice"
    "00000002"
    "746f"
    "00000003"
    "626f62"  # to = "bob"
    "00000006"
    "737461747573"
    "00000006"
    "726573756c74"  # status = "result"
    "0000000b"
    "696e5f7265706c795f746f"
    "ffffffff"  # in_reply_to = None
    "00000004"
    "74657874"
    "0000000d"
    "68c3a96c6c6f0077c3b6726c64"  # text = "héllo\0wörld"
)
VECTOR_MESSAGE_SIGNATURE = (
    "ed25519:pj7N/0ObkMNGS7xa51B0L1WLJgVkgK2beQK3C8/lhJzT3nJo"
    "nWgkBXWZMXQaa5kAjVs1UDfoJHKWYpewCG2PCg=="
)
VECTOR_EVIDENCE_SIGNATURE = (
    "ed25519:QfRg+cylv11Vtv4dyJOdL0oQE8BfcwSLBUI4/iMdEhwHgJGh"
    "iUapmKPyGCspwm4Seou98zOJkS/+NqohzOUsCQ=="
)


def test_fixed_vector() -> None:
    pair = load_private_key_pem(private_key_pem(VECTOR_SEED))
    assert pair.private == VECTOR_SEED
    assert public_key_text(pair.public) == VECTOR_PUBLIC_TEXT
    assert key_id(pair.public) == VECTOR_KEY_ID
    assert signed_bytes(MESSAGE_DOMAIN, VECTOR_FIELDS) == VECTOR_SIGNED_BYTES
    assert sign(VECTOR_SEED, MESSAGE_DOMAIN, VECTOR_FIELDS) == VECTOR_MESSAGE_SIGNATURE
    assert sign(VECTOR_SEED, EVIDENCE_DOMAIN, VECTOR_FIELDS) == VECTOR_EVIDENCE_SIGNATURE
    public = parse_public_key(VECTOR_PUBLIC_TEXT)
    assert verify(public, MESSAGE_DOMAIN, VECTOR_FIELDS, VECTOR_MESSAGE_SIGNATURE)
    assert verify(public, EVIDENCE_DOMAIN, VECTOR_FIELDS, VECTOR_EVIDENCE_SIGNATURE)
    # The literal bytes verify with plain Ed25519, independently of this module's encoder.
    raw = base64.b64decode(VECTOR_MESSAGE_SIGNATURE.removeprefix("ed25519:"))
    ed25519.Ed25519PublicKey.from_public_bytes(public).verify(raw, VECTOR_SIGNED_BYTES)
