"""interlink-bus over HTTP (`src/bus.rs`), for one bus or several (interlink's federation).

One bus: `POST /send {"to": ROUTE, "payload"}`, `GET /recv?me=ROUTE&timeout_ms=N`, `POST /ack
{"me", "ack"}`, `POST /announce ANNOUNCEMENT`, `POST /unregister {"pubkey", "session"}` and
`GET /roster`. Several buses are interlink's federation: "the agent polls and sends to all of
them and dedupes by msg_id": a message counts as accepted when one bus took it, and the roster
is every bus's, verified and de-duplicated by `key#session` (`core.presence.verified_roster`).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from taskfs.core import presence
from taskfs.errors import TaskfsError, fail

if TYPE_CHECKING:
    from taskfs.api.messages.bus_health import Health

DEFAULT_URL = "http://127.0.0.1:9440"
HTTP_SLACK_S = 30
# interlink's presence calls (announce, unregister, roster) give up after 3 to 10 seconds.
PRESENCE_S = 10


def bus_urls(given: Sequence[str] = ()) -> list[str]:
    """The buses: each `--url` (a comma-separated list counts as several), else
    `INTERLINK_URL` (comma-separated, as interlink reads it), else the default; in order, once
    each, without a trailing slash."""
    texts = list(given) or [os.environ.get("INTERLINK_URL", "")]
    urls = [u.strip().rstrip("/") for text in texts for u in text.split(",")]
    return list(dict.fromkeys(u for u in urls if u)) or [DEFAULT_URL]


class BusClient:
    """One bus, through the standard library's urllib."""

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

    def announce(self, announcement: presence.Announcement) -> None:
        self._call("POST", "/announce", announcement.to_json(), timeout=PRESENCE_S)

    def unregister(self, pubkey: str, session: presence.SessionInfo) -> None:
        body = presence.unregister_body(pubkey, session)
        self._call("POST", "/unregister", body, timeout=PRESENCE_S)

    def roster(self) -> list[object]:
        return presence.roster_entries(self._call("GET", "/roster", None, timeout=PRESENCE_S))

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


class Buses:
    """Every bus an agent uses, as one: interlink's federation. With `health` (a running
    bridge's), a bus resting after a failure is left out until its next try, and every answer
    and failure is told to it."""

    def __init__(self, urls: Sequence[str], health: Health | None = None) -> None:
        self.clients = [BusClient(url) for url in urls]
        self.health = health

    @property
    def urls(self) -> list[str]:
        return [c.url for c in self.clients]

    def usable(self) -> list[BusClient]:
        """The buses to call now."""
        return [c for c in self.clients if self.health is None or self.health.usable(c.url)]

    def answered(self, client: BusClient, exc: TaskfsError | None = None) -> None:
        if self.health is not None:
            if exc is None:
                self.health.reached(client.url)
            else:
                self.health.failed(client.url, exc)

    def send(self, route: str, payload: Any) -> list[str]:
        """Post to every bus; the buses that accepted it. Refused (the first bus's reason)
        only when none did (interlink's `post_send`)."""
        accepted: list[str] = []
        first: TaskfsError | None = None
        for client in self.usable():
            try:
                client.send(route, payload)
            except TaskfsError as exc:
                self.answered(client, exc)
                first = first or exc
                continue
            self.answered(client)
            accepted.append(client.url)
        if not accepted:
            raise first or fail(
                "bus_unreachable", url=", ".join(self.urls), reason="every bus is down"
            )
        return accepted

    def roster(self) -> list[presence.Announcement] | None:
        """Every bus's roster, verified, once per `key#session`; None when no bus answered."""
        answered: list[list[object]] = []
        for client in self.usable():
            try:
                answered.append(client.roster())
            except TaskfsError as exc:
                self.answered(client, exc)
                continue
            self.answered(client)
        return presence.verified_roster(answered) if answered else None

    def announce(self, announcement: presence.Announcement) -> list[str]:
        """Best-effort, to every bus: the buses that took it."""
        return self._each(lambda c: c.announce(announcement))

    def unregister(self, pubkey: str, session: presence.SessionInfo) -> list[str]:
        return self._each(lambda c: c.unregister(pubkey, session))

    def _each(self, call: Any) -> list[str]:
        done: list[str] = []
        for client in self.usable():
            try:
                call(client)
            except TaskfsError as exc:
                self.answered(client, exc)
                continue
            self.answered(client)
            done.append(client.url)
        return done
