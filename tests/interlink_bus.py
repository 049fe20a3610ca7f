"""A loopback interlink bus for tests, re-created from the routes of interlink's `src/bus.rs`
(wilfreddenton/interlink at 550331e) with the standard library only.

- `POST /send` `{"to": ROUTE, "payload": ...}` -> 202. ROUTE is an opaque queue name.
- `GET /recv?me=ROUTE&timeout_ms=N` (default 25,000) long-polls the oldest message not acked:
  `{"status": "message", "envelope": {"payload", "ts"}, "ack": KEY}`, or
  `{"status": "timeout"}`. The message stays queued until acked, so a second recv without an
  ack sees it again.
- `POST /ack` `{"me": ROUTE, "ack": KEY}` -> 200, or 403 unless KEY starts with `me` and NUL.
  Acking a key already gone is fine (idempotent), as in interlink's store.
- Queues are FIFO and bounded: beyond `cap`, the oldest is dropped.
- `POST /announce` ANNOUNCEMENT -> 202 (400 without a `pubkey`): stored verbatim under its
  roster key, `pubkey#session_id` (a bare `pubkey` without a session), replacing that key's
  entry; entries three days old are pruned first, and a full roster (4,096) drops a newcomer.
- `POST /unregister` `{"pubkey", "session"}` -> 202: that roster key's entry goes at once.
- `GET /roster` -> `{"roster": [ANNOUNCEMENT + "age_ms", ...]}`: every entry younger than
  three days, each stamped with the milliseconds since its last refresh (unsigned).

A bus can be killed and started again on the same port (`Bus.kill`, `Bus.restart`), as
`interlink-bus --db FILE` is: its open connections are cut, nothing answers until it restarts,
and then the queues are as they were (interlink keeps them in its store) while the roster, which
interlink keeps in memory only, starts empty.

Like interlink's, the bus verifies nothing: signatures are the recipients' business. For tests
it can also age the roster (`Queues.age_roster`, as if time had passed since the entries' last
refresh), lose acks (`lose_acks`: answer 200 to the next N acks and keep the messages, as when
the answer to an ack never arrives), or hold them (`hold_acks`: a test kills the client while
its ack waits), and it records what was sent, acked, announced and unregistered.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

DEFAULT_RECV_TIMEOUT_MS = 25_000
AWAY_RETAIN_MS = 3 * 24 * 60 * 60 * 1_000
ROSTER_CAP = 4096


def now_ms() -> int:
    return int(time.time() * 1000)


def roster_key(body: Any) -> str | None:
    """`pubkey#session_id`, or the bare `pubkey` without a session (src/bus.rs `roster_key`)."""
    pubkey = body.get("pubkey") if isinstance(body, dict) else None
    if not isinstance(pubkey, str):
        return None
    session = body.get("session")
    session_id = session.get("session_id") if isinstance(session, dict) else None
    return f"{pubkey}#{session_id}" if isinstance(session_id, str) and session_id else pubkey


@dataclass
class Queues:
    cap: int = 1024
    queues: dict[str, deque[tuple[str, dict[str, Any]]]] = field(default_factory=dict)
    seq: int = 0
    lose_acks: int = 0
    sent: list[tuple[str, Any]] = field(default_factory=list)
    acked: list[str] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)
    # While set, an ack is held before it is applied (`ack_held` says one is waiting) until
    # `release` is set; then it is dropped, as if it had never arrived.
    hold_acks: bool = False
    ack_held: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    # The roster: key -> (announcement as posted, received at, ms).
    roster: dict[str, tuple[Any, int]] = field(default_factory=dict)
    announced: list[Any] = field(default_factory=list)
    unregistered: list[str] = field(default_factory=list)

    def announce(self, key: str, announcement: Any, now: int) -> None:
        with self.changed:
            self.roster = {k: v for k, v in self.roster.items() if now - v[1] < AWAY_RETAIN_MS}
            if len(self.roster) >= ROSTER_CAP and key not in self.roster:
                return
            self.roster[key] = (announcement, now)
            self.announced.append(announcement)

    def unregister(self, key: str) -> None:
        with self.changed:
            self.roster.pop(key, None)
            self.unregistered.append(key)

    def listed(self, now: int) -> list[Any]:
        with self.changed:
            out = []
            for announcement, at in self.roster.values():
                age = max(0, now - at)
                if age >= AWAY_RETAIN_MS:
                    continue
                entry = dict(announcement) if isinstance(announcement, dict) else announcement
                if isinstance(entry, dict):
                    entry["age_ms"] = age
                out.append(entry)
            return out

    def age_roster(self, ms: int, key: str | None = None) -> None:
        """As if `ms` had passed since the last refresh of `key`'s entry (every entry's)."""
        with self.changed:
            for k, (announcement, at) in list(self.roster.items()):
                if key is None or k == key or k.startswith(key + "#"):
                    self.roster[k] = (announcement, at - ms)

    def enqueue(self, to: str, payload: Any) -> None:
        with self.changed:
            self.seq += 1
            key = f"{to}\0{self.seq:020}"
            queue = self.queues.setdefault(to, deque())
            queue.append((key, {"payload": payload, "ts": int(time.time() * 1000)}))
            while len(queue) > self.cap:
                queue.popleft()
            self.sent.append((to, payload))
            self.changed.notify_all()

    def recv(self, me: str, wait_ms: int) -> tuple[str, dict[str, Any]] | None:
        deadline = time.monotonic() + wait_ms / 1000
        with self.changed:
            while True:
                queue = self.queues.get(me)
                if queue:
                    return queue[0]
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self.changed.wait(remaining)

    def ack(self, key: str) -> None:
        with self.changed:
            if self.lose_acks > 0:
                self.lose_acks -= 1
                return
            to = key.split("\0", 1)[0]
            queue = self.queues.get(to)
            if queue is not None:
                self.queues[to] = deque(item for item in queue if item[0] != key)
            self.acked.append(key)

    def depth(self, me: str) -> int:
        with self.changed:
            return len(self.queues.get(me, ()))


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _reply(self, code: int, body: Any = None) -> None:
        if self.server.dead:
            return  # killed while this request waited: it never answers
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            return json.loads(self.rfile.read(length))
        except ValueError:
            return None

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        body = self._body()
        if not isinstance(body, dict):
            self._reply(400)
        elif path == "/send" and isinstance(body.get("to"), str) and "payload" in body:
            self.server.queues.enqueue(body["to"], body["payload"])
            self._reply(202)
        elif (
            path == "/ack" and isinstance(body.get("me"), str) and isinstance(body.get("ack"), str)
        ):
            if not body["ack"].startswith(body["me"] + "\0"):
                self._reply(403)
                return
            queues = self.server.queues
            if queues.hold_acks:
                queues.ack_held.set()
                queues.release.wait(60)
                return  # dropped, unanswered: the connection closes
            queues.ack(body["ack"])
            self._reply(200)
        elif path in ("/announce", "/unregister"):
            key = roster_key(body)
            if key is None:
                self._reply(400)
            elif path == "/announce":
                self.server.queues.announce(key, body, now_ms())
                self._reply(202)
            else:
                self.server.queues.unregister(key)
                self._reply(202)
        elif path in ("/send", "/ack"):
            self._reply(422)
        else:
            self._reply(404)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path == "/roster":
            self._reply(200, {"roster": self.server.queues.listed(now_ms())})
            return
        if url.path != "/recv":
            self._reply(404)
            return
        query = parse_qs(url.query)
        if "me" not in query:
            self._reply(400)
            return
        try:
            wait = int(query.get("timeout_ms", [str(DEFAULT_RECV_TIMEOUT_MS)])[0])
        except ValueError:
            self._reply(400)
            return
        found = self.server.queues.recv(query["me"][0], wait)
        if found is None:
            self._reply(200, {"status": "timeout"})
        else:
            key, envelope = found
            self._reply(200, {"status": "message", "envelope": envelope, "ack": key})


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, queues: Queues, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.queues = queues
        self.open: set[socket.socket] = set()
        self.dead = False

    def process_request(self, request: Any, client_address: Any) -> None:
        self.open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.open.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client killed or stopped while it long-polls leaves a closed socket: not news.
        return

    def cut(self) -> None:
        """Every open connection dropped, as a killed process's are."""
        self.dead = True
        for request in list(self.open):
            with contextlib.suppress(OSError):
                request.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                request.close()


class Bus:
    """A bus serving on 127.0.0.1 on a free port, in a thread; use as a context manager."""

    def __init__(self, cap: int = 1024) -> None:
        self.queues = Queues(cap=cap)
        self._server = _Server(self.queues)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.port = int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Bus:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop()

    def _stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._server.cut()
        self._thread.join(timeout=10)

    def kill(self) -> None:
        """Down at once: the port refuses connections and open ones are cut, a long poll
        included. The queues stay (interlink's `--db`)."""
        self._stop()
        with self.queues.changed:
            self.queues.changed.notify_all()  # waiting polls give up, unanswered

    def restart(self) -> None:
        """Up again on the same port, with the queues as they were and an empty roster."""
        with self.queues.changed:
            self.queues.roster.clear()
        self._server = _Server(self.queues, self.port)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
