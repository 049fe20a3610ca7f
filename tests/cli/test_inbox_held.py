"""The JSON inbox and MCP's agent_inbox say what the agent holds and what an offered task a claim
would refuse waits for, as the text inbox's first rows do (team day 2: an MCP agent that started
again found its working task nowhere in agent_inbox, whose description says "tasks you hold",
and a task offered to it said only `ready: false`)."""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.helpers import submit, taskfs
from tests.mcp.test_server import serve, server_env


def _held_and_waiting(repo: Path) -> tuple[str, str]:
    first = submit(repo, to="builder", filesAndInterfaces=["src/first/**"])
    assert taskfs("claim", first, "--agent", "builder").code == 0
    second = submit(repo, to="builder", dependsOn=[first], filesAndInterfaces=["src/second/**"])
    return first, second


def test_the_json_inbox_names_the_tasks_held_and_what_a_waiting_one_waits_for(
    repo: Path,
) -> None:
    first, second = _held_and_waiting(repo)
    box = taskfs("inbox", "--agent", "builder", "--json").json
    assert [(t["id"], t["state"]) for t in box["held"]] == [(first, "working")]
    assert box["counts"]["held"] == 1
    offered = {t["id"]: t for t in box["toClaim"]}
    assert offered[second]["ready"] is False
    assert [b["id"] for b in offered[second]["blockedBy"]] == [first]
    assert taskfs("inbox", "--agent", "planner", "--json").json["held"] == []


def test_agent_inbox_names_the_tasks_held(repo: Path, tmp_path: Path) -> None:
    first, second = _held_and_waiting(repo)

    async def walk() -> None:
        async with serve(repo, "builder", server_env(tmp_path)) as builder:
            box = await builder.call("agent_inbox")
            assert [t["id"] for t in box["held"]] == [first]
            offered = {t["id"]: t for t in box["toClaim"]}
            assert [b["id"] for b in offered[second]["blockedBy"]] == [first]

    anyio.run(walk)
