"""An envelope with one YAML mistake, sent through MCP, is refused with `yaml_invalid` and
nothing is written (team day, item 1): `agent_send` kept it as a prose request, and interlink's
`send_message` without a task id kept it as a plain conversation message. Prose still goes."""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.helpers import git, taskfs
from tests.mcp.test_server import envelope, serve, server_env


def test_a_tabbed_envelope_is_refused_by_both_doors_and_prose_still_goes(
    repo: Path, tmp_path: Path
) -> None:
    env = server_env(tmp_path)
    text = envelope(id="t1").replace("\n  passFailCommand", "\n\tpassFailCommand")
    assert "\tpassFailCommand" in text

    async def work() -> None:
        async with serve(repo, "planner", env) as planner:
            head = git(repo, "rev-parse", "HEAD")
            assert await planner.refused("agent_send", envelope=text) == ["yaml_invalid"]
            assert await planner.refused("send_message", to="builder", text=text) == [
                "yaml_invalid"
            ]
            assert git(repo, "rev-parse", "HEAD") == head
            assert git(repo, "status", "--porcelain") == ""
            kept = await planner.ok(
                "agent_send", envelope="Fix the parser: it chokes on tabs: badly."
            )
            assert kept["state"] == "intake"
            said = await planner.ok("send_message", to="builder", text="Lunch: at noon?")
            assert said["msg_id"]

    anyio.run(work)
    assert taskfs("show", "t1", "--json").codes == ["task_not_found"]
