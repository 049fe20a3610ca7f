"""A call as a real host makes it, and ends it: arguments the tool does not take, a cursor it
never gave, a check the client cancels or watches (progress), and a client that closes its end
with calls in flight. Through the MCP SDK's own client, or raw JSON-RPC lines on stdio, against
real `taskfs mcp` processes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS, ListToolsRequest, ListToolsResult, PaginatedRequestParams

from tests.helpers import git, taskfs
from tests.mcp.test_server import envelope, serve, server_env

TRANSPORTS = ["stdio", "http"]
# A check that prints a line, then runs until it is stopped; the number marks its
# processes, so that a test can look for them in /proc. It is this process's own: a test
# run beside it (another xdist worker, another checkout's suite) has its own slow checks,
# which this one must neither count nor kill.
MARK = str(10**8 + os.getpid())
SLOW = f"echo going; sleep {MARK}; echo finished"


def marked() -> list[int]:
    """The processes still running the slow check's `sleep`."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{name}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if cmdline[:2] == [b"sleep", MARK.encode()] and state not in (b"Z", b"X"):
            found.append(int(name))
    return found


@pytest.fixture(autouse=True)
def _no_check_left_behind() -> Any:
    """Whatever happens in a test, the slow checks it started end with it."""
    yield
    for pid in marked():
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def gone(deadline: float = 30) -> bool:
    end = time.monotonic() + deadline
    while marked():
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


def slow_task(repo: Path, task: str = "slow") -> None:
    """A task `builder` holds, whose acceptance check runs until it is stopped."""
    text = envelope(
        id=task,
        filesAndInterfaces=[f"{task}/**"],
        acceptanceCheck={"passFailCommand": SLOW, "endToEndVerification": "none needed here"},
    )
    (repo / "slow.yaml").write_text(text)
    assert taskfs("new", "slow.yaml").code == 0
    (repo / "slow.yaml").unlink()
    assert taskfs("claim", task, "--agent", "builder").code == 0


def evidence_of(repo: Path, task: str) -> list[str]:
    folder = repo / "tasks" / task / "evidence"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


async def until(predicate: Any, deadline: float = 60) -> None:
    end = time.monotonic() + deadline
    while not predicate():
        assert time.monotonic() < end, "timed out"
        await anyio.sleep(0.05)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_argument_the_tool_does_not_take_is_refused_by_name(
    repo: Path, tmp_path: Path, transport: str
) -> None:
    before = git(repo, "rev-parse", "HEAD")

    async def call() -> None:
        async with serve(repo, "planner", server_env(tmp_path), transport=transport) as agent:
            # a misspelt optional argument, which would otherwise do nothing without a word
            doc = await agent.call("agent_inbox", mark_raed=True)
            assert [(e["code"], e["field"]) for e in doc["errors"]] == [
                ("unknown_argument", "mark_raed")
            ]
            assert "mark_read" in doc["errors"][0]["message"]
            doc = await agent.call("list_pending", everything=True)
            assert [(e["code"], e["field"]) for e in doc["errors"]] == [
                ("unknown_argument", "everything")
            ]
            # with one that does not fit, both are named
            doc = await agent.call("agent_claim", task_id=5, agent="builder")
            assert sorted((e["code"], e["field"]) for e in doc["errors"]) == [
                ("invalid_value", "task_id"),
                ("unknown_argument", "agent"),
            ]

    anyio.run(call)
    assert git(repo, "rev-parse", "HEAD") == before  # nothing written


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_list_cursor_this_server_never_gave_is_refused(
    repo: Path, tmp_path: Path, transport: str
) -> None:
    async def call() -> None:
        async with serve(repo, "planner", server_env(tmp_path), transport=transport) as agent:
            for cursor in ("bogus", "", "0"):
                request = ListToolsRequest(params=PaginatedRequestParams(cursor=cursor))
                with pytest.raises(MCPError) as raised:
                    await agent.session.send_request(request, ListToolsResult)
                assert raised.value.error.code == INVALID_PARAMS
            listed = await agent.session.list_tools()  # without one, all of them
            assert listed.next_cursor is None
            assert len(listed.tools) > 20

    anyio.run(call)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_cancelled_check_stops_its_processes_and_records_nothing(
    repo: Path, tmp_path: Path, transport: str
) -> None:
    slow_task(repo)
    before = git(repo, "rev-parse", "HEAD")
    progress: list[tuple[float, str | None]] = []

    async def on_progress(done: float, _total: float | None, message: str | None) -> None:
        progress.append((done, message))

    async def work() -> None:
        async with serve(repo, "builder", server_env(tmp_path), transport=transport) as agent:
            await agent.session.list_tools()
            with anyio.CancelScope() as scope:

                async def cancel_once_running() -> None:
                    await until(lambda: marked() and len(progress) >= 2)
                    scope.cancel()

                async with anyio.create_task_group() as group:
                    group.start_soon(cancel_once_running)
                    await agent.session.call_tool(
                        "agent_check",
                        {"task_id": "slow", "text": "done"},
                        progress_callback=on_progress,
                    )
            assert scope.cancelled_caught
            await anyio.to_thread.run_sync(gone)
            # The server goes on serving, and the task is as it was.
            status = await agent.ok("agent_status", task_id="slow")
            assert status["state"] == "working"

    anyio.run(work)
    assert marked() == []
    assert evidence_of(repo, "slow") == []
    assert git(repo, "rev-parse", "HEAD") == before  # nothing at all: the result neither
    # Progress came while the check ran: the seconds elapsed, growing, and what it printed.
    assert [p for p, _ in progress] == sorted({p for p, _ in progress})
    assert any(message == "going" for _, message in progress), progress
    assert git(repo, "status", "--porcelain", "--", "tasks") == ""
    assert taskfs("audit").code == 0


