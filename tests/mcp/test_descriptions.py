"""The tools as a model meets them: from `tools/list` alone, without the README.

A model reads the descriptions and schemas, builds its calls from them, and reads a refusal for
the tool to call next. These tests do the same, through the MCP SDK's client against a real
`taskfs mcp` process, and count what the list costs in cl100k tokens (`bpe-openai` ships the
vocabulary; `tiktoken` would have to download it).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import bpe_openai
from mcp.types import Tool

from taskfs.core import yamlio
from tests.helpers import git
from tests.mcp.test_server import Agent, serve, server_env

# cl100k tokens for every tool the server lists: 3,000 for 19 tools in issue 18; issue 26 made
# each tool declare its hints and answer (capped on its own by DECLARED a tool) and added two
# tools (agent_propose, agent_accept), issue 29 three (agent_tasks, agent_reassign,
# agent_retry): 24 tools at about 155 tokens each. Issue 37 made each answer's schema admit the
# tool's refusal too (`anyOf` its keys or `errors`), about 16 tokens a tool: clients that check
# structured content against it (the TypeScript SDK's) threw every refusal away before. Issue
# 38 added two tools (agent_discover, agent_amend), the inbox's `full`, the label filters and
# priority in agent_send's description: 26 tools at about 170 tokens each. The team day added
# agent_sync (143 tokens: an MCP agent in a clone had no way to exchange the ledger).
BUDGET = 4_750
DECLARED = 62
INTERLINK_TOOLS = {
    "send_message",
    "cancel_task",
    "message_status",
    "conversation_history",
    "list_pending",
}


def listed(tool: Tool) -> dict[str, Any]:
    return tool.model_dump(by_alias=True, exclude_none=True, mode="json")


async def tools_of(agent: Agent) -> dict[str, Tool]:
    return {t.name: t for t in (await agent.session.list_tools()).tools}


def required_keys(description: str) -> list[str]:
    """The envelope keys a model would read off agent_send's description."""
    found = re.search(r"required keys: (.+?)\. ", description)
    assert found, description
    keys = []
    for part in found.group(1).split(","):
        key = part.strip().split(" ")[0]
        if key:
            keys.append(key)
    return keys


def value_for(key: str) -> Any:
    """What a model would fill in for a key, by the key's shape as the description gives it."""
    if key == "filesAndInterfaces":
        return ["src/app/**"]
    if key == "acceptanceCheck.passFailCommand":
        return "test -f src/app/main.py"
    return f"A plain sentence for {key}, long enough to say what is meant here."


def envelope_from(keys: list[str], to: str) -> str:
    doc: dict[str, Any] = {"to": to}
    for key in keys:
        head, _, tail = key.partition(".")
        if tail:
            doc.setdefault(head, {})[tail] = value_for(key)
        else:
            doc[key] = value_for(key)
    return yamlio.dump(doc)


def test_the_tools_fit_the_budget_without_schema_noise(repo: Path, tmp_path: Path) -> None:
    async def look() -> None:
        async with serve(repo, "planner", server_env(tmp_path)) as planner:
            tools = await tools_of(planner)
        assert {n for n in tools if n.startswith("agent_")} >= {"agent_send", "agent_check"}
        assert set(tools) >= INTERLINK_TOOLS
        encoding = bpe_openai.get_encoding("cl100k_base")

        def tokens(*leave_out: str) -> int:
            return sum(
                len(
                    encoding.encode(
                        json.dumps({k: v for k, v in listed(t).items() if k not in leave_out})
                    )
                )
                for t in tools.values()
            )

        cost = tokens()
        assert 0 < cost <= BUDGET, cost
        # What each tool declares besides its arguments (hints, the shape of its answer) is
        # signal, kept small: 21 tools cost 2,308 tokens without them, 3,255 with them; 24
        # tools 2,621 without, 4,075 with (the refusal's branch in each answer's schema).
        declared = cost - tokens("annotations", "outputSchema")
        assert 0 < declared <= DECLARED * len(tools), declared
        for name, tool in tools.items():
            schema = tool.input_schema
            assert "title" not in schema, name
            for param, prop in schema.get("properties", {}).items():
                assert "title" not in prop, (name, param)
                assert {"type": "null"} not in prop.get("anyOf", []), (name, param)
                assert prop.get("description"), (name, param)
        # interlink types `status` as any text (`Option<String>`), named when unknown: its
        # description names the five it knows.
        status = tools["send_message"].input_schema["properties"]["status"]
        assert status["type"] == ["string", "null"]
        assert all(s in status["description"] for s in ("update", "needs_input", "result"))
        complete = tools["agent_complete"].input_schema["properties"]
        assert "artifacts" in complete
        # What checks and what completes is said in the tool that does it.
        check = tools["agent_check"].description or ""
        assert "acceptance" in check
        assert "result" in check
        assert "agent_complete" in check
        assert "agent_check" in (tools["agent_complete"].description or "")

    anyio.run(look)


