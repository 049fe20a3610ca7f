"""`taskfs board --serve`: the board as a page that keeps itself current (issue 39).

The page is the one `board --html` writes (`taskfs.report.board`), marked live: its script
opens `/events`, a stream of server-sent events, and swaps in the parts of the board each
`board` event carries, keeping the reader's filters, folds and place. Nothing else is
served, and only read: every act still goes through an agent's command or tool (anything but
GET is `page_read_only`, 405).

It listens as the other HTTP doors do (`taskfs.api.doors`): on loopback unless the operator's
token file names tokens, and every request passes the doors' guard first (a foreign `Origin`,
or a `Host` that does not name this server, is `origin_refused`, 403). With tokens configured
the stream answers only a bearer token the file names (`token_invalid`, 401); a browser cannot
send one with a page load, so the page is served without the board, and its script sends the
token it finds after `#token=` in the address (which no browser sends to a server) with each
request for the stream.

One reader of the ledger serves every open page (`Publisher`): it looks at the ledger's mark
(`taskfs.api.views.board.mark`: HEAD, git's index, the tasks folder) a few times a second,
builds the board again in one worker thread when the mark moved (or every half minute, for
the ages it shows), and wakes the streams when the parts changed. A board during whose build
the mark moved may have read two commits (the tasks at one, what `ready` says of them at the
next): it is built again before it is shown, up to `SETTLE` times in a row (a ledger that
never rests for a whole build still gets its board shown). A stream sends the latest
parts, never a queue: a slow reader skips to the newest board, a reader that takes no bytes for
`SEND_TIMEOUT` seconds is dropped, and one that goes away is noticed at once. A comment line
every `KEEPALIVE` seconds finds the ones that vanished without a word.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import re
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from taskfs.api.doors import listening
from taskfs.api.doors.guard import UNAUTHORIZED, Guard, headers
from taskfs.api.doors.tokens import Tokens
from taskfs.core import shapes
from taskfs.core.doors import Refusal
from taskfs.errors import Problem, TaskfsError, problem

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

POLL = 0.25  # seconds between looks at the ledger's mark
REDRAW = 30.0  # seconds: the board is built again even when nothing moved (its ages)
KEEPALIVE = 15.0  # seconds of quiet before a stream sends a comment line
SEND_TIMEOUT = 20.0  # seconds a stream waits for a reader to take its bytes
SETTLE = 3  # builds in a row the ledger may move under before one is shown all the same
EVENTS = "/events"


class Publisher:
    """The latest parts of the board, built by one worker thread, and the streams to wake."""

    def __init__(
        self,
        build: Callable[[], dict[str, Any]],
        moved: Callable[[], object],
        *,
        poll: float = POLL,
        redraw: float = REDRAW,
        settle: int = SETTLE,
    ) -> None:
        self.build = build
        self.moved = moved
        self.poll = poll
        self.redraw = redraw
        self.settle = settle
        self.version = 0
        self.parts: dict[str, Any] | None = None  # the latest board's parts
        self.event: bytes | None = None  # the latest `board` event, as sent
        self._body = ""
        self._waiting: set[asyncio.Event] = set()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="taskfs-board")
        self._task: asyncio.Task[None] | None = None
        self._said = ""

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._follow())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._worker.shutdown(wait=False, cancel_futures=True)

    async def _follow(self) -> None:
        loop = asyncio.get_running_loop()
        seen: object = None
        drawn = float("-inf")
        unsettled = 0  # builds in a row the ledger moved under
        while True:
            try:
                mark = await loop.run_in_executor(self._worker, self.moved)
                if mark != seen or loop.time() - drawn >= self.redraw:
                    parts = await loop.run_in_executor(self._worker, self.build)
                    seen, drawn = mark, loop.time()
                    after = await loop.run_in_executor(self._worker, self.moved)
                    if after != mark and unsettled < self.settle:
                        unsettled += 1  # it may mix two commits: built again (`seen` moved)
                    else:
                        unsettled = 0
                        self.publish(parts)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a ledger caught mid-write, a file unreadable: say why
                self._say(exc)
            await asyncio.sleep(self.poll)

    def _say(self, exc: Exception) -> None:
        found = exc.problems[0] if isinstance(exc, TaskfsError) else None
        said = f"{found.code}: {found.message}" if found else f"{type(exc).__name__}: {exc}"
        if said != self._said:  # once per cause, not four times a second
            self._said = said
            sys.stderr.write(f"taskfs board: the board could not be read: {said}\n")
            sys.stderr.flush()

    def publish(self, parts: dict[str, Any]) -> None:
        """Keep `parts` as the latest board, and wake the streams, when they changed."""
        body = json.dumps(parts, sort_keys=True)
        if body == self._body:
            return
        self._body = body
        self.parts = parts
        self.version += 1
        data = json.dumps({**parts, "version": self.version})
        self.event = f"id: {self.version}\nevent: board\ndata: {data}\n\n".encode()
        for waiting in self._waiting:
            waiting.set()

    async def newer(self, than: int, timeout: float) -> bool:
        """Wait until there is a board newer than version `than`; False after `timeout`."""
        if self.version > than:
            return True
        woken = asyncio.Event()
        self._waiting.add(woken)
        try:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(woken.wait(), timeout)
        finally:
            self._waiting.discard(woken)
        return self.version > than

    @property
    def streams(self) -> int:
        return len(self._waiting)


class BoardApp:
    """The ASGI app behind the doors' guard: the page and its stream."""

    def __init__(
        self,
        publisher: Publisher,
        page: Callable[[dict[str, Any] | None], str],
        tokens: Tokens,
        *,
        keepalive: float = KEEPALIVE,
        send_timeout: float = SEND_TIMEOUT,
    ) -> None:
        self.publisher = publisher
        self.page = page
        self.tokens = tokens
        self.keepalive = keepalive
        self.send_timeout = send_timeout
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing: asyncio.Event | None = None

    def closing(self) -> asyncio.Event:
        """Set when the server is asked to stop: every stream ends, cleanly."""
        if self._closing is None:
            self._loop = asyncio.get_running_loop()
            self._closing = asyncio.Event()
        return self._closing

    def close(self) -> None:
        """Ask every stream to end (from the server's signal handler)."""
        if self._loop is not None and self._closing is not None:
            self._loop.call_soon_threadsafe(self._closing.set)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        self.closing()
        method = str(scope.get("method", "GET")).upper()
        path = str(scope.get("path", "/"))
        if method not in ("GET", "HEAD"):
            await _refuse(send, 405, problem("page_read_only", method=method), [(b"allow", b"GET")])
            return
        if path == "/":
            await self._page(scope, send, head=method == "HEAD")
        elif path == EVENTS:
            await self._events(scope, receive, send)
        else:
            await _refuse(send, 404, problem("page_not_found", path=path[:200]))

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.publisher.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.publisher.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _reader(self, scope: Scope) -> Problem | None:
        """Why the request may not read the board (None: it may)."""
        try:
            self.tokens.caller(headers(scope))
        except TaskfsError as exc:
            return exc.problems[0]
        return None

    async def _page(self, scope: Scope, send: Send, *, head: bool) -> None:
        # With tokens configured, a page load (which carries none) gets the page without the
        # board: its script asks for the stream with the token.
        self.publisher.start()
        text = self.page(self.publisher.parts if self._reader(scope) is None else None)
        body = text.encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/html; charset=utf-8"),
                    (b"content-length", b"%d" % len(body)),
                    (b"content-security-policy", _policy(text).encode()),
                    *_QUIET,
                ],
            }
        )
        await send({"type": "http.response.body", "body": b"" if head else body})

    async def _events(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = self._reader(scope)
        if refused is not None:
            await _refuse(send, UNAUTHORIZED, refused, [(b"www-authenticate", b"Bearer")])
            return
        self.publisher.start()
        gone = asyncio.Event()

        async def watch() -> None:
            closing = asyncio.ensure_future(self.closing().wait())
            try:
                while True:
                    received = asyncio.ensure_future(receive())
                    await asyncio.wait({received, closing}, return_when=asyncio.FIRST_COMPLETED)
                    if closing.done():
                        received.cancel()
                        break
                    if received.result()["type"] == "http.disconnect":
                        break
            finally:
                closing.cancel()
                gone.set()

        watching = asyncio.get_running_loop().create_task(watch())
        try:
            await self._stream(send, gone)
        except (asyncio.TimeoutError, OSError):
            pass  # a reader that took nothing for too long, or a connection that broke
        finally:
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watching

    async def _stream(self, send: Send, gone: asyncio.Event) -> None:
        start = {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"text/event-stream; charset=utf-8"),
                (b"x-accel-buffering", b"no"),
                *_QUIET,
            ],
        }
        await asyncio.wait_for(send(start), self.send_timeout)
        await self._send(send, b"retry: 2000\n\n")
        sent = 0
        while not gone.is_set():
            fresh = await self._newer_or_gone(sent, gone)
            if gone.is_set():
                if self.closing().is_set():  # the server stops: the response ends whole
                    await self._send(send, b"", more=False)
                return
            event = self.publisher.event
            if fresh and event is not None:
                sent = self.publisher.version
                await self._send(send, event)
            else:
                await self._send(send, b": still here\n\n")

    async def _newer_or_gone(self, sent: int, gone: asyncio.Event) -> bool:
        newer = asyncio.ensure_future(self.publisher.newer(sent, self.keepalive))
        left = asyncio.ensure_future(gone.wait())
        try:
            await asyncio.wait({newer, left}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in (newer, left):
                if not waiting.done():
                    waiting.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await waiting
        return newer.done() and not newer.cancelled() and newer.result()

    async def _send(self, send: Send, data: bytes, *, more: bool = True) -> None:
        message = {"type": "http.response.body", "body": data, "more_body": more}
        await asyncio.wait_for(send(message), self.send_timeout)


# Headers every answer carries: never cached, never framed, never sniffed, no referrer.
_QUIET = [
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]


def _policy(page: str) -> str:
    """The page's content security policy: its own inline script (by digest) and styles, its
    own stream, nothing else from anywhere; a script that got into the page some other way
    does not run."""
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    digests = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
        for s in scripts
    )
    return (
        f"default-src 'none'; script-src {digests}; style-src 'unsafe-inline'; "
        "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    )


async def _refuse(
    send: Send, status: int, found: Problem, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = json.dumps(shapes.refusal([found])).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(body)),
                *_QUIET,
                *(extra or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def refused(refusal: Refusal) -> bytes:
    """A request the doors' guard refused, as taskfs's refusal document."""
    return json.dumps(shapes.refusal([refusal.problem])).encode()


def serve(
    publisher: Publisher,
    page: Callable[[dict[str, Any] | None], str],
    tokens: Tokens,
    host: str,
    port: int,
) -> int:
    """Serve until interrupted; the URL is the first line on stdout. Refusals before serving
    (the token file, the host) are raised as named errors."""
    sock, base = listening.listen(tokens, host, port, door="board")
    board = BoardApp(publisher, page, tokens)
    app = Guard(board, tokens.policy, refused)
    url = base + "/"
    sys.stdout.write(url + "\n")
    sys.stdout.flush()
    sys.stderr.write(f"taskfs board: serving the board at {url} (read-only; Ctrl-C stops)\n")
    sys.stderr.flush()
    listening.run(app, sock, lifespan=True, streams=True, on_exit=board.close)
    return 0
