"""interlink's presence as values: the announcement's bytes equal interlink's own, its signature
binds every field, and a message goes to the session interlink's `route_session` picks."""

from __future__ import annotations

import pytest

from taskfs.core import presence, wire
from taskfs.core.presence import Routed, Seen, SessionInfo, Unroutable, choose_session


def key(start: int) -> bytes:
    return bytes((start + i) % 256 for i in range(32))


# The expected bytes below were produced ONCE by interlink's own `announce_canonical`: the
# function was copied from wilfreddenton/interlink at 550331e (src/identity.rs; it uses only
# Rust's standard library) into a throwaway program outside this repository, with AgentId reduced
# to its raw key bytes, compiled with `rustc --edition 2021`, run on these three announcements,
# and its hex output pasted here. The keys are the byte runs `key(start)`.
VECTORS = [
    (
        (
            key(0),
            "alice-laptop",
            SessionInfo("a3f2c1", "/home/alice/eden", "eden", "installing deps"),
            1234,
        ),
        "696e7465726c696e6b2d616e6e6f756e63652d763100000102030405060708090a0b0c0d0e0f1011121314"
        "15161718191a1b1c1d1e1f0c000000616c6963652d6c6170746f7006000000613366326331100000002f68"
        "6f6d652f616c6963652f6564656e040000006564656e0f000000696e7374616c6c696e672064657073d204"
        "000000000000",
    ),
    (
        (key(0x40), "taskfs", SessionInfo("taskfs"), 1764633600000),
        "696e7465726c696e6b2d616e6e6f756e63652d763100404142434445464748494a4b4c4d4e4f5051525354"
        "55565758595a5b5c5d5e5f060000007461736b6673060000007461736b6673000000000000000000000000"
        "00e05bdc9a010000",
    ),
    (
        (
            key(0xE0),
            "Grüße 世界",
            SessionInfo(
                "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
                "/srv/ünï",
                "repo",
                "serves repo: 3 open tasks — ✓",
            ),
            2**64 - 1,
        ),
        "696e7465726c696e6b2d616e6e6f756e63652d763100e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4"
        "f5f6f7f8f9fafbfcfdfeff0e0000004772c3bcc39f6520e4b896e7958c2400000030663165326433632d34"
        "6235612d363937382d383739362d6135623463336432653166300a0000002f7372762fc3bc6ec3af040000"
        "007265706f21000000736572766573207265706f3a2033206f70656e207461736b7320e2809420e29c93ff"
        "ffffffffffffff",
    ),
]


@pytest.mark.parametrize(("fields", "expected"), VECTORS)
def test_the_announcement_bytes_are_interlinks(
    fields: tuple[bytes, str, SessionInfo, int], expected: str
) -> None:
    assert presence.announce_canonical(*fields).hex() == expected


SEED = bytes(range(32))


def test_an_announcement_verifies_and_binds_every_field() -> None:
    # identity.rs: announcement_round_trips_and_rejects_tampering.
    session = SessionInfo("a3f2c1", "/home/alice/eden", "eden", "installing deps")
    made = presence.announce(SEED, "alice-laptop", session, 1234)
    assert made.pubkey == wire.public_id(SEED)
    assert made.verified()
    assert made._replace(age_ms=5).verified()  # the bus's age is not signed
    for changed in (
        made._replace(name="eve-laptop"),
        made._replace(session=session._replace(summary="rm -rf /")),
        made._replace(session=session._replace(session_id="deadbeef")),
        made._replace(ts=1235),
        made._replace(pubkey=wire.public_id(bytes(32))),
    ):
        assert not changed.verified()
    data = made.to_json()
    assert list(data) == ["pubkey", "name", "session", "ts", "sig"]
    assert list(data["session"]) == ["session_id", "cwd", "git_root", "summary"]
    assert presence.parse_announcement({**data, "age_ms": 7, "extra": 1}) == made._replace(age_ms=7)