def test_a_model_works_from_the_tool_list_alone(repo: Path, tmp_path: Path) -> None:
    env = server_env(tmp_path)

    async def work() -> None:
        async with serve(repo, "planner", env) as planner, serve(repo, "builder", env) as builder:
            tools = await tools_of(planner)
            names = set(tools)
            keys = required_keys(tools["agent_send"].description or "")
            assert len(keys) == 8, keys

            async def refusal_names_a_fix(agent: Agent, tool: str, **args: Any) -> set[str]:
                doc = await agent.call(tool, **args)
                assert doc["ok"] is False, doc
                fixes = set()
                for error in doc["errors"]:
                    named = set(re.findall(r"\b[a-z_]+\b", error["message"])) & names
                    named |= {error["tool"]} & names if "tool" in error else set()
                    assert named, error  # each refusal names a tool that fixes it
                    assert "taskfs " not in error["message"], error  # and no CLI command
                    fixes |= named
                return fixes

            # Each required key left out keeps the envelope as a request (contract section
            # 12) that names the key and agent_send, with its id, to complete it.
            for missing in keys:
                text = envelope_from([k for k in keys if k != missing], "builder")
                kept = await planner.ok("agent_send", envelope=text)
                assert kept["state"] == "intake", kept
                assert kept["missing"] == [missing], kept
                assert "agent_send" in kept["next"], kept
                assert kept["id"] in kept["next"], kept
                assert "taskfs " not in kept["next"], kept
            # Completing the last one with what it lacks submits it under the same id.
            rest = envelope_from(keys, "builder")
            sent = await planner.ok("agent_send", envelope=rest, task_id=kept["id"])
            assert sent == {**sent, "id": kept["id"], "state": "submitted"}, sent
            task = sent["id"]

            assert "agent_inbox" in await refusal_names_a_fix(
                builder, "agent_claim", task_id=task.upper()
            )
            await builder.ok("agent_claim", task_id=task)
            # Completing before checking names agent_check; following it fixes the refusal.
            fixes = await refusal_names_a_fix(builder, "agent_complete", task_id=task)
            assert "agent_check" in fixes
            (repo / "src" / "app").mkdir(parents=True)
            (repo / "src" / "app" / "main.py").write_text("print('hi')\n")
            checked = await builder.ok("agent_check", task_id=task, text="main.py is there")
            assert checked["verdict"] == "pass"
            # Passing on work not committed completes nothing: the refusal says to commit, then
            # to check again with agent_check.
            assert "agent_check" in await refusal_names_a_fix(
                builder, "agent_complete", task_id=task
            )
            git(repo, "add", "src/app/main.py")
            git(repo, "commit", "-q", "-m", "the work")
            checked = await builder.ok("agent_check", task_id=task, text="main.py is committed")
            assert checked["verdict"] == "pass"
            done = await builder.ok(
                "agent_complete", task_id=task, artifacts={"main": "src/app/main.py"}
            )
            assert done["state"] == "completed"
            # A terminal task: the refusal names where to look.
            assert await refusal_names_a_fix(builder, "agent_fail", task_id=task, reason="x")
            assert await refusal_names_a_fix(
                builder, "agent_answer", task_id=task, in_reply_to="nope", text="x"
            )

    anyio.run(work)
