"""`taskfs interlink bridge`: an agent's messages carried over interlink-bus.

interlink agents meet on a bus (`interlink-bus`, `src/bus.rs`): `POST /send {"to": ROUTE,
"payload": SignedMessage}`, `GET /recv?me=ROUTE&timeout_ms=N` (the oldest message not acked,
kept until acked), `POST /ack {"me": ROUTE, "ack": KEY}`. The bridge is one agent's carrier:

- Out: every message the agent signed with interlink's signature and committed
  (`wire.outgoing`) is posted once, to the recipient's interlink id (or the `key#session`
  route that recipient last asked replies to go to, from its unsigned `reply_to` hint). What
  was posted is remembered in a file under `.git/taskfs/` (never in the ledger: it is this
  checkout's delivery state, not history), so a restart does not post everything again. A
  crash between a post and that file's update posts the message twice; the recipient's replay
  check drops the copy.
- In: `recv` on the agent's own interlink id and on `key#taskfs` (interlink's agents
  address sessions, `key#session`; the bridge asks for replies there with `reply_to`). Each
  message goes through interlink's inbound gate and into the ledger (`wire.import_lines`: one
  commit), and only then is it acked. A crash between the commit and the ack re-delivers it;
  the replay check, durable in git, refuses the copy, which is then acked: the message lands
  once. A message the gate refuses is acked too (a bus keeps a message until acked: not
  acking would block the queue), logged, and never written.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from taskfs.api.messages import wire as wire_api
from taskfs.api.messages.wire import LineReport
from taskfs.core import wire
from taskfs.errors import fail
from taskfs.store import keys
from taskfs.store.repository import Repository

DEFAULT_URL = "http://127.0.0.1:9440"
# interlink's clients long-poll 25 s (DEFAULT_RECV_TIMEOUT_MS); the bridge asks for less so it
# also posts what its agent wrote in the meantime without waiting long.
POLL_MS = 5_000
ONCE_POLL_MS = 250
# The session name of the bridge's route (`key#taskfs`): what an interlink agent passes as
# `session` to reach it.
SESSION = "taskfs"
HTTP_SLACK_S = 30


def bus_url(given: str | None) -> str:
    """`--url`, else `INTERLINK_URL` (its first URL when several are listed), else the
    default, as interlink's tools choose."""
    url = given or os.environ.get("INTERLINK_URL", "").split(",")[0].strip() or DEFAULT_URL
    return url.rstrip("/")


class BusClient:
    """The three routes of interlink-bus, through the standard library's urllib."""

    def __init__(self, url: str) -> None:
        self.url = url

    def send(self, route: str, payload: Any) -> None:
        self._call("POST", "/send", {"to": route, "payload": payload}, timeout=HTTP_SLACK_S)

    def recv(self, me: str, timeout_ms: int) -> tuple[Any, str] | None:
        query = urllib.parse.urlencode({"me": me, "timeout_ms": timeout_ms})
        answer = self._call("GET", f"/recv?{query}", None, timeout=timeout_ms / 1000 + HTTP_SLACK_S)
        if not isinstance(answer, dict) or answer.get("status") != "message":
            return None
        envelope, key = answer.get("envelope"), answer.get("ack")
        if not isinstance(envelope, dict) or not isinstance(key, str):
            raise fail("bus_unreachable", url=self.url, reason="a recv answer without its message")
        return envelope.get("payload"), key

    def ack(self, me: str, key: str) -> None:
        self._call("POST", "/ack", {"me": me, "ack": key}, timeout=HTTP_SLACK_S)

    def _call(self, method: str, path: str, body: Any, *, timeout: float) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                raw = answer.read()
        except urllib.error.HTTPError as exc:
            reason = f"{method} {path.partition('?')[0]} answered HTTP {exc.code}"
            raise fail("bus_unreachable", url=self.url, reason=reason) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = str(getattr(exc, "reason", exc))
            raise fail("bus_unreachable", url=self.url, reason=reason) from None
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise fail(
                "bus_unreachable", url=self.url, reason="an answer that is not JSON"
            ) from None


