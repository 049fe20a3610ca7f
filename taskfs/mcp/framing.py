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
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any, cast

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


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

    def __init__(self, source: IO[bytes]) -> None:
        self._source = anyio.wrap_file(io.TextIOWrapper(source, encoding="utf-8", errors="replace"))
        self._ready = anyio.Event()
        self._answer: Callable[[SessionMessage], Any] | None = None

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
                yield line
                continue
            await self._ready.wait()
            assert self._answer is not None
            await self._answer(SessionMessage(error))


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


def run(server: Any) -> None:
    """Serve `server` (an `MCPServer`) on stdio until the client closes stdin."""
    lowlevel = server._lowlevel_server

    async def main() -> None:
        with _claimed_stdin() as source:
            lines = _Lines(source)
            async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
                lines.connect(write_stream.send)
                await lowlevel.run(
                    read_stream, write_stream, lowlevel.create_initialization_options()
                )

    anyio.run(main)
