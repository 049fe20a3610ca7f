"""Which of a peer's sessions a message goes to, and how far a message got, as interlink has it.

A **peer** is an agent whose key this ledger admitted and whose private key is not on this
machine: it lives elsewhere, and messages reach it over interlink's bus (the bridge carries
them). An agent whose private key is here reads this very ledger: a commit delivers to it.

- `route`: interlink's `send_message` and `cancel_task` choose the peer's session before they
  queue anything (`core.presence.choose_session`, on the roster of every bus in
  `INTERLINK_URL`, and the session the peer last wrote from, which the bridge remembers), and
  refuse when there is none to choose (`session_unroutable`). When no bus answers, nothing is
  refused: the message is committed and the bridge routes it when it runs.
- `delivery`: a message an agent signed for a peer is `pending` until a bus accepted it from
  this checkout's bridge, `sent` after, `read` once its addressee marked it; a message to an
  agent of this ledger is `sent` once committed (`pending` before), as taskfs has always said.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple, TypeVar

from taskfs.api.messages import bus_state
from taskfs.api.messages.bus import Buses, bus_urls
from taskfs.api.messages.threads import CheckedMessage
from taskfs.core import presence, wire
from taskfs.core.presence import Routed, Unroutable
from taskfs.errors import fail
from taskfs.store import keys
from taskfs.store.repository import Repository


def is_peer(repo: Repository, name: str) -> bool:
    """Whether `name` is reached over the bus: an admitted key, its private part elsewhere."""
    return (
        keys.public_key(repo.root, "agent", name) is not None
        and not keys.private_path("agent", name).is_file()
    )


class Route(NamedTuple):
    """Where a message to a peer will go, as its answer says: a session and its presence, or
    none known yet (no bus answered)."""

    session: str | None
    routed: Routed | None


def route(
    repo: Repository,
    agent: str,
    to: str,
    session: str | None,
    urls: Sequence[str] = (),
) -> Route | None:
    """The session of peer `to` a message from `agent` goes to; None when `to` is no peer.
    `session_unroutable` when the roster leaves none to choose."""
    if not is_peer(repo, to) or not keys.private_path("agent", agent).is_file():
        return None  # no peer, or nothing signed here to reach one with
    key = keys.public_key(repo.root, "agent", to)
    assert key is not None
    peer = wire.b64(key)
    roster = Buses(bus_urls(urls)).roster()
    if roster is None:
        return Route(session, None)
    state = bus_state.State.load(bus_state.state_path(repo, agent))
    sticky_key, sticky = presence.split_route(state.routes.get(peer, ""))
    chosen = presence.choose_session(
        presence.sessions_of(roster, peer),
        sticky=sticky if sticky_key == peer else None,
        hint=session,
    )
    if isinstance(chosen, Unroutable):
        listed = presence.session_list(chosen.sessions)
        raise fail(
            "session_unroutable",
            peer=to,
            reason=chosen.reason,
            sessions_text=f":\n{listed}" if listed else "",
            interlink=presence.refusal_line(chosen.kind, to, listed, chosen.hint),
        )
    return Route(chosen.session_id, chosen)


Entry = TypeVar("Entry")


def on_the_bus(repo: Repository, agent: str, entries: Sequence[Entry]) -> list[Entry]:
    """`entries` with the delivery interlink means for `agent`'s messages to peers: pending
    until a bus accepted them, whatever git holds."""
    accepted: set[str] | None = None
    peers: dict[str, bool] = {}
    out: list[Entry] = []
    for entry in entries:
        if isinstance(entry, CheckedMessage) and _to_a_peer(repo, agent, entry, peers):
            if accepted is None:
                accepted = bus_state.accepted_by_a_bus(repo, agent)
            if entry.delivery == "sent" and entry.record.msg_id not in accepted:
                out.append(replace(entry, delivery="pending"))
                continue
        out.append(entry)
    return out


def _to_a_peer(repo: Repository, agent: str, entry: CheckedMessage, peers: dict[str, bool]) -> bool:
    record = entry.record
    if record.sender != agent or record.sig is None or record.recipient is None:
        return False
    if record.recipient not in peers:
        peers[record.recipient] = is_peer(repo, record.recipient)
    return peers[record.recipient]


def held(repo: Repository, agent: str) -> dict[str, str]:
    """msg_id -> why the bridge has not posted it (no session to reach, say)."""
    return bus_state.waiting(repo, agent)