def test_a_client_that_closes_its_end_gets_every_answer_and_leaves_nothing_half_done(
    repo: Path, tmp_path: Path
) -> None:
    slow_task(repo)
    (repo / "open.yaml").write_text(envelope(id="open", filesAndInterfaces=["open/**"]))
    assert taskfs("new", "open.yaml").code == 0
    before = git(repo, "rev-parse", "HEAD")
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskfs", "mcp", "--agent", "builder"],
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(tmp_path),
    )
    assert proc.stdin is not None
    assert proc.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    def call(ident: int, tool: str, **arguments: Any) -> bytes:
        params = {"name": tool, "arguments": arguments}
        line = {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}
        return json.dumps(line).encode() + b"\n"

    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"},
                },
            }
        )
        assert json.loads(proc.stdout.readline())["id"] == 0
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        proc.stdin.write(call(1, "agent_check", task_id="slow", text="done"))
        proc.stdin.flush()
        end = time.monotonic() + 60
        while not marked():
            assert time.monotonic() < end, "the check did not start"
            time.sleep(0.05)
        # a write, then the end of input right behind it
        out, err = proc.communicate(call(2, "agent_claim", task_id="open"), timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    answers = {m["id"]: m for m in map(json.loads, out.decode().splitlines())}
    assert set(answers) == {1, 2}, (answers, err)
    checked = answers[1]["result"]
    assert checked["isError"] is True
    assert [e["code"] for e in checked["structuredContent"]["errors"]] == ["check_stopped"]
    # the claim is the one commit since: the stopped check wrote nothing, its result neither
    assert git(repo, "log", "--format=%s", f"{before}..HEAD").count("\n") == 0
    claimed = answers[2]["result"]
    assert claimed["structuredContent"]["state"] == "working", claimed
    assert proc.returncode == 0
    assert gone()
    assert evidence_of(repo, "slow") == []
    assert git(repo, "status", "--porcelain", "--", "tasks") == ""
    assert {t["state"] for t in taskfs("ls", "--json").json["tasks"]} == {"working"}
    assert taskfs("audit").code == 0


def test_a_server_told_to_stop_stops_its_check_first(repo: Path, tmp_path: Path) -> None:
    # The host's last word before SIGKILL (the specification's stdio shutdown): SIGTERM. The
    # check runs in a process group of its own, which would outlive the server if it died
    # on the spot.
    slow_task(repo)
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskfs", "mcp", "--agent", "builder"],
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(tmp_path),
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    check = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "agent_check", "arguments": {"task_id": "slow", "text": "done"}},
    }
    try:
        proc.stdin.write(json.dumps(initialize).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 0
        for message in ({"jsonrpc": "2.0", "method": "notifications/initialized"}, check):
            proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
        end = time.monotonic() + 60
        while not marked():
            assert time.monotonic() < end, "the check did not start"
            time.sleep(0.05)
        proc.terminate()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]
    assert gone(10), "the check's processes outlived the server"
    assert evidence_of(repo, "slow") == []
    assert git(repo, "status", "--porcelain", "--", "tasks") == ""
    assert taskfs("audit").code == 0


def test_a_check_whose_result_would_be_refused_runs_nothing(repo: Path, tmp_path: Path) -> None:
    """The result message is committed after the run, but its refusal comes first: an agent
    that may not report on the task (here: not its holder) does not get its command run."""
    slow_task(repo)
    before = git(repo, "rev-parse", "HEAD")

    async def work() -> None:
        async with serve(repo, "mallory", server_env(tmp_path)) as agent:
            with anyio.fail_after(60):
                doc = await agent.call("agent_check", task_id="slow", text="done")
            assert [e["code"] for e in doc["errors"]] == ["agent_not_allowed"]

    anyio.run(work)
    assert marked() == []
    assert evidence_of(repo, "slow") == []
    assert git(repo, "rev-parse", "HEAD") == before
