"""`taskfs board --serve` under the load a lead's browser tabs, a colleague's forgotten tab and
a flaky network put on it (issue 39): many streams each get every change, a reader that takes
nothing holds up nobody, a reader that vanishes mid-stream leaves nothing behind (the server's
open files come back to where they were), an interrupt ends it cleanly with streams open, and
with tokens configured the stream answers only a token.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from taskfs.core import yamlio
from tests.helpers import submit, taskfs_process
from tests.serving import server

TOKEN = "0123456789abcdef-board-token"


class Stream:
    """One reader of `/events`, on a plain socket: the events it has read so far."""

    def __init__(self, url: str, headers: dict[str, str] | None = None, rcvbuf: int = 0) -> None:
        place = urlsplit(url)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.connect((place.hostname or "127.0.0.1", place.port or 80))
        lines = ["GET /events HTTP/1.1", f"Host: {place.netloc}", "Accept: text/event-stream"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self.buffer = b""
        self.events: list[dict[str, Any]] = []
        self.status = 0

    def read(self, until: int, timeout: float = 60) -> list[dict[str, Any]]:
        """Read until `until` board events came; all of them."""
        deadline = time.monotonic() + timeout
        while len(self.events) < until:
            left = deadline - time.monotonic()
            assert left > 0, f"{len(self.events)} events of {until} in {timeout} s"
            self.sock.settimeout(left)
            chunk = self.sock.recv(1 << 16)
            assert chunk, "the server closed the stream"
            self.buffer += chunk
            self._parse()
        return self.events

    def _parse(self) -> None:
        if not self.status and b"\r\n\r\n" in self.buffer:
            head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
            self.status = int(head.split(b" ")[1])
        # Chunked transfer: the events are found in the payload whatever the chunk sizes.
        for block in self.buffer.split(b"\n\n")[:-1]:
            found = [line for line in block.split(b"\n") if line.startswith(b"data: ")]
            if b"event: board" in block and found:
                data = found[0][len(b"data: ") :]
                self.events.append(json.loads(data))
        self.buffer = self.buffer.split(b"\n\n")[-1]

    def cut(self) -> None:
        """Go away mid-stream without a word (a reset, as a crashed browser leaves it)."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def settle(check: Any, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not settled in time"
        time.sleep(0.1)


def test_many_streams_a_stuck_reader_and_vanishing_ones_hold_up_nobody(repo: Path) -> None:
    task = submit(repo, id="t-load")
    with server(["board", "--serve", "--port", "0"], repo) as served:
        pid = served.proc.pid
        first = Stream(served.url)
        first.read(1)
        baseline = open_files(pid)
        stuck = Stream(served.url, rcvbuf=4096)  # sends its request and never reads again
        readers = [Stream(served.url) for _ in range(40)]
        for reader in readers:
            assert reader.read(1)[0]["version"] >= 1
            assert reader.status == 200
        for reader in readers[:20]:
            reader.cut()
        # A change reaches every reader still there, the stuck one notwithstanding.
        assert taskfs_process("claim", task, "--agent", "builder", cwd=repo).code == 0
        for reader in [first, *readers[20:]]:
            latest = reader.read(2)[-1]
            assert "working" in latest["board"]
        for reader in readers[20:]:
            reader.cut()
        stuck.cut()
        # The readers that went away left nothing open behind them.
        settle(lambda: open_files(pid) <= baseline)
        assert first.read(2)  # and the first one is still served
        page = httpx.get(served.url, timeout=10)
        assert page.status_code == 200


def test_an_interrupt_ends_the_server_cleanly_with_streams_open(repo: Path) -> None:
    submit(repo, id="t-one")
    with server(["board", "--serve", "--port", "0"], repo) as served:
        streams = [Stream(served.url) for _ in range(3)]
        for stream in streams:
            stream.read(1)
        served.proc.send_signal(signal.SIGINT)
        assert served.proc.wait(timeout=30) == 130  # the convention of an interrupted command
        assert served.proc.stderr is not None
        said = served.proc.stderr.read().decode()
        assert "Traceback" not in said
        assert "ERROR" not in said


