"""interlink's presence and session routing, as values: the signed roster announcement, how old
a session's heartbeat may be, and which session of a peer a message goes to.

Pure: values in, values out. This is wilfreddenton/interlink at 550331e: `src/identity.rs`
(`Announcement`, `SessionInfo`, `announce_canonical`), `src/route.rs` (`key#session`),
`src/bin/interlink-mcp.rs` (`LIVE_MS`, `AWAY_STALE_MS`, `route_session`, `resolve_session`,
`presence_of`, `verified_roster`) and docs/PRESENCE.md and docs/SESSIONS.md.

The announcement's signed bytes
-------------------------------
    "interlink-announce-v1" 0x00                 22 bytes
    pubkey                                       32 raw bytes
    name, session_id, cwd, git_root, summary     each u32 little-endian byte length + UTF-8
    ts                                           u64 little-endian, unix milliseconds
The bus adds `age_ms` (milliseconds since the entry's last refresh) to each roster entry; it is
not signed.

Presence: a session whose heartbeat is younger than 90 s is live; older ones are away (probably
asleep) until the bus drops them after three days or on an explicit unregister (gone). A session
announces every 30 s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, NamedTuple

from taskfs.core import wire

ANNOUNCE_DOMAIN = b"interlink-announce-v1\x00"
LIVE_MS = 90_000
AWAY_STALE_MS = 24 * 60 * 60 * 1_000
HEARTBEAT_S = 30

Presence = Literal["live", "away", "gone"]


# -- routes ----------------------------------------------------------------------------------


def route(key: str, session: str | None) -> str:
    """`key#session`, or the bare key when there is no session (`Route::new`)."""
    return f"{key}#{session}" if session else key


def split_route(text: str) -> tuple[str, str | None]:
    """(key, session) of `key#session`; a bare key or `key#` has none (`Route::parse`)."""
    key, mark, session = text.partition("#")
    return (key, session) if mark and session else (text, None)


# -- the announcement ------------------------------------------------------------------------


class SessionInfo(NamedTuple):
    session_id: str
    cwd: str = ""
    git_root: str = ""
    summary: str = ""

    def to_json(self) -> dict[str, str]:
        return {
            "session_id": self.session_id,
            "cwd": self.cwd,
            "git_root": self.git_root,
            "summary": self.summary,
        }


class Announcement(NamedTuple):
    """interlink's `Announcement`: `pubkey` is an interlink id."""

    pubkey: str
    name: str
    session: SessionInfo
    ts: int
    sig: str = ""
    age_ms: int | None = None

    def canonical(self) -> bytes:
        return announce_canonical(wire.parse_id(self.pubkey), self.name, self.session, self.ts)

    def to_json(self) -> dict[str, Any]:
        """serde's shape and key order; `age_ms` left out when absent."""
        data: dict[str, Any] = {
            "pubkey": self.pubkey,
            "name": self.name,
            "session": self.session.to_json(),
            "ts": self.ts,
            "sig": self.sig,
        }
        if self.age_ms is not None:
            data["age_ms"] = self.age_ms
        return data

    def verified(self) -> bool:
        """Whether `sig` is the key's own signature over these fields (`verify_strict`)."""
        try:
            public = wire.parse_id(self.pubkey)
            message = self.canonical()
        except (wire.WireError, UnicodeEncodeError):
            return False
        return wire.verify_strict(public, message, self.sig)

    @property
    def route(self) -> str:
        return route(self.pubkey, self.session.session_id)


def announce_canonical(pubkey: bytes, name: str, session: SessionInfo, ts: int) -> bytes:
    """The bytes of a presence announcement interlink signs (see the module's account)."""
    if len(pubkey) != 32:
        raise wire.WireError("a public key is 32 raw bytes")
    if not 0 <= ts <= wire.MAX_TS:
        raise wire.WireError("ts is an unsigned 64-bit number of milliseconds")
    parts = [ANNOUNCE_DOMAIN, pubkey]
    for value in (name, session.session_id, session.cwd, session.git_root, session.summary):
        data = value.encode("utf-8")
        if len(data) > 2**32 - 1:
            raise wire.WireError("a field is longer than 2^32 - 1 bytes")
        parts += [len(data).to_bytes(4, "little"), data]
    parts.append(ts.to_bytes(8, "little"))
    return b"".join(parts)


