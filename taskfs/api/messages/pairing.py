"""Pairing knocks from interlink agents, answered as interlink's operator answers them.

An interlink agent that wants to talk to a node it found on the roster knocks (`request_pair`):
a signed `pair_request` carrying its self-claimed name, to one of the node's sessions. The
node's operator decides (`accept_pair`), and the accept (a signed `pair_accept` carrying the
accepter's name) is what makes the knocker add it as a peer; it honours an accept only from a
key it knocked (`interlink-mcp.rs`, `inbound_loop`). Trust is the operator's act, never a
message's.

taskfs's operator admits a key with `taskfs keys add` (committed). So the bridge answers a knock
with a `pair_accept` exactly when the knocker's key is admitted here: at once when it already
was, or on the first round after an operator admits it. Until then the knock waits (64 at most,
the oldest dropping first, as interlink bounds its table), logged with what the operator would
run. A knock is checked as interlink's gate checks one (its signature, addressed to this agent's
key, fresh, not seen before), and nothing of it is written to the ledger: a stranger's words
never enter git, and neither knocks nor accepts are messages of a conversation (interlink does
not log them either). An accept that comes to taskfs, which never knocks, is ignored.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from taskfs.api.messages.bus import Buses
from taskfs.api.messages.bus_state import State
from taskfs.api.messages.openings import wire_ms
from taskfs.core import presence, wire
from taskfs.errors import TaskfsError
from taskfs.store import keys
from taskfs.store.repository import Repository

PAIR_CAP = 64
SEEN_CAP = 4096
MAX_FUTURE_MS = 60_000
MAX_PAST_MS = 86_400_000
KINDS = ("pair_request", "pair_accept")


def is_pairing(payload: Any) -> bool:
    return isinstance(payload, dict) and payload.get("kind") in KINDS


def admit_hint(key: str, name: str) -> str:
    return (
        f"pairing request from fingerprint {key[:8]} claiming the name {name!r}: not admitted "
        f"here; an operator admits it with `taskfs keys add --agent NAME --public {key}`, and "
        "the bridge then answers it"
    )


class Pairing:
    """One bridge's pairing: the knocks it holds and answers (in the bridge's state file)."""

    def __init__(
        self,
        repo: Repository,
        agent: str,
        *,
        me: str,
        seed: bytes | None,
        route: str,
        state: State,
        log: Callable[[str], None],
    ) -> None:
        self.repo, self.agent, self.me, self.seed = repo, agent, me, seed
        self.route, self.state, self.log = route, state, log

    def take(self, payload: Any, now: datetime | None = None) -> dict[str, Any]:
        """A pairing message from the bus, checked as interlink's gate checks it; what became
        of it (a report row for the bridge's answer)."""
        try:
            message = wire.parse_line(json.dumps(payload, ensure_ascii=False))
        except wire.WireError as exc:
            return {"kind": "pairing", "refused": f"not a pairing message: {exc}"}
        row: dict[str, Any] = {"kind": message.kind, "key": message.sender, "name": message.text}
        now_ms = wire_ms(now or datetime.now(timezone.utc))
        why = None
        if not message.verified():
            why = "its signature does not verify"
        elif message.recipient != self.me:
            why = "it is addressed to another key"
        elif message.sender == self.me:
            why = "it is from this agent's own key"
        elif message.ts > now_ms + MAX_FUTURE_MS or now_ms > message.ts + MAX_PAST_MS:
            why = "it is stale"
        elif message.msg_id in self.state.pairing_seen:
            why = "it was seen before"
        if why is not None:
            self.log(f"{message.kind} {message.msg_id} dropped: {why}")
            return {**row, "refused": why}
        self.state.pairing_seen = [*self.state.pairing_seen, message.msg_id][-SEEN_CAP:]
        if message.kind == "pair_accept":
            self.log(f"pair_accept from {message.sender[:8]} ignored: taskfs does not knock")
            self.state.save()
            return {**row, "refused": "taskfs does not knock"}
        knocks = {k: v for k, v in self.state.knocks.items() if k != message.sender}
        knocks[message.sender] = {
            "name": message.text,
            "reply_to": message.reply_to or "",
            "msg_id": message.msg_id,
        }
        self.state.knocks = dict(list(knocks.items())[-PAIR_CAP:])
        self.state.save()
        admitted = self._admitted(message.sender) is not None
        if not admitted:
            self.log(admit_hint(message.sender, message.text))
        return {**row, "admitted": admitted}

    def answer(self, buses: Buses) -> list[str]:
        """Accept every held knock whose key is admitted here now; the keys answered. A knock
        whose knocker cannot be reached now stays, and is tried again next round."""
        if self.seed is None or not self.state.knocks:
            return []
        done: list[str] = []
        roster: list[presence.Announcement] | None = None
        for key, knock in list(self.state.knocks.items()):
            if self._admitted(key) is None:
                continue
            hint = str(knock.get("reply_to") or "")
            if presence.split_route(hint)[0] != key and roster is None:
                roster = buses.roster()
            where = self._where(key, hint, roster)
            if where is None:
                continue
            accept = wire.Message(
                self.me, key, self.agent, wire_ms(datetime.now(timezone.utc)),
                wire.new_msg_id(), kind="pair_accept",
            )  # fmt: skip
            payload = json.loads(wire.sign(self.seed, accept).to_json())
            payload["reply_to"] = self.route
            try:
                buses.send(where, payload)
            except TaskfsError:
                continue
            del self.state.knocks[key]
            self.state.save()
            done.append(key)
            self.log(f"accepted the pairing request of {key[:8]} ({knock.get('name')!r})")
        return done

    def _admitted(self, key: str) -> str | None:
        """The name `key` is admitted under here, if it is."""
        names = {wire.b64(k): n for n, k in keys.public_keys(self.repo.root, "agent").items()}
        return names.get(key)

    def _where(
        self, key: str, reply_to: str, roster: list[presence.Announcement] | None
    ) -> str | None:
        """The knocker's session: the one it knocked from, else a live one, else any."""
        hinted, session = presence.split_route(reply_to)
        if hinted == key and session:
            return presence.route(key, session)
        seen = presence.sessions_of(roster or [], key)
        chosen = next((s for s in seen if s.live), seen[0] if seen else None)
        return presence.route(key, chosen.session_id) if chosen else None
