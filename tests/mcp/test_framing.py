"""`taskfs mcp` answers every line on stdio: a malformed one with a JSON-RPC error, and then
it goes on serving. Raw lines are written to the server as a subprocess, as a broken client
would write them."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


class Wire:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        assert proc.stdout is not None
        self.selector = selectors.DefaultSelector()
        self.selector.register(proc.stdout, selectors.EVENT_READ)
        self.buffer = b""

    def send(self, line: str | bytes) -> None:
        assert self.proc.stdin is not None
        data = line.encode() if isinstance(line, str) else line
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 60) -> dict[str, Any]:
        """The next line the server writes, as JSON; fails when none comes in `timeout`."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0, f"no answer from the server (stderr: {self._stderr()})"
            if self.selector.select(left):
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                assert chunk, f"the server closed stdout (stderr: {self._stderr()})"
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        answer: dict[str, Any] = json.loads(line)
        return answer

    def _stderr(self) -> str:
        self.proc.kill()
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")[-2000:]


@pytest.fixture
def wire(repo: Path) -> Iterator[Wire]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskfs", "mcp", "--agent", "A"],
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        connection = Wire(proc)
        connection.send(json.dumps(INITIALIZE))
        assert connection.answer()["id"] == 1
        connection.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        yield connection
    finally:
        proc.kill()
        proc.wait(timeout=30)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _still_serving(wire: Wire, ident: int) -> None:
    wire.send(json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/list"}))
    answer = wire.answer()
    assert answer["id"] == ident
    assert any(tool["name"] == "agent_inbox" for tool in answer["result"]["tools"])


@pytest.mark.parametrize(
    ("line", "code", "ident"),
    [
        pytest.param("this is not json", -32700, None, id="not-json"),
        pytest.param('{"jsonrpc": "2.0", "id": 3, "method": "tools/list"', -32700, None, id="cut"),
        pytest.param(b"\xff\xfe{}", -32700, None, id="not-utf8"),
        pytest.param("[1, 2]", -32600, None, id="list"),
        pytest.param("42", -32600, None, id="number"),
        pytest.param('"tools/list"', -32600, None, id="string"),
        pytest.param("null", -32600, None, id="null"),
        pytest.param('{"jsonrpc": "2.0", "id": 7}', -32600, 7, id="no-method"),
        pytest.param('{"id": 8, "method": "tools/list"}', -32600, 8, id="no-jsonrpc"),
        pytest.param('{"jsonrpc": "1.0", "id": 9, "method": "ping"}', -32600, 9, id="old-version"),
        pytest.param('{"jsonrpc": "2.0", "id": "x", "method": 5}', -32600, "x", id="method-number"),
        pytest.param('{"jsonrpc": "2.0", "id": [1], "method": "ping"}', -32600, None, id="bad-id"),
        pytest.param("{}", -32600, None, id="empty-object"),
    ],
)
def test_a_malformed_line_gets_a_json_rpc_error_and_serving_goes_on(
    wire: Wire, line: str | bytes, code: int, ident: object
) -> None:
    wire.send(line)
    answer = wire.answer()
    assert answer["jsonrpc"] == "2.0"
    assert answer["error"]["code"] == code
    assert answer["id"] == ident
    assert "result" not in answer
    _still_serving(wire, 100)


def test_many_bad_lines_in_a_row_are_each_answered(wire: Wire) -> None:
    bad = ["{", "[]", '{"id": 5}', "nope", '{"jsonrpc": "2.0"}']
    for line in bad:
        wire.send(line)
    codes = [wire.answer()["error"]["code"] for _ in bad]
    assert codes == [-32700, -32600, -32600, -32700, -32600]
    _still_serving(wire, 101)
    wire.send("")  # a blank line is no message: nothing to answer
    _still_serving(wire, 102)
