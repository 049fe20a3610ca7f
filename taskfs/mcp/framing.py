"""The stdio wire of `taskfs mcp`: every line a client sends gets an answer.

The SDK drops a line that is not a JSON-RPC message without a word, so a client that sent a
malformed request waits forever. Here each line is looked at before the SDK sees it: one that is
not JSON is answered with a parse error (-32700), and one that is JSON but not a JSON-RPC
message with an invalid-request error (-32600): a list, a number, a request without `jsonrpc`,
with a `method` that is not text or an `id` that is neither text nor a whole number, an object
that is none of request, notification, response or error. The error carries the request's `id`
when it had a usable one, `null` otherwise. The server then reads the next line as usual.
Blank lines are skipped.

As the SDK does for its own reader, file descriptor 0 points at the null device while the server
runs, so that a child process reads end of file rather than the protocol stream.

When the client closes its end (end of input, the host's way of shutting a server down), every
request already read is answered before the server stops: a running acceptance check is
stopped (`taskfs.mcp.running`, answered `check_stopped`), the other calls finish, and only then
does the SDK see the end of input, which would cancel what is still in flight. A request the
client cancelled is not waited for (it gets no answer), nor one the server drops, once no
handler has run for a while.
"""

from __future__ import annotations

import io
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any, cast

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from taskfs.mcp.running import Running

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
# At end of input: with requests unanswered but no handler running, how long to wait for one to
# start before giving up on them; how often to look.
_IDLE_GIVE_UP = 2.0
_POLL = 0.02


def triage(line: str) -> types.JSONRPCError | None:
    """The error answering `line`, or None when it is a JSON-RPC message to pass on."""
    try:
        value = json.loads(line)
    except ValueError:
        return _error(None, PARSE_ERROR, "Parse error: the line is not JSON")
    if not isinstance(value, dict):
        return _error(None, INVALID_REQUEST, "Invalid Request: expected one JSON object per line")
    ident = value.get("id")
    usable = isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool))
    try:
        types.jsonrpc_message_adapter.validate_python(value, by_name=False)
        if ident is not None and not usable:
            raise ValueError("the id is neither text nor a whole number")
    except ValueError:
        return _error(
            ident if usable else None,
            INVALID_REQUEST,
            "Invalid Request: not a JSON-RPC 2.0 request, notification or response "
            "(jsonrpc: '2.0', and a method with an id, or a result or error with an id)",
        )
    return None


def _error(ident: str | int | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=ident, error=types.ErrorData(code=code, message=message)
    )


class _Lines:
    """The client's lines that are JSON-RPC messages; the others are answered on the way."""

    def __init__(self, source: IO[bytes], running: Running | None = None) -> None:
        self._source = anyio.wrap_file(io.TextIOWrapper(source, encoding="utf-8", errors="replace"))
        self._ready = anyio.Event()
        self._answer: Callable[[SessionMessage], Any] | None = None
        self._running = running
        self.unanswered: set[str] = set()  # ids of requests read and not yet answered

    def connect(self, send: Callable[[SessionMessage], Any]) -> None:
        self._answer = send
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._source:
            if not line.strip():
                continue
            error = triage(line)
            if error is None:
                self._note(json.loads(line))
                yield line
                continue
            await self._ready.wait()
            assert self._answer is not None
            await self._answer(SessionMessage(error))
        await self._drain()

    def _note(self, message: Any) -> None:
        """Keep track of the requests read, and of those the client gave up on."""
        if not isinstance(message, dict):
            return
        if "method" in message and message.get("id") is not None:
            self.unanswered.add(json.dumps(message["id"]))
        elif message.get("method") == "notifications/cancelled":
            params = message.get("params")
            if isinstance(params, dict):
                self.unanswered.discard(json.dumps(params.get("requestId")))

    def answered(self, message: SessionMessage) -> None:
        root = message.message
        ident = getattr(root, "id", None)
        if ident is not None and not hasattr(root, "method"):
            self.unanswered.discard(json.dumps(ident))

    async def _drain(self) -> None:
        """At end of input: stop what runs long, and wait until every request read is
        answered (or, with none running, has had time to start)."""
        if self._running is None:
            return
        self._running.close()
        idle_since = time.monotonic()
        while self.unanswered:
            if self._running.busy:
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since > _IDLE_GIVE_UP:
                return
            await anyio.sleep(_POLL)


class _Answers:
    """The server's write stream, telling `_Lines` which requests were answered."""

    def __init__(self, stream: Any, lines: _Lines) -> None:
        self._stream = stream
        self._lines = lines

    async def send(self, message: SessionMessage) -> None:
        await self._stream.send(message)
        self._lines.answered(message)

    async def __aenter__(self) -> _Answers:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._stream.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def _claimed_stdin() -> Iterator[IO[bytes]]:
    """The protocol stream, with file descriptor 0 pointed at the null device meanwhile."""
    try:
        fd_backed = sys.stdin is not None and sys.stdin.fileno() == 0
    except (AttributeError, OSError, ValueError):
        fd_backed = False
    if not fd_backed:
        yield sys.stdin.buffer
        return
    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        with os.fdopen(private, "rb", closefd=False) as stream:
            yield stream
    finally:
        os.dup2(private, 0)
        os.close(private)


def run(server: Any, running: Running | None = None) -> None:
    """Serve `server` (an `MCPServer`) on stdio until the client closes stdin; `running`, the
    calls in flight, are answered first."""
    lowlevel = server._lowlevel_server

    async def main() -> None:
        with _claimed_stdin() as source:
            lines = _Lines(source, running)
            async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
                lines.connect(write_stream.send)
                answers = _Answers(write_stream, lines)
                await lowlevel.run(
                    read_stream, cast(Any, answers), lowlevel.create_initialization_options()
                )

    anyio.run(main)
