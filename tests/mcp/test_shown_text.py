"""What a model reads of a hostile peer's text through `taskfs mcp` (issue 28, item 4): the
text content of every tool result has terminal control characters and bidirectional overrides
escaped, for the agent_* tools (their JSON, which still parses to the structured content
exactly) and interlink's one-line answers alike."""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.cli.test_shown_text import HOSTILE, assert_safe, strings
from tests.helpers import send, submit, taskfs
from tests.mcp.test_server import serve, server_env


def test_tool_results_show_a_hostile_peers_text_escaped(repo: Path, tmp_path: Path) -> None:
    task = submit(repo, objective=f"Fix the login bug. {HOSTILE}")
    assert taskfs("claim", task, "--agent", "builder").code == 0
    send(task, "planner", "builder", HOSTILE)
    env = server_env(tmp_path)

    async def read() -> None:
        async with serve(repo, "builder", env) as builder:
            calls = {
                "agent_inbox": {},
                "agent_history": {"task_id": task},
                "agent_status": {"task_id": task},
                "conversation_history": {"peer": "planner"},
                "list_pending": {},
            }
            for tool, arguments in calls.items():
                doc = await builder.ok(tool, **arguments)
                assert_safe(builder.text)
                if tool in ("agent_inbox", "agent_history", "conversation_history"):
                    # The document is the text as stored; only what is shown is escaped.
                    assert any(HOSTILE in s for s in strings(doc)), tool

    anyio.run(read)
