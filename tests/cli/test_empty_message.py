"""A message that says nothing (empty, or only white space) is refused as `message_empty` and
nothing is written, whichever door it comes through: a blank message committed to the ledger
is noise every reader of the task's history pays for, and a blank `needs_input` would move
the task to wait on a question nobody asked."""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.helpers import git, submit, taskfs
from tests.mcp.test_server import serve, server_env

BLANK = ["", "   ", "\n\t "]


def _working(repo: Path) -> str:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    return task


def test_send_refuses_a_blank_message(repo: Path) -> None:
    task = _working(repo)
    before = git(repo, "rev-parse", "HEAD")
    for text in BLANK:
        for status in ([], ["--status", "update"], ["--status", "needs_input"]):
            result = taskfs("send", task, "--agent", "builder", *status, text, "--json")
            assert (result.code, result.codes) == (1, ["message_empty"]), (text, status)
            plain = taskfs("send", task, "--agent", "builder", *status, text)
            assert plain.code == 1
            assert "error[message_empty]" in plain.stderr
    assert git(repo, "rev-parse", "HEAD") == before
    assert git(repo, "status", "--porcelain") == ""
    assert taskfs("show", task, "--json").json["state"] == "working"
    # Words are still words.
    assert taskfs("send", task, "--agent", "builder", " done ").code == 0


def test_mcp_message_tools_refuse_a_blank_message(repo: Path, tmp_path: Path) -> None:
    task = _working(repo)
    before = git(repo, "rev-parse", "HEAD")

    async def call() -> None:
        async with serve(repo, "builder", server_env(tmp_path)) as agent:
            for text in BLANK:
                for tool in ("agent_update", "agent_ask", "send_message"):
                    arguments = {"task_id": task, "text": text}
                    if tool == "send_message":
                        arguments["to"] = "planner"
                    codes = await agent.refused(tool, **arguments)
                    assert codes == ["message_empty"], (tool, text, codes)

    anyio.run(call)
    assert git(repo, "rev-parse", "HEAD") == before
    assert taskfs("show", task, "--json").json["state"] == "working"