def announce(seed: bytes, name: str, session: SessionInfo, ts: int) -> Announcement:
    """`AgentKey::announce`: this key is online as `name`, in this session."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.from_private_bytes(seed)
    public = key.public_key().public_bytes_raw()
    signature = key.sign(announce_canonical(public, name, session, ts))
    return Announcement(wire.b64(public), name, session, ts, wire.b64(signature))


def unregister_body(pubkey: str, session: SessionInfo) -> dict[str, Any]:
    """What `/unregister` takes: the announcement's `{pubkey, session}` (nothing signed)."""
    return {"pubkey": pubkey, "session": session.to_json()}


def parse_announcement(value: object) -> Announcement | None:
    """One roster entry as serde reads an `Announcement` (unknown keys ignored, `session`
    defaulted, its `session_id` required when it is there); None when it is no announcement."""
    if not isinstance(value, dict):
        return None
    pubkey, name, ts, sig = (value.get(k) for k in ("pubkey", "name", "ts", "sig"))
    if not (isinstance(pubkey, str) and isinstance(name, str) and isinstance(sig, str)):
        return None
    if not isinstance(ts, int) or not _u64(ts):
        return None
    raw = value.get("session", {})
    if not isinstance(raw, dict) or ("session_id" not in raw and raw):
        return None
    fields = [raw.get(k, "") for k in ("session_id", "cwd", "git_root", "summary")]
    if not all(isinstance(f, str) for f in fields):
        return None
    age = value.get("age_ms")
    if age is not None and not _u64(age):
        return None
    return Announcement(pubkey, name, SessionInfo(*fields), ts, sig, age)


