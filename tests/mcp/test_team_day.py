"""A team's working day over MCP alone (issues 29 and 38): the planner and both workers use
only the tools `taskfs mcp` lists, through the SDK's stdio client; the test's own hands only
write and commit the workers' files, as an agent's shell would.

The same plan as tests/cli/test_team_day.py: one worker dies mid-task and its task is handed
on (`agent_reassign`), another task fails (`agent_check` says why) and is retried
(`agent_retry`), and the package depending on both is completed without being sent again. The
planner learns of the refusal, the failure and the quiet worker from `agent_inbox` alone. The
planner finds its core tasks by label, amends a contract before anyone claims it and one a
worker holds (`agent_amend`), a worker files a follow-up (`agent_discover`), and the inbox
offers the most urgent first.

What the day costs a model is counted as it goes: every call's arguments and answer text, in
characters (tokens are about a quarter of that). The inbox, read most often, is held to at
most a quarter of it (issue 38: it was 41% of a team's tokens); docs/mcp.md records the day's
total.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from taskfs.core import yamlio
from tests.cli.test_team_day import commit, plan, quiet_soon, write_module, write_package
from tests.helpers import git, taskfs
from tests.mcp.test_server import serve, server_env


def envelopes(tmp_path: Path) -> list[str]:
    return [Path(p).read_text() for p in plan(tmp_path / "plan")]


def test_a_team_day_over_the_mcp_tools_alone(repo: Path, tmp_path: Path) -> None:
    quiet_soon(repo)
    env = server_env(tmp_path)

    async def day() -> None:
        async with (
            serve(repo, "planner", env) as planner,
            serve(repo, "w1", env) as w1,
            serve(repo, "w2", env) as w2,
        ):
            for text in envelopes(tmp_path):
                sent = await planner.ok("agent_send", envelope=text)
                assert sent["state"] == "submitted"
                assert sent["warnings"] == []  # as `new --json`: the lint's warnings, none
            # A dependency on a task that does not exist is warned of, as `new` does.
            odd = yamlio.load(envelopes(tmp_path / "x")[4].encode())
            odd = {**odd, "id": "t-odd", "dependsOn": ["t-nope"], "filesAndInterfaces": ["o/*"]}
            warned = await planner.ok("agent_send", envelope=yamlio.dump(odd))
            assert [w["code"] for w in warned["warnings"]] == ["dependency_unknown"]
            await planner.ok("agent_cancel", task_id="t-odd", reason="a slip")

            inbox = await w1.ok("agent_inbox")
            offered = {t["id"]: t for t in inbox["toClaim"]}
            assert offered["t-add"]["objective"].startswith("Write calc/add.py")
            # The most urgent first: the docs (priority 0) before the add (none said: 2).
            assert [t["id"] for t in inbox["toClaim"]] == ["t-docs", "t-add"]
            # The planner finds its core tasks by their label.
            core = await planner.ok("agent_tasks", label="core")
            assert [t["id"] for t in core["tasks"]] == ["t-add", "t-sub", "t-mul", "t-api"]
            # Nobody has claimed the docs: the planner amends them, in force at once.
            docs = yamlio.load(envelopes(tmp_path / "d")[4].encode())
            docs["objective"] = "Describe add and sub in docs/calc.md, with one example each."
            amended = await planner.ok(
                "agent_amend", task_id="t-docs", envelope=yamlio.dump(docs), reason="narrower"
            )
            assert (amended["inForce"], amended["changed"]) == (True, ["objective"])
            # A note on a task one has not claimed is a message, not an attempted claim.
            await w1.ok("agent_update", task_id="t-docs", text="I will take this after t-api")
            assert (await w1.ok("agent_status", task_id="t-docs"))["state"] == "submitted"
            # w1 claims t-add and dies.
            await w1.ok("agent_claim", task_id="t-add")
            write_module(repo, "add", "a + b")

            await w2.ok("agent_claim", task_id="t-sub")
            asked = await w2.ok("agent_ask", task_id="t-sub", text="5 - 3 or 3 - 5?")
            # The one who asked cannot answer its own question: refused, nothing recorded.
            own = await w2.refused(
                "agent_answer", task_id="t-sub", in_reply_to=asked["msg_id"], text="5 - 3"
            )
            assert own == ["message_misaddressed"]
            await planner.ok(
                "agent_answer", task_id="t-sub", in_reply_to=asked["msg_id"], text="5 - 3"
            )
            # ... and an answer to a question no longer open is refused too.
            again = await planner.refused(
                "agent_answer", task_id="t-sub", in_reply_to=asked["msg_id"], text="5 - 3!"
            )
            assert again == ["transition_not_allowed"]
            write_module(repo, "sub", "b - a")
            commit(repo, "sub, wrongly")
            # w2 finds more to do: a follow-up, to the planner, linked to its task.
            found = await w2.ok(
                "agent_discover", task_id="t-sub", text="sub() should refuse strings too."
            )
            assert (found["to"], found["discoveredFrom"]) == ("planner", "t-sub")
            checked = await w2.call("agent_check", task_id="t-sub", text="sub is there")
            assert (checked["ok"], checked["verdict"], checked["workTree"]) == (
                False,
                "fail",
                "clean",
            )
            assert "assert -2 == 2" in checked["output"]["stdout"]
            history = await w2.ok("agent_history", task_id="t-sub")
            assert "assert -2 == 2" in history["evidence"][-1]["output"]["stdout"]
            await w2.ok("agent_fail", task_id="t-sub", reason="cannot get the sign right")
            await w2.ok("agent_refuse", task_id="t-mul", reason="not my area")

            # The planner learns all of it from its inbox.
            inbox = await planner.ok("agent_inbox")
            assert [(r["id"], r["from"]) for r in inbox["requests"]] == [(found["id"], "w2")]
            assert {t["id"]: (t["endedBy"], t["reason"]) for t in inbox["ended"]} == {
                "t-sub": ("w2", "cannot get the sign right"),
                "t-mul": ("w2", "not my area"),
            }
            assert [(t["id"], t["holder"]) for t in inbox["quiet"]] == [("t-add", "w1")]
            tasks = {t["id"]: t for t in (await planner.ok("agent_tasks"))["tasks"]}
            assert tasks["t-add"]["quiet"] is True
            assert tasks["t-sub"]["endedBy"] == "w2"

            handed = await planner.ok("agent_reassign", task_id="t-add", to="w2", reason="w1 died")
            assert (handed["newId"], handed["state"]) == ("t-add-r1", "canceled")
            retried = await planner.ok("agent_retry", task_id="t-sub")
            assert (retried["newId"], retried["to"]) == ("t-sub-r1", "w2")
            refusal = await planner.call("agent_retry", task_id="t-sub")
            assert refusal["errors"][0]["code"] == "transition_not_allowed"
            assert "taskfs " not in refusal["errors"][0]["message"]  # tools, not commands
            assert [t["id"] for t in (await planner.ok("agent_inbox"))["ended"]] == ["t-mul"]

            async def finish(task: str) -> None:
                await w2.ok("agent_claim", task_id=task)
                if task == "t-sub-r1":
                    write_module(repo, "sub", "a - b")
                if task == "t-api":
                    # The planner tightens the package after the claim: w2 accepts it first.
                    api = yamlio.load(envelopes(tmp_path / "a")[3].encode())
                    api["boundaries"] = "Touch only your files; export nothing but add and sub."
                    proposed = await planner.ok(
                        "agent_amend", task_id=task, envelope=yamlio.dump(api)
                    )
                    assert proposed["inForce"] is False
                    box = await w2.ok("agent_inbox")
                    assert [a["task_id"] for a in box["amendments"]] == [task]
                    taken = await w2.ok("agent_amend", task_id=task, accept=True)
                    assert taken["inForce"] is True
                    write_package(repo)
                commit(repo, task)
                done = await w2.ok("agent_check", task_id=task, text="done")
                assert (done["verdict"], done["workTree"]) == ("pass", "clean")
                assert (await w2.ok("agent_complete", task_id=task))["state"] == "completed"

            await finish("t-add-r1")
            waiting: dict[str, Any] = {t["id"]: t for t in (await w2.ok("agent_inbox"))["toClaim"]}
            assert waiting["t-api"]["ready"] is False
            await finish("t-sub-r1")
            waiting = {t["id"]: t for t in (await w2.ok("agent_inbox"))["toClaim"]}
            assert waiting["t-api"]["ready"] is True  # never sent again
            await finish("t-api")
            assert (await planner.ok("agent_status", task_id="t-api"))["state"] == "completed"
            traffic = [call for agent in (planner, w1, w2) for call in agent.traffic]
            total = sum(n for _tool, n in traffic)
            inbox = sum(n for tool, n in traffic if tool == "agent_inbox")
            # docs/mcp.md records these figures.
            print(
                f"the day over MCP: {len(traffic)} calls, {total} characters (about "
                f"{total // 4} tokens), agent_inbox {inbox * 100 // total}%"
            )
            assert inbox * 4 <= total, (inbox, total)

    anyio.run(day)
    assert git(repo, "status", "--porcelain", "--", "tasks") == ""
    assert taskfs("audit", "--json").json["ok"] is True
