"""Every MCP tool that takes a task id refuses a malformed one as `invalid_task_id` (contract
section 1), naming the argument, before anything is looked up, as the command line does
(tests/cli/test_task_id_arguments.py). Through the SDK's client against `taskfs mcp`."""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.helpers import git
from tests.mcp.test_server import serve, server_env

MALFORMED = ["../etc", "Div-Zero", "..", "-x", "a/b", "a" * 65]


def test_every_tool_taking_a_task_id_refuses_a_malformed_one(repo: Path, tmp_path: Path) -> None:
    before = git(repo, "rev-parse", "HEAD")

    async def call() -> None:
        async with serve(repo, "bob", server_env(tmp_path)) as agent:
            listed = (await agent.session.list_tools()).tools
            taking = sorted(t.name for t in listed if "task_id" in t.input_schema["properties"])
            assert {"agent_claim", "agent_update", "agent_send", "send_message"} <= set(taking)
            for tool in taking:
                for bad in MALFORMED:
                    doc = await agent.call(tool, task_id=bad)
                    assert doc["ok"] is False, (tool, bad, doc)
                    named = [(e["code"], e.get("field")) for e in doc["errors"]]
                    # Other required arguments left out are named too; the id by its code.
                    assert ("invalid_task_id", "task_id") in named, (tool, bad, named)
                    assert ("invalid_value", "task_id") not in named, (tool, bad, named)
            # A well-formed id that names no task is still not found.
            assert await agent.refused("agent_claim", task_id="div-zero") == ["task_not_found"]

    anyio.run(call)
    assert git(repo, "rev-parse", "HEAD") == before  # nothing written