@dataclass
class State:
    """What this checkout's bridge for one agent posted (per bus), and where peers asked
    their replies to go. Kept under `.git/taskfs/`, never committed."""

    path: Path
    posted: dict[str, list[str]] = field(default_factory=dict)
    routes: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> State:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls(path)  # missing or damaged: at worst messages are posted again
        posted = data.get("posted") if isinstance(data, dict) else None
        routes = data.get("routes") if isinstance(data, dict) else None
        return cls(
            path,
            {
                str(url): [str(m) for m in ids]
                for url, ids in (posted or {}).items()
                if isinstance(ids, list)
            },
            {str(k): str(v) for k, v in (routes or {}).items()},
        )

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temp = self.path.with_name(self.path.name + ".tmp")
        temp.write_text(json.dumps({"posted": self.posted, "routes": self.routes}, indent=1))
        os.replace(temp, self.path)


@dataclass(frozen=True)
class Arrival:
    """One message taken from the bus: what the gate made of it, and whether it was acked."""

    report: LineReport
    acked: bool

    @property
    def already(self) -> bool:
        """A re-delivery of a message already in the ledger (harmless, acked)."""
        return self.report.code == "message_replayed"


@dataclass
class Round:
    posted: list[str] = field(default_factory=list)
    arrivals: list[Arrival] = field(default_factory=list)

    @property
    def refused(self) -> list[Arrival]:
        return [a for a in self.arrivals if not a.report.accepted and not a.already]


Log = Callable[[str], None]


class Bridge:
    """One agent's carrier between this ledger and a bus."""

    def __init__(
        self, repo: Repository, agent: str, url: str, log: Log, session: str = SESSION
    ) -> None:
        own = keys.public_keys(repo.root, "agent").get(agent)
        if own is None:
            raise fail("recipient_unknown", agent=agent)
        self.repo, self.agent, self.log = repo, agent, log
        self.me = wire.b64(own)
        # interlink's agents send to `key#session` (a bare key is polled by none of theirs):
        # the bridge polls both, and asks for replies on its session route.
        self.route = f"{self.me}#{session}"
        self.routes = (self.me, self.route)
        self.bus = BusClient(url)
        self.state = State.load(repo.state_dir() / "interlink" / f"bridge-{agent}.json")
        # Set while a received message is between its commit and its ack: a signal then waits.
        self.busy = False
        # Set by a signal: the round ends after the message in hand.
        self.stopping = False

    def post_pending(self) -> list[str]:
        """Post every signed message of the agent not posted to this bus yet."""
        posted = self.state.posted.setdefault(self.bus.url, [])
        done = set(posted)
        out: list[str] = []
        for msg_id, recipient, line in wire_api.outgoing(self.repo, self.agent):
            if msg_id in done:
                continue
            route = self.state.routes.get(recipient, recipient)
            payload = json.loads(line)
            payload.setdefault("reply_to", self.route)  # unsigned routing hint, as interlink's
            self.bus.send(route, payload)
            posted.append(msg_id)
            done.add(msg_id)
            self.state.save()
            out.append(msg_id)
            self.log(f"posted {msg_id} to {route}")
        return out

    def receive(
        self,
        timeout_ms: int,
        route: str | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> Arrival | None:
        """Take the oldest message waiting on `route` (the agent's key by default), record it
        (or refuse it), then ack."""
        route = route or self.me
        got = self.bus.recv(route, timeout_ms)
        if got is None:
            return None
        payload, key = got
        self.busy = True
        try:
            line = json.dumps(payload, ensure_ascii=False)
            moment = now() if now else datetime.now(timezone.utc)
            imported = wire_api.import_lines(self.repo, self.agent, [line], moment)
            report = imported.lines[0] if imported.lines else _empty()
            if report.accepted:
                self._learn_route(payload)
            self.bus.ack(route, key)
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
        if hint.partition("#")[0] == sender and self.state.routes.get(sender) != hint:
            self.state.routes[sender] = hint
            self.state.save()

    def round(self, timeout_ms: int, into: Round | None = None) -> Round:
        """Post what is pending, then receive until the queue is empty (a recv times out);
        what was done is added to `into` as it happens (kept when a signal ends the round)."""
        done = into if into is not None else Round()
        done.posted += self.post_pending()
        wait = max(1, timeout_ms // len(self.routes))
        while True:
            before = len(done.arrivals)
            for route in self.routes:
                while (arrival := self.receive(wait, route)) is not None:
                    done.arrivals.append(arrival)
                    if self.stopping:
                        return done
            if len(done.arrivals) == before:
                return done


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
