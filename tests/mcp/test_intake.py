"""A planner delegates in conversation over MCP (contract section 12): prose through
`agent_send` is kept as a request; the worker sees it in its inbox and proposes an envelope;
the planner accepts it, and the worker claims the task. Two real `taskfs mcp` processes, driven
by the MCP SDK's own client, tools only."""

from __future__ import annotations

from pathlib import Path

import anyio

from taskfs.core import yamlio
from tests.helpers import ENVELOPE, taskfs
from tests.mcp.test_server import serve, server_env


def test_prose_becomes_a_task_through_a_proposal_the_planner_accepts(
    repo: Path, tmp_path: Path
) -> None:
    env = server_env(tmp_path)
    proposal = yamlio.dump({k: v for k, v in ENVELOPE.items() if k not in ("from", "to")})

    async def work() -> None:
        async with serve(repo, "planner", env) as planner, serve(repo, "builder", env) as builder:
            kept = await planner.ok(
                "agent_send", envelope="to: builder\nobjective: empty passwords get in"
            )
            task = kept["id"]
            assert kept["state"] == "intake"
            assert kept["from"] == "planner"
            assert kept["to"] == "builder"
            assert "outputFormat" in kept["missing"]
            assert f"task_id={task}" in kept["next"]
            box = await builder.ok("agent_inbox")
            assert [r["id"] for r in box["requests"]] == [task]
            assert await builder.refused("agent_claim", task_id=task) == ["intake_open"]
            assert await planner.refused("agent_propose", task_id=task, envelope=proposal) == [
                "agent_not_allowed"
            ]
            proposed = await builder.ok("agent_propose", task_id=task, envelope=proposal)
            assert proposed["proposal"]
            assert (await builder.ok("agent_status", task_id=task))["state"] == "intake"
            mine = await planner.ok("agent_inbox")
            # The requester is told to accept what it read, by its id (no list of what the
            # proposal already has).
            assert mine["requested"][0]["next"] == (
                f"agent_accept(task_id={task!r}, proposal={proposed['proposalId']!r})"
            )
            assert "missing" not in mine["requested"][0]
            assert mine["requested"][0]["proposal"]
            read = mine["requested"][0]["proposalId"]
            assert read == proposed["proposalId"]
            # The worker swaps the words after the planner read them: the words read are not
            # the ones waiting, so naming them accepts nothing (issue 35).
            wider = yamlio.dump({**yamlio.load(proposal.encode()), "filesAndInterfaces": ["**"]})
            swapped = await builder.ok("agent_propose", task_id=task, envelope=wider)
            assert await planner.refused("agent_accept", task_id=task, proposal=read) == [
                "proposal_superseded"
            ]
            assert await planner.refused("agent_accept", task_id=task) == ["proposal_superseded"]
            accepted = await planner.ok(
                "agent_accept", task_id=task, proposal=swapped["proposalDigest"]
            )
            assert accepted["state"] == "submitted"
            assert accepted["accepted"] == swapped["proposalId"]
            assert accepted["envelope"]["filesAndInterfaces"] == ["**"]
            claimed = await builder.ok("agent_claim", task_id=task)
            assert claimed["state"] == "working"

    anyio.run(work)
    listed = taskfs("ls", "--json").json["tasks"]
    assert [(t["state"], t["from"], t["to"]) for t in listed] == [("working", "planner", "builder")]
    assert taskfs("audit").code == 0


def test_each_side_of_a_proposal_is_told_its_own_next_tool(repo: Path, tmp_path: Path) -> None:
    """Issue 38, item 8: the proposer was told to complete the request with agent_send (which
    is refused: it is the requester's), the refusal named a command line, and the requester's
    inbox listed every field as missing beside a whole proposal, without agent_accept."""
    env = server_env(tmp_path)
    proposal = yamlio.dump({k: v for k, v in ENVELOPE.items() if k not in ("from", "to")})

    async def work() -> None:
        async with serve(repo, "planner", env) as planner, serve(repo, "builder", env) as builder:
            task = (await planner.ok("agent_send", envelope="to: builder\nobjective: fix it"))["id"]
            proposed = await builder.ok("agent_propose", task_id=task, envelope=proposal)
            assert "agent_send" not in proposed["next"]
            accept = f"agent_accept(task_id={task!r}, proposal={proposed['proposalId']!r})"
            assert accept in proposed["next"]
            # agent_send on someone else's request: refused, and the way out is a tool.
            refused = await builder.call("agent_send", task_id=task, envelope=proposal)
            (error,) = refused["errors"]
            assert error["code"] == "agent_not_allowed"
            assert error["tool"] == "agent_propose"
            assert "taskfs " not in error["message"]
            # The requester is told to accept, and nothing is listed as missing.
            (mine,) = (await planner.ok("agent_inbox"))["requested"]
            assert mine["next"] == accept
            assert mine["proposal"] == proposal  # the words the acceptance makes its own
            assert "missing" not in mine
            status = await planner.ok("agent_status", task_id=task)
            assert accept in status["next"]
            assert (await planner.ok("agent_accept", task_id=task))["state"] == "submitted"

    anyio.run(work)
