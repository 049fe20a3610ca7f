"""An interlink-style agent for tests: one session of `interlink-mcp`, as its source behaves.

Written from wilfreddenton/interlink at 550331e (`src/bin/interlink-mcp.rs`: `announce_now`,
`verified_roster`, `route_session`, `send_message`, `cancel_task`, `inbound_loop`;
`src/agent.rs`: `decide`; docs/PRESENCE.md and docs/SESSIONS.md), with the standard library and
`tests/interlink_ref.py` only: it imports nothing of taskfs, so what it sees of taskfs is what an
interlink agent would see.

- It announces its session on the roster (`announce`) and polls only `key#session`.
- It addresses a peer by petname (its `peers.json`), and sends to the session `route_session`
  picks: the sticky one (the peer's last `reply_to`) while on the roster, else the lone live
  one; several live ones, or none, is an error, as interlink refuses them.
- Every message it sends carries `reply_to: key#session`; every message it takes goes through
  `decide` (signature, addressee, allowlist, freshness, replay) and is acked.
- Pairing (`request_pair`, the `PairAccept` branch of `inbound_loop`): it knocks on a live
  session of a key with a `pair_request` carrying its name, remembers the petname its operator
  typed, and adds the key under that petname when a `pair_accept` comes from it; an accept it
  did not ask for is ignored, and a pairing kind from an admitted peer is `Unexpected`.
"""

from __future__ import annotations

import json
import os
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from tests import interlink_ref as ref

LIVE_MS = 90_000
MAX_FUTURE_MS = 60_000
MAX_PAST_MS = 86_400_000


class Refused(Exception):
    """What interlink's tools answer with `invalid_params`."""


def _call(url: str, path: str, body: Any = None, timeout: float = 30) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url + path,
        data=data,
        method="GET" if body is None else "POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        raw = answer.read()
    return json.loads(raw) if raw else None