def _u64(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= wire.MAX_TS


def verified_roster(rosters: Iterable[Iterable[object]]) -> list[Announcement]:
    """Every announcement of every bus's roster whose self-signature verifies, once per
    `key#session` (the first bus's copy wins), in the order seen (`verified_roster`)."""
    out: list[Announcement] = []
    seen: set[str] = set()
    for roster in rosters:
        for entry in roster:
            found = parse_announcement(entry)
            if found is None or not found.verified() or found.route in seen:
                continue
            seen.add(found.route)
            out.append(found)
    return out


def roster_entries(answer: object) -> list[object]:
    """The entries of a `/roster` answer (`{"roster": [...]}`); none for anything else."""
    if isinstance(answer, dict) and isinstance(answer.get("roster"), list):
        return list(answer["roster"])
    return []


# -- routing ---------------------------------------------------------------------------------


class Seen(NamedTuple):
    """One of a peer's sessions on the roster, with the age of its last heartbeat."""

    info: SessionInfo
    age_ms: int

    @property
    def session_id(self) -> str:
        return self.info.session_id

    @property
    def live(self) -> bool:
        return self.age_ms < LIVE_MS


def sessions_of(roster: Sequence[Announcement], key: str) -> list[Seen]:
    """The sessions `key` announced (live and away), in roster order."""
    return [
        Seen(a.session, a.age_ms or 0) for a in roster if a.pubkey == key and a.session.session_id
    ]


class Routed(NamedTuple):
    """Where a message goes: the session, how reachable it is, and a live sibling to offer
    when it is away."""

    session_id: str
    presence: Presence
    age_ms: int = 0
    live_sibling: str | None = None


class Unroutable(NamedTuple):
    """Why no session can be chosen, with the sessions to pick from (interlink refuses these
    with `invalid_params`). `kind`: `ambiguous` (a session prefix matching several), `live`
    (several live), `away` (several, all away) or `none` (none on the roster), which
    `refusal_line` says in interlink's words."""

    reason: str
    sessions: tuple[Seen, ...] = ()
    kind: str = "none"
    hint: str | None = None


def refusal_line(kind: str, peer: str, sessions: str, hint: str | None = None) -> str:
    """interlink's `invalid_params` text for a message it cannot route (`route_session`,
    `resolve_session`), `sessions` being `session_list`'s pick-list."""
    if kind == "ambiguous":
        return f"session '{hint}' matches several sessions — use the full id:\n{sessions}"
    if kind == "live":
        return f"'{peer}' has several live sessions — pass session=<id>:\n{sessions}"
    if kind == "away":
        return f"'{peer}' has several sessions (all away) — pass session=<id>:\n{sessions}"
    return f"no live session for '{peer}' on the roster — they may be offline (run discover)"


def _presence_of(chosen: Seen, sessions: Sequence[Seen]) -> Routed:
    if chosen.live:
        return Routed(chosen.session_id, "live", chosen.age_ms)
    sibling = next((s.session_id for s in sessions if s.live), None)
    return Routed(chosen.session_id, "away", chosen.age_ms, sibling)


def choose_session(
    sessions: Sequence[Seen],
    *,
    sticky: str | None = None,
    hint: str | None = None,
    exclude: str | None = None,
) -> Routed | Unroutable:
    """The session of a peer a message goes to, as interlink chooses it. `hint` (a `session`
    argument): an exact id, else a unique prefix of one, else used as given (gone: the bus
    queues for it). Without one: the sticky session (the one the peer last wrote from) while
    it is on the roster, live or away; else the lone live session; else a lone away one; else
    the sticky one though gone; several to choose from, or none at all, is refused. `exclude`
    is one's own session, never a target."""
    sessions = [s for s in sessions if s.session_id != exclude]
    if hint:
        exact = [s for s in sessions if s.session_id == hint]
        matches = exact or [s for s in sessions if s.session_id.startswith(hint)]
        if len(matches) == 1:
            return _presence_of(matches[0], sessions)
        if not matches:
            return Routed(hint, "gone")
        return Unroutable(
            f"session {hint!r} matches several sessions: use the full id",
            tuple(sessions),
            "ambiguous",
            hint,
        )
    if sticky is not None:
        held = next((s for s in sessions if s.session_id == sticky), None)
        if held is not None:
            return _presence_of(held, sessions)
    live = [s for s in sessions if s.live]
    if len(live) == 1:
        return Routed(live[0].session_id, "live", live[0].age_ms)
    if len(live) > 1:
        return Unroutable(
            "it has several live sessions: pass session=<id>", tuple(sessions), "live"
        )
    if len(sessions) == 1:
        return _presence_of(sessions[0], sessions)
    if not sessions:
        if sticky is not None:
            return Routed(sticky, "gone")
        return Unroutable("no live session on the roster: it may be offline")
    return Unroutable(
        "it has several sessions (all away): pass session=<id>", tuple(sessions), "away"
    )


def ago(age_ms: int) -> str:
    """interlink's human "how long ago" for a heartbeat age."""
    s = age_ms // 1_000
    if s < 90:
        return f"{s}s"
    if s < 90 * 60:
        return f"{s // 60}m"
    if s < 48 * 3_600:
        return f"{s // 3_600}h"
    return f"{s // 86_400} days"


def delivery_note(routed: Routed | None) -> str:
    """interlink's send-time note on the target's presence (docs/PRESENCE.md)."""
    if routed is None or routed.presence == "gone":
        return (
            "that session isn't on the roster (closed or long-dead), so it may not deliver — "
            "run discover"
        )
    if routed.presence == "live":
        return "delivering in the background"
    if routed.age_ms >= AWAY_STALE_MS:
        note = (
            f"that session is away and last seen {ago(routed.age_ms)} ago, so it may be gone "
            "rather than asleep — run discover"
        )
    else:
        note = (
            f"that session is away (asleep? last seen {ago(routed.age_ms)} ago); it'll deliver "
            "when it wakes"
        )
    if routed.live_sibling:
        note += f" (a live sibling exists — pass session={routed.live_sibling} to reach it now)"
    return note


def session_list(sessions: Iterable[Seen]) -> str:
    """interlink's pick-list: one line per session, away ones marked."""
    lines = []
    for seen in sessions:
        parts = [seen.session_id]
        info = seen.info
        parts += [info.cwd] if info.cwd else []
        parts += [f"git:{info.git_root}"] if info.git_root else []
        parts += [f'"{info.summary}"'] if info.summary else []
        state = "" if seen.live else f" (away, last seen {ago(seen.age_ms)})"
        lines.append("  " + " · ".join(parts) + state)
    return "\n".join(lines)


def sticky_routes(hints: Mapping[str, str]) -> dict[str, str]:
    """key -> session of the `key#session` routes peers asked their replies to go to."""
    out: dict[str, str] = {}
    for key, hint in hints.items():
        found_key, session = split_route(hint)
        if found_key == key and session:
            out[key] = session
    return out