def test_with_tokens_the_stream_answers_only_a_token(repo: Path, tmp_path: Path) -> None:
    submit(repo, id="t-one")
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(yamlio.dump({"tokens": {TOKEN: "lead"}}))
    env = {"TASKFS_A2A_TOKENS": str(tokens)}
    with server(["board", "--serve", "--port", "0"], repo, env=env) as served:
        page = httpx.get(served.url, timeout=10)
        assert page.status_code == 200
        assert 'data-task="t-one"' not in page.text  # no board without the token
        assert 'data-live="events"' in page.text
        refused = httpx.get(served.url + "events", timeout=10)
        assert refused.status_code == 401
        assert refused.json()["errors"][0]["code"] == "token_invalid"
        assert refused.headers["www-authenticate"] == "Bearer"
        wrong = Stream(served.url, {"Authorization": "Bearer not-a-token-of-this-file"})
        with_token = Stream(served.url, {"Authorization": f"Bearer {TOKEN}"})
        assert 'data-task="t-one"' in with_token.read(1)[0]["board"]
        assert with_token.status == 200
        wrong.sock.settimeout(10)
        assert b" 401 " in wrong.sock.recv(1 << 16)
        # Tokens let the page be reached by another name, as the doors do.
        other_name = httpx.get(served.url, headers={"Host": "ledger.example"}, timeout=10)
        assert other_name.status_code == 200


def test_a_reader_that_takes_nothing_is_dropped_and_the_others_go_on() -> None:
    """The stream's own logic, on a transport whose reader stopped reading: its send never
    returns. The stream gives up on it after `send_timeout`, and the publisher's wake list
    (what the other streams share) does not keep it."""
    import asyncio

    from taskfs.api.doors.tokens import Tokens
    from taskfs.report.board_live import BoardApp, Publisher

    async def scenario() -> tuple[int, list[bytes]]:
        builds = iter(range(1000))
        publisher = Publisher(
            lambda: {"board": f"<p>{next(builds)}</p>"}, time.monotonic, poll=0.01
        )
        app = BoardApp(publisher, lambda parts: "", Tokens(Path("/nonexistent")), send_timeout=0.3)
        scope = {"type": "http", "method": "GET", "path": "/events", "headers": []}
        never = asyncio.Event()

        async def receive() -> dict[str, Any]:
            await never.wait()
            return {"type": "http.disconnect"}

        async def stuck(message: Any) -> None:
            if message["type"] == "http.response.body" and b"event: board" in message["body"]:
                await never.wait()  # the reader's window is full, and stays full

        got: list[bytes] = []

        async def reader(message: Any) -> None:
            if message["type"] == "http.response.body":
                got.append(message["body"])

        other = asyncio.ensure_future(app(dict(scope), receive, reader))
        await asyncio.wait_for(app(dict(scope), receive, stuck), timeout=30)
        waiting = publisher.streams
        while sum(b"event: board" in body for body in got) < 3:
            await asyncio.sleep(0.01)
        other.cancel()
        await publisher.stop()
        return waiting, got

    waiting, got = asyncio.run(scenario())
    assert waiting <= 1  # only the other reader waits for the next board
    assert sum(b"event: board" in body for body in got) >= 3


def test_a_board_the_ledger_moved_under_is_built_again_before_it_is_shown() -> None:
    """A build during which the ledger's mark moved may have read two commits (the tasks at
    one, `ready` at the next): it is not sent; the board built again once the mark stood still
    is. A ledger that never stands still still gets a board, after `settle` tries."""
    import asyncio

    from taskfs.report.board_live import Publisher

    async def follow(marks: list[int], settle: int) -> tuple[int, dict[str, Any] | None]:
        looked = iter(marks)
        builds = iter(range(1, 100))
        publisher = Publisher(
            lambda: {"board": f"<p>build {next(builds)}</p>"},
            lambda: next(looked, marks[-1]),
            poll=0.01,
            settle=settle,
        )
        publisher.start()
        while publisher.version == 0:
            await asyncio.sleep(0.01)
        await publisher.stop()
        return publisher.version, publisher.parts

    # Looked at before build 1 (1) and after it (2: a commit landed meanwhile); then still.
    assert asyncio.run(follow([1, 2, 2, 2], settle=3)) == (1, {"board": "<p>build 2</p>"})
    # It moves under every build: the fourth is shown.
    moving = list(range(1, 50))
    assert asyncio.run(follow(moving, settle=3)) == (1, {"board": "<p>build 4</p>"})