@dataclass
class Peer:
    """One interlink session: a key, a petname list, and the buses it uses."""

    name: str
    urls: list[str]
    seed: bytes = field(default_factory=lambda: os.urandom(32))
    session_id: str = field(default_factory=lambda: os.urandom(4).hex())
    peers: dict[str, str] = field(default_factory=dict)  # petname -> key
    sticky: dict[str, str] = field(default_factory=dict)  # key -> session it wrote from
    seen: set[str] = field(default_factory=set)
    inbox: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    pending_out: dict[str, str] = field(default_factory=dict)  # key knocked -> petname
    paired: list[str] = field(default_factory=list)  # the petnames pairing added

    @property
    def key(self) -> str:
        return ref.public_id(self.seed)

    @property
    def route(self) -> str:
        return f"{self.key}#{self.session_id}"

    # -- presence ----------------------------------------------------------------------------

    def announce(self, summary: str = "") -> None:
        session = {"session_id": self.session_id, "cwd": "/home/peer", "git_root": "peer"}
        made = ref.announce(self.seed, self.name, {**session, "summary": summary}, now_ms())
        for url in self.urls:
            _call(url, "/announce", made)

    def roster(self) -> list[dict[str, Any]]:
        """`verified_roster`: every bus's entries that verify, once per key#session."""
        out: list[dict[str, Any]] = []
        seen: set[str] = set()
        for url in self.urls:
            for entry in _call(url, "/roster")["roster"]:
                route = f"{entry.get('pubkey')}#{entry.get('session', {}).get('session_id', '')}"
                if ref.verify_announcement(entry) and route not in seen:
                    seen.add(route)
                    out.append(entry)
        return out

    def discover(self, name: str) -> str:
        """The key a roster name stands for (the `discover` an operator reads before
        `add_peer`)."""
        keys = {e["pubkey"] for e in self.roster() if e["name"] == name}
        assert len(keys) == 1, keys
        return keys.pop()

    def route_session(self, key: str) -> str:
        sessions = [
            (e["session"]["session_id"], e.get("age_ms", 0))
            for e in self.roster()
            if e["pubkey"] == key and e["session"]["session_id"]
        ]
        sticky = self.sticky.get(key)
        if sticky is not None and sticky in [s for s, _ in sessions]:
            return sticky
        live = [s for s, age in sessions if age < LIVE_MS]
        if len(live) == 1:
            return live[0]
        if live:
            raise Refused(f"{key[:8]} has several live sessions — pass session=<id>")
        if len(sessions) == 1:
            return sessions[0][0]
        if not sessions and sticky is not None:
            return sticky
        raise Refused(f"no live session for {key[:8]} on the roster — they may be offline")

    # -- out ---------------------------------------------------------------------------------

    def send_message(self, to: str, text: str, **task: str | None) -> dict[str, Any]:
        key = self.peers[to]
        session = self.route_session(key)
        body = {"to": key, "text": text, "ts": now_ms(), "msg_id": os.urandom(16).hex(), **task}
        message = ref.sign(self.seed, {k: v for k, v in body.items() if v is not None})
        message["reply_to"] = self.route
        for url in self.urls:
            _call(url, "/send", {"to": f"{key}#{session}", "payload": message})
        return message

    def cancel_task(self, to: str, task_id: str, reason: str | None = None) -> dict[str, Any]:
        return self.send_message(to, reason or "canceled", task_id=task_id, status="canceled")

    def request_pair(self, key: str, petname: str) -> dict[str, Any]:
        """A knock on one of `key`'s sessions (a live one first), carrying this node's name; the
        operator's petname for it is kept for the accept."""
        sessions = [
            (e["session"]["session_id"], e.get("age_ms", 0))
            for e in self.roster()
            if e["pubkey"] == key and e["session"]["session_id"]
        ]
        live = [s for s, age in sessions if age < LIVE_MS]
        if not sessions:
            raise Refused(f"'{petname}' has no session to knock — they may be offline")
        session = (live or [s for s, _ in sessions])[0]
        self.pending_out[key] = petname
        body = {
            "to": key,
            "text": self.name,
            "ts": now_ms(),
            "msg_id": os.urandom(16).hex(),
            "kind": "pair_request",
        }
        message = ref.sign(self.seed, body)
        message["reply_to"] = self.route
        for url in self.urls:
            _call(url, "/send", {"to": f"{key}#{session}", "payload": message})
        return message

    # -- in ----------------------------------------------------------------------------------

    def receive(self, wait_ms: int = 200) -> list[dict[str, Any]]:
        """Drain this session's route on every bus through `decide`; what was admitted."""
        got: list[dict[str, Any]] = []
        for url in self.urls:
            while True:
                query = urllib.parse.urlencode({"me": self.route, "timeout_ms": wait_ms})
                answer = _call(url, f"/recv?{query}")
                if answer.get("status") != "message":
                    break
                message = answer["envelope"]["payload"]
                why = self._decide(message)
                if why is None:
                    got.append(message)
                    hint = message.get("reply_to") or ""
                    if hint.partition("#")[0] == message["from"] and "#" in hint:
                        self.sticky[message["from"]] = hint.partition("#")[2]
                else:
                    self.dropped.append((why, message))
                _call(url, "/ack", {"me": self.route, "ack": answer["ack"]})
        self.inbox += got
        return got

    def _decide(self, message: dict[str, Any]) -> str | None:
        if not ref.verify(message):
            return "BadSignature"
        if message.get("to") != self.key:
            return "WrongRecipient"
        kind = message.get("kind", "message")
        peer = message.get("from") in self.peers.values()
        if not peer and kind == "message":
            return "NotAllowlisted"
        ts, now = message["ts"], now_ms()
        if ts > now + MAX_FUTURE_MS or now > ts + MAX_PAST_MS:
            return "Stale"
        if message["msg_id"] in self.seen:
            return "Replay"
        self.seen.add(message["msg_id"])
        if kind == "message":
            return None
        if peer:
            return "Unexpected"
        if kind == "pair_accept":
            petname = self.pending_out.pop(message["from"], None)
            if petname is None:
                return "UnsolicitedAccept"
            self.peers[petname] = message["from"]
            self.paired.append(petname)
        return None


def now_ms() -> int:
    return time.time_ns() // 1_000_000
