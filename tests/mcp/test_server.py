"""`taskfs mcp` started as a real process and driven by the MCP SDK's own client over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import jsonschema
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from taskfs.core import yamlio
from tests.helpers import ENVELOPE, git, taskfs
from tests.serving import server

AGENT_TOOLS = {
    "agent_send",
    "agent_inbox",
    "agent_claim",
    "agent_ask",
    "agent_answer",
    "agent_update",
    "agent_check",
    "agent_complete",
    "agent_refuse",
    "agent_fail",
    "agent_cancel",
    "agent_status",
    "agent_history",
    "agent_bind",
    "agent_tasks",
    "agent_reassign",
    "agent_retry",
}


class Agent:
    """One MCP client session, speaking to one `taskfs mcp --agent NAME` process."""

    def __init__(self, session: ClientSession, stray: list[Any]) -> None:
        self.session = session
        self.stray = stray
        self.text = ""  # the text content of the last answer
        self.outputs: dict[str, Any] = {}  # each tool's outputSchema, once listed
        # (tool, characters) of every call: its arguments as JSON and the text it answered,
        # what a model reads and writes (tests/mcp/test_team_day.py counts the inbox's share).
        self.traffic: list[tuple[str, int]] = []

    async def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        if not self.outputs:
            listed = (await self.session.list_tools()).tools
            self.outputs = {t.name: t.output_schema for t in listed}
        result = await self.session.call_tool(tool, arguments)
        assert isinstance(result, CallToolResult)
        doc = result.structured_content
        assert doc is not None
        self.text = result.content[0].text  # type: ignore[union-attr]
        self.traffic.append((tool, len(json.dumps(arguments, ensure_ascii=False)) + len(self.text)))
        if tool.startswith("agent_"):
            assert json.loads(self.text) == doc
        else:  # interlink's tools answer in its one-line text
            assert not self.text.startswith("{"), self.text
        assert result.is_error is (not doc["ok"])
        # An answer is what its tool's outputSchema says, a refusal too: clients that check it
        # (the TypeScript SDK's) would otherwise throw the refusal away.
        jsonschema.validate(doc, self.outputs[tool])
        return dict(doc)

    async def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        doc = await self.call(tool, **arguments)
        assert doc["ok"] is True, doc
        return doc

    async def refused(self, tool: str, **arguments: Any) -> list[str]:
        doc = await self.call(tool, **arguments)
        assert doc["ok"] is False, doc
        return [e["code"] for e in doc["errors"]]


@asynccontextmanager
async def serve(
    repo: Path,
    agent: str,
    env: dict[str, str],
    session: str | None = None,
    *,
    transport: str = "stdio",
) -> AsyncIterator[Agent]:
    """`taskfs mcp --agent AGENT` in `repo`, as one client session (within the host session
    `session`, when given), on stdio or over HTTP (`taskfs mcp --http`)."""
    env = {**env, "TASKFS_SESSION": session} if session else env
    if transport == "http":
        args = ["mcp", "--http", "--port", "0", "--agent", agent]
        with server(args, repo, env) as served:
            async with http_session(served.url) as client:
                yield Agent(client, [])
        return
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "taskfs", "mcp", "--agent", agent], cwd=repo, env=env
    )
    stray: list[Any] = []

    async def on_message(message: Any) -> None:
        # Anything on stdout that is not a protocol message arrives here as an exception.
        if isinstance(message, Exception):
            stray.append(message)

    async with AsyncExitStack() as stack:
        read, write = await stack.enter_async_context(stdio_client(params))
        client = await stack.enter_async_context(
            ClientSession(read, write, message_handler=on_message)
        )
        await client.initialize()
        yield Agent(client, stray)
    assert stray == [], f"the server wrote something that is not protocol: {stray}"


@asynccontextmanager
async def http_session(url: str, headers: dict[str, str] | None = None) -> AsyncIterator[Any]:
    """The MCP SDK's own client session over streamable HTTP, initialized."""
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx2.AsyncClient(headers=headers, timeout=60))
        streams = await stack.enter_async_context(streamable_http_client(url, http_client=http))
        client = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
        await client.initialize()
        yield client


def server_env(tmp_path: Path) -> dict[str, str]:
    keep = ("HOME", "XDG_CONFIG_HOME", "PATH", "GIT_CONFIG_NOSYSTEM", "TASKFS_LEDGER")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    return env