@pytest.mark.parametrize(
    "entry",
    [
        None,
        [],
        {"pubkey": "k", "name": "n", "ts": -1, "sig": "s"},
        {"pubkey": "k", "name": "n", "ts": True, "sig": "s"},
        {"pubkey": "k", "name": 3, "ts": 1, "sig": "s"},
        {"pubkey": "k", "name": "n", "ts": 1, "sig": "s", "session": {"cwd": "/"}},
        {"pubkey": "k", "name": "n", "ts": 1, "sig": "s", "session": {"session_id": 4}},
        {"pubkey": "k", "name": "n", "ts": 1, "sig": "s", "age_ms": "old"},
    ],
)
def test_what_serde_would_not_read_is_no_announcement(entry: object) -> None:
    assert presence.parse_announcement(entry) is None


def test_the_verified_roster_drops_forgeries_and_copies_from_other_buses() -> None:
    good = presence.announce(SEED, "a", SessionInfo("s1"), 1).to_json()
    forged = {**good, "name": "b"}
    other = presence.announce(SEED, "a", SessionInfo("s2"), 1).to_json()
    found = presence.verified_roster([[good, forged, "x"], [{**good, "age_ms": 3}, other]])
    assert [a.session.session_id for a in found] == ["s1", "s2"]


def seen(session_id: str, age_ms: int = 0) -> Seen:
    return Seen(SessionInfo(session_id), age_ms)


LIVE, AWAY = 1_000, presence.LIVE_MS + 1


@pytest.mark.parametrize(
    ("sessions", "sticky", "hint", "expected"),
    [
        # A lone live session is reached without naming it.
        ([seen("a", LIVE)], None, None, Routed("a", "live", LIVE)),
        # The sticky session wins while it is on the roster, even away (PRESENCE.md), and a live
        # sibling is offered.
        ([seen("a", LIVE), seen("b", AWAY)], "b", None, Routed("b", "away", AWAY, "a")),
        # A gone sticky re-picks the lone live session.
        ([seen("a", LIVE), seen("c", AWAY)], "b", None, Routed("a", "live", LIVE)),
        # A lone away session is used: it drains when it wakes.
        ([seen("a", AWAY)], None, None, Routed("a", "away", AWAY)),
        # Nothing on the roster: only a sticky session (gone) is queued for.
        ([], "b", None, Routed("b", "gone")),
        # A session hint: exact, unique prefix, or verbatim (gone).
        ([seen("abcd", LIVE), seen("abef", LIVE)], None, "abe", Routed("abef", "live", LIVE)),
        ([seen("abcd", LIVE)], None, "zz", Routed("zz", "gone")),
    ],
)
def test_a_session_is_chosen_as_interlink_chooses_it(
    sessions: list[Seen], sticky: str | None, hint: str | None, expected: Routed
) -> None:
    assert choose_session(sessions, sticky=sticky, hint=hint) == expected


@pytest.mark.parametrize(
    ("sessions", "hint"),
    [
        ([seen("a", LIVE), seen("b", LIVE)], None),  # several live: pass session=
        ([seen("a", AWAY), seen("b", AWAY)], None),  # several, all away
        ([], None),  # offline, nothing sticky
        ([seen("ab", LIVE), seen("ac", LIVE)], "a"),  # an ambiguous prefix
    ],
)
def test_no_guess_is_made_between_sessions(sessions: list[Seen], hint: str | None) -> None:
    assert isinstance(choose_session(sessions, hint=hint), Unroutable)


def test_ones_own_session_is_never_the_target() -> None:
    assert choose_session([seen("me", LIVE), seen("tab", LIVE)], exclude="me") == Routed(
        "tab", "live", LIVE
    )


def test_routes_are_interlinks() -> None:
    # route.rs: round_trips_session_scoped, empty_session_is_bare.
    assert presence.route("KEY", "s12") == "KEY#s12"
    assert presence.route("KEY", None) == "KEY"
    assert presence.split_route("KEY#s12") == ("KEY", "s12")
    assert presence.split_route("KEY#") == ("KEY#", None)
    assert presence.split_route("KEY") == ("KEY", None)
