"""The protocol around the tools, on both transports: what `tools/list` declares (hints, answer
shapes), how a bad call is answered (argument errors by taskfs's codes, an unknown tool as a
protocol error, a request before `initialize`), the utilities any server answers, and who gets
in over HTTP (`taskfs mcp --http` with tokens). Through the MCP SDK's own clients against real
`taskfs mcp` processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import MCPError
from mcp.types import (
    INVALID_PARAMS,
    CallToolRequest,
    CallToolRequestParams,
    CallToolResult,
    PromptReference,
)

from tests.a2a.serving import write_tokens
from tests.helpers import git, taskfs_process
from tests.mcp.test_server import http_session, serve, server_env
from tests.serving import server

TRANSPORTS = ["stdio", "http"]
READ_ONLY = {
    "agent_tasks",
    "agent_status",
    "agent_history",
    "agent_bind",
    "message_status",
    "conversation_history",
    "list_pending",
}
DESTRUCTIVE = {
    "agent_check",
    "agent_refuse",
    "agent_fail",
    "agent_cancel",
    "agent_reassign",
    "cancel_task",
    "agent_sync",  # an unpublished act that lost to a published one is undone
}
# The tools that reach beyond the repository: the acceptance command, the git remote.
OPEN_WORLD = {"agent_check", "agent_sync"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def listed(transport: str, repo: Path, env: dict[str, str]) -> dict[str, dict[str, Any]]:
    async def look() -> dict[str, dict[str, Any]]:
        async with serve(repo, "planner", env, transport=transport) as agent:
            tools = (await agent.session.list_tools()).tools
        return {t.name: t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools}

    return anyio.run(look)


def test_every_tool_declares_its_hints_and_the_shape_of_its_answer(
    repo: Path, tmp_path: Path
) -> None:
    env = server_env(tmp_path)
    tools = listed("http", repo, env)
    assert tools == listed("stdio", repo, env)  # one server, two transports
    assert set(tools) >= READ_ONLY | DESTRUCTIVE | {"agent_send", "send_message"}
    for name, tool in tools.items():
        hints = tool["annotations"]
        # The two hints whose defaults assume the worst are always spelled out.
        assert isinstance(hints["openWorldHint"], bool), name
        assert hints["openWorldHint"] is (name in OPEN_WORLD), name
        if name in READ_ONLY:
            assert hints == {"readOnlyHint": True, "openWorldHint": False}, name
        else:
            assert hints.get("readOnlyHint", False) is False, name
            assert hints["destructiveHint"] is (name in DESTRUCTIVE), name
        output = tool["outputSchema"]
        assert output["type"] == "object", name
        assert output["required"][0] == "ok", name
        assert "title" not in json.dumps(output), name
    assert tools["agent_claim"]["annotations"]["idempotentHint"] is True
    assert "idempotentHint" not in tools["agent_send"]["annotations"]  # false, the default
    assert tools["agent_check"]["outputSchema"]["properties"]["verdict"]["enum"] == [
        "pass",
        "fail",
    ]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_arguments_that_do_not_fit_are_refused_by_name(
    repo: Path, tmp_path: Path, transport: str
) -> None:
    before = git(repo, "rev-parse", "HEAD")

    async def call() -> None:
        async with serve(repo, "planner", server_env(tmp_path), transport=transport) as agent:
            cases: list[tuple[str, dict[str, Any], str]] = [
                ("agent_claim", {}, "task_id"),
                ("agent_claim", {"task_id": 5}, "task_id"),
                ("agent_inbox", {"mark_read": "maybe"}, "mark_read"),
                ("conversation_history", {"peer": "builder", "limit": "ten"}, "limit"),
                ("agent_complete", {"task_id": "t", "artifacts": ["a"]}, "artifacts"),
            ]
            for tool, arguments, field in cases:
                doc = await agent.call(tool, **arguments)
                assert doc["ok"] is False, (tool, doc)
                assert [(e["code"], e["field"]) for e in doc["errors"]] == [
                    ("invalid_value", field)
                ], (tool, doc)
                assert "validation error" not in agent.text
                assert "pydantic" not in agent.text
            # A call without `arguments` at all is read as one without any.
            bare = await agent.session.send_request(
                CallToolRequest(params=CallToolRequestParams(name="agent_claim")),
                CallToolResult,
            )
            assert bare.structured_content is not None
            errors = bare.structured_content["errors"]
            assert [(e["code"], e["field"]) for e in errors] == [("invalid_value", "task_id")]

    anyio.run(call)
    assert git(repo, "rev-parse", "HEAD") == before  # nothing written


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_unknown_tool_is_a_protocol_error(repo: Path, tmp_path: Path, transport: str) -> None:
    async def call() -> None:
        async with serve(repo, "planner", server_env(tmp_path), transport=transport) as agent:
            with pytest.raises(MCPError) as raised:
                await agent.session.call_tool("agent_teleport", {})
            assert raised.value.error.code == INVALID_PARAMS
            assert raised.value.error.message == "Unknown tool: agent_teleport"

    anyio.run(call)


@pytest.mark.parametrize("transport", TRANSPORTS)
# The SDK's client warns that logging/setLevel leaves the protocol in its 2026 revision; the
# 2025 revisions this server speaks have it.
@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
def test_the_utilities_any_server_answers(repo: Path, tmp_path: Path, transport: str) -> None:
    async def call() -> None:
        async with serve(repo, "planner", server_env(tmp_path), transport=transport) as agent:
            session = agent.session
            await session.send_ping()
            await session.set_logging_level("info")
            completed = await session.complete(
                PromptReference(type="ref/prompt", name="anything"), {"name": "a", "value": "b"}
            )
            assert completed.completion.values == []
            assert (await session.list_prompts()).prompts == []
            assert (await session.list_resources()).resources == []
            with pytest.raises(MCPError) as raised:
                await session.get_prompt("anything")
            assert raised.value.error.code == INVALID_PARAMS

    anyio.run(call)


def test_a_request_before_initialize_is_refused_on_both_transports(
    repo: Path, tmp_path: Path
) -> None:
    env = server_env(tmp_path)
    listing = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
    # stdio: an error answer, and the session can still begin.
    lines = [listing, INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines.append({**listing, "id": 8})
    # As a client does, stdin stays open until the last answer has come (a server may drop
    # what is in flight when its client hangs up).
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskfs", "mcp", "--agent", "planner"],
        cwd=repo,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
    proc.stdin.flush()
    answers: dict[Any, Any] = {}
    try:
        while 8 not in answers:
            line = proc.stdout.readline()
            if not line:
                break
            answer = json.loads(line)
            answers[answer.get("id")] = answer
    finally:
        proc.stdin.close()
        proc.wait(timeout=120)
        proc.stdout.close()
    assert answers[7]["error"]["code"] == -32600
    assert "initialize" in answers[7]["error"]["message"]
    assert "result" in answers[1]
    assert answers[8]["result"]["tools"]
    # HTTP: a request without the session `initialize` opens is 400 Bad Request.
    with server(["mcp", "--http", "--port", "0", "--agent", "planner"], repo, env) as served:
        answer = httpx.post(served.url, json=listing, headers=MCP_HEADERS, timeout=60)
        assert answer.status_code == 400
        assert answer.json()["error"]["code"] == -32600
        opened = httpx.post(served.url, json=INITIALIZE, headers=MCP_HEADERS, timeout=60)
        assert opened.status_code == 200


def test_with_tokens_only_the_served_agents_token_gets_in(repo: Path, tmp_path: Path) -> None:
    tokens = write_tokens(
        tmp_path / "operator" / "a2a.yaml",
        {"planner-token-0123456789": "planner", "builder-token-0123456789": "builder"},
    )
    env = {**server_env(tmp_path), "TASKFS_A2A_TOKENS": str(tokens)}
    args = ["mcp", "--http", "--port", "0", "--agent", "planner"]
    with server(args, repo, env) as served:

        def post(token: str | None, **headers: str) -> httpx.Response:
            sent = {**MCP_HEADERS, **headers}
            if token:
                sent["Authorization"] = f"Bearer {token}"
            return httpx.post(served.url, json=INITIALIZE, headers=sent, timeout=60)

        for token in (None, "builder-token-0123456789", "guessed-token-0123456789"):
            refused = post(token)
            assert refused.status_code == 401, token
            assert refused.headers["www-authenticate"] == "Bearer"
            errors = refused.json()["error"]["data"]["errors"]
            assert [e["code"] for e in errors] == ["token_invalid"]
        # Authenticated, a remote client may name the server as it knows it.
        assert post("planner-token-0123456789", Host="ledger.example.org").status_code == 200

        async def work() -> None:
            headers = {"Authorization": "Bearer planner-token-0123456789"}
            async with http_session(served.url, headers) as session:
                result = await session.call_tool("agent_inbox", {})
                assert result.structured_content is not None
                assert result.structured_content["agent"] == "planner"

        anyio.run(work)


def test_http_listens_on_loopback_only_without_tokens(repo: Path, tmp_path: Path) -> None:
    env = server_env(tmp_path)
    anywhere = taskfs_process("mcp", "--http", "--host", "0.0.0.0", cwd=repo, env=env)
    assert anywhere.code == 1
    assert anywhere.stdout == ""
    assert "error[bind_refused]" in anywhere.stderr
    inside = write_tokens(repo / "tokens.yaml", {"planner-token-0123456789": "planner"})
    unsafe = taskfs_process(
        "mcp", "--http", "--port", "0", cwd=repo, env={**env, "TASKFS_A2A_TOKENS": str(inside)}
    )
    assert unsafe.code == 1
    assert "error[tokens_unsafe]" in unsafe.stderr
    stdio = taskfs_process("mcp", "--port", "9999", cwd=repo, env=env)  # --http forgotten
    assert stdio.code == 2
    assert "error[usage]" in stdio.stderr
