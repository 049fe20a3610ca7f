"""`taskfs interlink bridge`: an agent as a full peer on interlink's bus (one bus, or several).

interlink's agents are sessions: each announces itself on the bus roster and polls only its own
route, `key#session` ("the bare-key inbox is not polled by anyone", `src/bin/interlink-mcp.rs`).
The bridge is one taskfs agent's session there (`taskfs` unless `--session` names another):

- Presence: it announces the agent on every bus's roster, signed over interlink's
  `announce_canonical` (name: the agent; session: its id, the checkout, the repository, and a
  summary of what it serves), again every 30 s while it runs; a peer sees it live for 90 s after
  each, then away. Ending a running bridge (SIGINT, SIGTERM) unregisters it (gone at once) and
  says goodbye to the peers that wrote to it meanwhile, as interlink's close does; `--once` does
  neither, so that a bridge run from cron stays on the roster, away, and what peers send waits
  on its route for the next run.
- Out: every message the agent signed and committed (`wire.outgoing`) is posted once, to the
  recipient's session interlink would choose (`core.presence.choose_session`): the one the
  message names (`send_message`'s `session`), else the one the peer last wrote from (its
  `reply_to`) while it is on the roster, else its lone live session, else its lone away one. A
  message that has no session to go to (the peer offline and never heard from, or several live
  sessions to choose from) is held, pending, with the reason, and tried again every round. A
  post carries `reply_to: <key>#<session>`, so replies stick to this session. What a bus
  accepted is remembered under `.git/taskfs/` (`bus_state`), never in the ledger, so a restart
  posts nothing twice; it is also what makes a message `sent` rather than `pending`.
- In: it receives on its session route (and, for peers that post to the bare key as older
  taskfs bridges did, on the key) from every bus. Each message goes through interlink's inbound
  gate and into the ledger (`wire.import_lines`: one commit), and only then is it acked. A crash
  between the commit and the ack re-delivers it; the replay check, durable in git, refuses the
  copy, which is then acked: the message lands once, however many buses carried it. A message
  the gate refuses is acked too (a bus keeps a message until acked: not acking would block the
  queue), logged, and never written; one past the gate that taskfs's rules refuse is answered
  (`refusals`). A round ends by posting what its arrivals made (an answer, a notice).
- Outages: a running bridge outlives its buses (`bus_health`: growing, jittered retries, logged
  as they happen, the first try an announcement); `--once` names a bus that does not answer.
- Pairing: a knock is answered with interlink's `pair_accept` once its key is admitted here
  (`pairing`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from taskfs.api.messages import wire as wire_api
from taskfs.api.messages.bus import BusClient, Buses, bus_urls
from taskfs.api.messages.bus_health import Health
from taskfs.api.messages.bus_state import State, state_path
from taskfs.api.messages.openings import wire_ms
from taskfs.api.messages.pairing import Pairing, is_pairing
from taskfs.api.messages.wire import LineReport
from taskfs.core import messages as message_rules
from taskfs.core import presence, wire
from taskfs.core.lifecycle import OPEN
from taskfs.core.presence import Routed, SessionInfo, Unroutable
from taskfs.errors import TaskfsError, fail
from taskfs.store import keys
from taskfs.store.repository import Repository

__all__ = ["SESSION", "Arrival", "Bridge", "Round", "bus_urls"]

# interlink's clients long-poll 25 s (DEFAULT_RECV_TIMEOUT_MS); the bridge asks for less so it
# also posts what its agent wrote in the meantime without waiting long.
POLL_MS = 5_000
ONCE_POLL_MS = 250
# The bridge's session: what an interlink agent's `discover` lists, and its route `key#taskfs`.
SESSION = "taskfs"
GOODBYE = (
    "[interlink] I'm ending this session ({session}) — goodbye. If you were waiting on me, "
    "stop; re-check discover before resuming."
)


@dataclass(frozen=True)
class Arrival:
    """One message taken from the bus: what the gate made of it, and whether it was acked."""

    report: LineReport
    acked: bool

    @property
    def already(self) -> bool:
        """A re-delivery of a message already in the ledger (harmless, acked)."""
        return self.report.code == "message_replayed"


@dataclass(frozen=True)
class Knocked:
    """A pairing message taken from the bus (`pairing`): what became of it."""

    row: dict[str, Any]


@dataclass
class Round:
    posted: list[str] = field(default_factory=list)
    arrivals: list[Arrival] = field(default_factory=list)
    held: dict[str, str] = field(default_factory=dict)
    pairing: list[dict[str, Any]] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)  # keys whose knock was answered

    @property
    def refused(self) -> list[Arrival]:
        return [a for a in self.arrivals if not a.report.accepted and not a.already]


Log = Callable[[str], None]


class Bridge:
    """One agent's session on the buses."""

    def __init__(
        self,
        repo: Repository,
        agent: str,
        urls: Sequence[str] | str,
        log: Log,
        session: str = SESSION,
        *,
        patient: bool = False,
    ) -> None:
        own = keys.public_keys(repo.root, "agent").get(agent)
        if own is None:
            raise fail("recipient_unknown", agent=agent)
        self.repo, self.agent, self.log = repo, agent, log
        self.me = wire.b64(own)
        # Announcing needs the agent's own key; without it here the bridge still carries
        # messages, but no interlink agent finds it on the roster.
        pair = keys.load_private("agent", agent)
        self.seed = pair.private if pair is not None and pair.public == own else None
        self.session = SessionInfo(session, str(repo.root), repo.root.name)
        self.route = presence.route(self.me, session)
        # Its own session first; the bare key is polled for older taskfs bridges' posts.
        self.routes = (self.route, self.me)
        # A running bridge outlives its buses (`bus_health`); `--once` names a failing one.
        self.health = Health(log, patient=patient)
        self.buses = Buses([urls] if isinstance(urls, str) else list(urls), self.health)
        self.state = State.load(state_path(repo, agent))
        self.pairing = Pairing(
            repo, agent, me=self.me, seed=self.seed, route=self.route, state=self.state, log=log
        )
        # Peers that wrote to this session while it ran, by key: their session (the goodbye's).
        self.talked: dict[str, str] = {}
        self.announced_at: float | None = None
        # Set while a received message is between its commit and its ack: a signal then waits.
        self.busy = False
        # Set by a signal: the round ends after the message in hand.
        self.stopping = False

    @property
    def bus(self) -> BusClient:
        return self.buses.clients[0]

    # -- presence --------------------------------------------------------------------------

    def summary(self) -> str:
        """What the session serves, for a peer's `discover`: the repository and its open tasks."""
        from taskfs.store.index import summaries

        tasks = [s for s in summaries(self.repo).values() if s.state in OPEN]
        mine = [
            s for s in tasks if self.agent in (s.envelope.sender, s.envelope.recipient, s.holder)
        ]
        return (
            f"taskfs ledger {self.repo.root.name}: {len(tasks)} open task(s), "
            f"{len(mine)} with {self.agent}"
        )

    def heartbeat(self, *, now: datetime | None = None) -> bool:
        """Announce the session when it has not in the last 30 s, or on a bus whose next try
        has come after a failure (a restarted bus's roster is empty: the announcement is the
        try); whether a bus took it."""
        if self.seed is None:
            return False
        due = self.announced_at is None or time.monotonic() - self.announced_at >= (
            presence.HEARTBEAT_S
        )
        retry = any(self.health.usable(url) for url in self.health.down)
        if not (due or retry):
            return False
        moment = now or datetime.now(timezone.utc)
        info = self.session._replace(summary=self.summary())
        announcement = presence.announce(self.seed, self.agent, info, wire_ms(moment))
        took = self.buses.announce(announcement)
        first = self.announced_at is None
        again = sorted(self.health.back & set(took))
        self.health.back -= set(took)
        if took:
            self.announced_at = time.monotonic()
        if first and (took or not self.health.patient):
            where = ", ".join(took) or "no bus answered"
            self.log(f"announced {self.route} on the roster ({where})")
        elif again:
            self.log(f"announced {self.route} again on the roster ({', '.join(again)})")
        return bool(took)

    def close(self) -> None:
        """A graceful end, as interlink's: unregister first (gone at once), then goodbye to the
        peers that wrote meanwhile. Best-effort: a bus that does not answer is skipped."""
        if self.seed is None:
            return
        self.buses.unregister(self.me, self.session)
        self.log(f"unregistered {self.route}")
        for key, their_session in list(self.talked.items()):
            try:
                self._goodbye(key, their_session)
            except TaskfsError as exc:
                self.log(f"no goodbye to {key[:8]}: {exc.problems[0].message}")

    def _goodbye(self, key: str, their_session: str) -> None:
        names = {wire.b64(k): n for n, k in keys.public_keys(self.repo.root, "agent").items()}
        name = names.get(key)
        if name is None:
            return  # revoked meanwhile
        said = wire_api.send_conversation(
            self.repo, self.agent, name, GOODBYE.format(session=self.session.session_id)
        )
        payload = json.loads(message_rules.wire_message(said.record).to_json())
        payload["reply_to"] = self.route
        self._accepted(
            said.record.msg_id, self.buses.send(presence.route(key, their_session), payload)
        )
        self.log(f"said goodbye to {name} ({their_session})")

    # -- out -------------------------------------------------------------------------------

    def post_pending(self) -> tuple[list[str], dict[str, str]]:
        """Post every signed message of the agent no bus accepted yet, each to the session it
        goes to; the ones posted, and the ones held back with why."""
        done = self.state.accepted(self.buses.urls)
        roster: list[presence.Announcement] | None = None
        out: list[str] = []
        held: dict[str, str] = {}
        for item in wire_api.outgoing(self.repo, self.agent):
            if item.msg_id in done or (item.alias is not None and item.alias in done):
                continue
            if roster is None and self.buses.usable():
                roster = self.buses.roster()
            if roster is None:  # no bus answers: it waits, and says why
                self._hold(item, held, self._no_bus())
                continue
            chosen = self.target(item.recipient, item.session, roster)
            if isinstance(chosen, Unroutable):
                self._hold(item, held, chosen.reason)
                continue
            where = presence.route(item.recipient, chosen.session_id)
            payload = json.loads(item.line)
            payload.setdefault("reply_to", self.route)  # unsigned routing hint, as interlink's
            try:
                accepted = self.buses.send(where, payload)
            except TaskfsError:
                if not self.health.patient:
                    raise
                self._hold(item, held, self._no_bus())
                continue
            self._accepted(item.msg_id, accepted)
            out.append(item.msg_id)
            self.log(f"posted {item.msg_id} to {where} ({chosen.presence})")
        return out, held

    def _hold(self, item: wire_api.Outgoing, held: dict[str, str], reason: str) -> None:
        held[item.msg_id] = reason
        if self.state.held.get(item.msg_id) != reason:
            self.state.held[item.msg_id] = reason
            self.state.save()
            self.log(f"holding {item.msg_id} for {item.recipient[:8]}: {reason}")

    def _no_bus(self) -> str:
        """Why a message waits while no bus answers, and since when."""
        since = min((out.began for out in self.health.down.values()), default=None)
        when = f" since {since}" if since else ""
        return f"no bus answers{when}: the bridge keeps trying and posts it then"

    def target(
        self, key: str, hint: str | None, roster: Sequence[presence.Announcement]
    ) -> Routed | Unroutable:
        """The session of `key` a message goes to (`core.presence.choose_session`)."""
        sticky_key, sticky = presence.split_route(self.state.routes.get(key, ""))
        exclude = self.session.session_id if key == self.me else None
        return presence.choose_session(
            presence.sessions_of(roster, key),
            sticky=sticky if sticky_key == key else None,
            hint=hint,
            exclude=exclude,
        )

    def _accepted(self, msg_id: str, urls: Sequence[str]) -> None:
        for url in urls:
            self.state.posted.setdefault(url, []).append(msg_id)
        self.state.held.pop(msg_id, None)
        self.state.save()

    # -- in --------------------------------------------------------------------------------

    def receive(
        self,
        timeout_ms: int,
        route: str | None = None,
        now: Callable[[], datetime] | None = None,
        bus: BusClient | None = None,
    ) -> Arrival | Knocked | None:
        """Take the oldest message waiting on `route` (the session's by default) at `bus` (the
        first by default), record it (or refuse it), then ack."""
        route = route or self.route
        bus = bus or self.bus
        got = bus.recv(route, timeout_ms)
        self.buses.answered(bus)
        if got is None:
            return None
        payload, key = got
        if is_pairing(payload):
            row = self.pairing.take(payload)
            bus.ack(route, key)
            return Knocked(row)
        self.busy = True
        try:
            line = json.dumps(payload, ensure_ascii=False)
            moment = now() if now else datetime.now(timezone.utc)
            imported = wire_api.import_lines(self.repo, self.agent, [line], moment)
            report = imported.lines[0] if imported.lines else _empty()
            if report.accepted:
                self._learn_route(payload)
            bus.ack(route, key)
        finally:
            self.busy = False
        arrival = Arrival(report, acked=True)
        self.log(_describe(arrival))
        return arrival

    def _learn_route(self, payload: Any) -> None:
        """A peer's `reply_to` (`key#session`, unsigned) names where its replies should go;
        it is trusted only for the key that signed the message."""
        sender, hint = payload.get("from"), payload.get("reply_to")
        if not (isinstance(sender, str) and isinstance(hint, str)):
            return
        key, session = presence.split_route(hint)
        if key != sender or session is None:
            return
        self.talked[sender] = session
        if self.state.routes.get(sender) != hint:
            self.state.routes[sender] = hint
            self.state.save()

    def round(self, timeout_ms: int, into: Round | None = None) -> Round:
        """Announce when due, post what is pending, then receive from every bus until each
        queue is empty (a recv times out), then post what the arrivals made (an answer, a
        notice); what was done is added to `into` as it happens (kept when a signal ends the
        round). A bus that fails is skipped; every bus failing is `bus_unreachable`, except
        for a patient (running) bridge, which rests until the next try of a bus
        (`bus_health`) and goes on."""
        done = into if into is not None else Round()
        self.heartbeat()
        self._post(done)
        places = [(bus, route) for bus in self.buses.usable() for route in self.routes]
        if not places:
            self.health.rest()
            return done
        before = len(done.arrivals)
        if self._receive_all(places, max(1, timeout_ms // len(places)), done):
            return done
        if len(done.arrivals) > before:
            self._post(done)
        return done

    def _post(self, done: Round) -> None:
        posted, held = self.post_pending()
        if self.buses.usable():
            done.accepted += self.pairing.answer(self.buses)  # knocks admitted since
        done.posted += posted
        done.held.update(held)
        for msg_id in posted:
            done.held.pop(msg_id, None)

    def _receive_all(self, places: list[tuple[BusClient, str]], wait: int, done: Round) -> bool:
        """Receive on every place until a pass brings nothing; whether a signal stopped it."""
        while True:
            before = len(done.arrivals)
            failed: list[TaskfsError] = []
            for bus, route in places:
                if not self.health.is_up(bus.url) and self.health.patient:
                    continue  # it failed on another route this round: its next try is set
                try:
                    if self._drain(bus, route, wait, done):
                        return True
                except TaskfsError as exc:
                    failed.append(exc)
                    self.buses.answered(bus, exc)
            if failed and not any(self.health.is_up(bus.url) for bus, _ in places):
                if not self.health.patient:
                    raise failed[0]
                return False
            if len(done.arrivals) == before:
                return False

    def _drain(self, bus: BusClient, route: str, wait: int, done: Round) -> bool:
        """Take what waits on `route` at `bus` into `done` until its queue is empty; whether a
        signal asked the bridge to stop meanwhile."""
        while (arrival := self.receive(wait, route, bus=bus)) is not None:
            if isinstance(arrival, Knocked):
                done.pairing.append(arrival.row)
                done.accepted += self.pairing.answer(self.buses)
            else:
                done.arrivals.append(arrival)
            if self.stopping:
                return True
        return False


def _empty() -> LineReport:
    from taskfs.errors import problem

    return LineReport(1, None, (problem("message_invalid", where="payload", reason="empty"),))


def _describe(arrival: Arrival) -> str:
    report = arrival.report
    if report.accepted:
        where = f" on {report.task_id}" if report.task_id else " (conversation)"
        moved = report.transition
        change = f": {moved[0]} -> {moved[1]}" if moved else ""
        return f"received {report.msg_id}{where}{change}, committed, acked"
    if arrival.already:
        return f"received {report.msg_id} again: already recorded, acked"
    message = report.problems[0].message if report.problems else ""
    return (
        f"refused {report.msg_id or '(unreadable)'}: {report.code}: {message}; acked, not written"
    )