def envelope(**changes: Any) -> str:
    data = {**ENVELOPE, **changes}
    return yamlio.dump({k: v for k, v in data.items() if v is not None})


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_agent_walks_a_task_through_the_mcp_tools(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    for agent in ("planner", "builder"):
        assert taskfs("keys", "new", "--agent", agent).code == 0
    ledger = tmp_path / "ledger.yaml"
    ledger.write_text("agents:\n  builder: [bash, edit]\n")
    monkeypatch.setenv("TASKFS_LEDGER", str(ledger))
    env = server_env(tmp_path)

    async def walk() -> None:
        async with (
            serve(repo, "planner", env, transport=transport) as planner,
            serve(repo, "builder", env, transport=transport) as builder,
        ):
            listed = await planner.session.list_tools()
            names = {t.name for t in listed.tools}
            assert names >= AGENT_TOOLS
            # Short: every description costs context (the whole list's budget is counted in
            # tests/mcp/test_descriptions.py); a few say what a model needs to call them right.
            assert all(len(t.description or "") <= 450 for t in listed.tools)

            sent = await planner.ok(
                "agent_send", envelope=envelope(toolsAllowed=["bash", "web"], id="login")
            )
            assert sent["id"] == "login"
            assert sent["state"] == "submitted"
            inbox = await builder.ok("agent_inbox")
            assert [t["id"] for t in inbox["toClaim"]] == ["login"]
            assert inbox["badge"] == "builder: 1 to claim, 0 to answer, 0 to review, 0 unread"

            assert (await builder.ok("agent_claim", task_id="login"))["state"] == "working"
            bound = await builder.ok("agent_bind", task_id="login")
            assert bound["toolsGranted"] == ["bash"]

            asked = await builder.ok("agent_ask", task_id="login", text="Log a warning too?")
            assert asked["state"] == "input_required"
            assert asked["signed"] is True
            question = (await planner.ok("agent_inbox"))["questions"]
            assert [q["msg_id"] for q in question] == [asked["msg_id"]]
            misdirected = await builder.refused(
                "agent_answer", task_id="login", in_reply_to=asked["msg_id"], text="yes"
            )
            assert misdirected == ["message_misaddressed"]
            answered = await planner.ok(
                "agent_answer", task_id="login", in_reply_to=asked["msg_id"], text="No."
            )
            assert answered["state"] == "working"

            await builder.ok("agent_update", task_id="login", text="refusing empty passwords")
            # No evidence of a passing acceptance check yet: completion is refused.
            refusal = await builder.refused("agent_complete", task_id="login")
            assert refusal == ["completion_requires_evidence"]
            # A check before the work is done fails, records failing evidence, moves nothing.
            failed = await builder.call("agent_check", task_id="login", text="done?")
            assert (failed["ok"], failed["verdict"]) == (False, "fail")
            assert await builder.refused("agent_complete", task_id="login") == [
                "completion_requires_evidence"
            ]

            (repo / "src" / "auth").mkdir(parents=True)
            (repo / "src" / "auth" / "login.py").write_text("def login(p):\n    return bool(p)\n")
            # Checked before the work is committed: the pass completes nothing (issue 16).
            await builder.ok("agent_check", task_id="login", text="done?")
            assert await builder.refused("agent_complete", task_id="login") == ["work_uncommitted"]
            git(repo, "add", "src")
            git(repo, "commit", "-q", "-m", "the work")
            checked = await builder.ok("agent_check", task_id="login", text="done")
            assert checked["checkRequested"] is True
            assert (checked["verdict"], checked["state"]) == ("pass", "working")
            assert checked["evidence"].startswith("tasks/login/evidence/")
            completed = await builder.ok("agent_complete", task_id="login")
            assert completed["state"] == "completed"

            status = await planner.ok("agent_status", task_id="login")
            assert (status["state"], status["holder"]) == ("completed", "builder")
            history = await planner.ok("agent_history", task_id="login")
            assert [h["state"] for h in history["history"]] == [
                "submitted",
                "working",
                "input_required",
                "working",
                "completed",
            ]
            assert [m.get("status") for m in history["messages"]] == [
                None,  # the task's opening, signed by planner, kept with it
                "needs_input",
                None,
                "update",
                "result",
                "result",
                "result",
            ]
            assert all(m["verified"] for m in history["messages"])

            assert await builder.refused("agent_claim", task_id="nope") == ["task_not_found"]
            await planner.ok(
                "agent_send", envelope=envelope(id="docs", filesAndInterfaces=["docs/**"])
            )
            await planner.ok(
                "agent_send", envelope=envelope(id="old", filesAndInterfaces=["old/**"])
            )
            refused = await builder.ok("agent_refuse", task_id="old", reason="out of scope")
            assert refused["state"] == "rejected"
            await builder.ok("agent_claim", task_id="docs")
            canceled = await planner.ok("agent_cancel", task_id="docs", reason="not needed")
            assert canceled["transition"] == {"from": "working", "to": "canceled"}
            assert await builder.refused("agent_fail", task_id="docs", reason="x") == [
                "transition_not_allowed"
            ]
            inbox = await planner.ok("agent_inbox", mark_read=True)
            # the update and three results (failing, on uncommitted work, passing); the
            # question is no longer unread: the planner answered it
            assert inbox["counts"]["unread"] == 4
            # The refusal reaches the sender without a message: it is in its inbox.
            assert [(t["id"], t["endedBy"], t["reason"]) for t in inbox["ended"]] == [
                ("old", "builder", "out of scope")
            ]
            assert (await planner.ok("agent_inbox"))["counts"]["unread"] == 0

    anyio.run(walk)
    assert git(repo, "status", "--porcelain", "--", "tasks") == ""
    assert taskfs("audit", "--json").json["ok"] is True


def test_a_server_without_an_agent_answers_with_the_named_error(repo: Path, tmp_path: Path) -> None:
    env = server_env(tmp_path)

    async def ask() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "taskfs", "mcp"], cwd=repo, env=env
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("agent_inbox", {})
            assert result.is_error is True
            assert result.structured_content is not None
            assert result.structured_content["errors"][0]["code"] == "agent_required"

    anyio.run(ask)


def test_a_bad_agent_name_is_refused_before_serving(repo: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "taskfs", "mcp", "--agent", "no spaces"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "invalid_agent" in proc.stderr


def test_other_commands_do_not_import_the_mcp_sdk(repo: Path) -> None:
    code = (
        "import sys\n"
        "from taskfs.cli.app import run\n"
        "run(['inbox', '--agent', 'builder', '--json'])\n"
        "assert not any(m == 'mcp' or m.startswith('mcp.') for m in sys.modules), 'mcp imported'\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
