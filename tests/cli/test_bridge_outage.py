"""`taskfs interlink bridge` outlives its bus: killed for 10 s and started again (as
`interlink-bus --db` keeps its queues and forgets its roster), the bus finds the bridge still
running; it has backed off and retried, said so on stderr, announced itself again, and a message
each way arrives once, as does the one its agent wrote while the bus was down."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_interlink_peer import ok
from tests.helpers import git, taskfs, write_envelope
from tests.interlink_bus import Bus
from tests.interlink_peer import Peer

OUTAGE_S = 10


@pytest.fixture
def bus() -> Iterator[Bus]:
    with Bus() as running:
        yield running


def until(what: Callable[[], object], seconds: float = 90) -> None:
    """Wait for `what` to hold (no sleep of a guessed length: a deadline, polled)."""
    deadline = time.monotonic() + seconds
    while not what():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.1)


def test_the_bridge_survives_a_bus_killed_for_ten_seconds(
    repo: Path, bus: Bus, tmp_path: Path
) -> None:
    me = ok("keys", "new", "--agent", "planner")["interlinkId"]
    worker = Peer("worker", [bus.url])
    worker.announce()
    ok("keys", "add", "--agent", "worker", "--public", worker.key)
    log = tmp_path / "bridge.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "taskfs", "interlink", "bridge", "--agent", "planner"],
            cwd=repo,
            env={**os.environ, "INTERLINK_URL": bus.url},
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    route = f"{me}#taskfs"
    heard: list[dict[str, Any]] = []

    def hears(count: int) -> bool:
        heard.extend(worker.receive())
        return len(heard) >= count

    try:
        until(lambda: route in bus.queues.roster)
        worker.peers["planner"] = worker.discover("planner")
        path = write_envelope(repo / "t.yaml", id="login", **{"from": "planner", "to": "worker"})
        ok("new", str(path))
        path.unlink()
        until(lambda: hears(1))
        taken = worker.send_message("planner", "On it.", task_id="login", status="update")
        until(lambda: ok("show", "login")["state"] == "working")

        bus.kill()
        during = ok("send", "login", "Use argon2.", "--agent", "planner")
        time.sleep(OUTAGE_S)
        assert proc.poll() is None, log.read_text()
        announced = len(bus.queues.announced)
        bus.restart()

        # Back: the bridge announces itself again without waiting for its 30 s heartbeat.
        until(lambda: route in bus.queues.roster)
        assert len(bus.queues.announced) > announced
        worker.announce()  # its own heartbeat, after the restart emptied the roster
        until(lambda: hears(2))  # what planner wrote while the bus was down
        after = worker.send_message("planner", "Will do.", task_id="login")
        until(lambda: bus.queues.depth(route) == 0)
        back = ok("send", "login", "Thanks.", "--agent", "planner")
        until(lambda: hears(3))
        time.sleep(1)  # a second copy, were one posted, would be here by now
        hears(0)
        assert proc.poll() is None, log.read_text()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=60)
        finally:
            proc.kill()
    assert proc.returncode == 0, log.read_text()
    said = log.read_text()
    assert "Traceback" not in said
    assert "unreachable" in said  # where it stood while the bus was down ...
    assert "reachable again" in said  # ... and when it came back
    # Each way, each message once: nothing lost, nothing doubled.
    opening = ok("messages", "login")["messages"][0]["msg_id"]
    assert [m["msg_id"] for m in heard] == [opening, during["msg_id"], back["msg_id"]]
    assert worker.dropped == []
    goodbye = "[interlink] I'm ending this session"
    posted = [
        p["msg_id"]
        for _, p in bus.queues.sent
        if p.get("from") == me and not p["text"].startswith(goodbye)
    ]
    assert sorted(posted) == sorted([opening, during["msg_id"], back["msg_id"]])
    rows = ok("messages", "login")["messages"]
    inbound = [m["msg_id"] for m in rows if m["from"] == "worker"]
    assert inbound == [taken["msg_id"], after["msg_id"]]
    assert git(repo, "status", "--porcelain") == ""
    assert taskfs("audit", "--json").json["ok"] is True
