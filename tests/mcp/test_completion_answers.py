"""What `agent_check` and `agent_complete` say beside their answer, through the MCP SDK's own
client against a real `taskfs mcp` (the team day's frictions): the warnings the command line
gives (an amendment waiting, then lapsed; no commit since the claim touched the owned files),
each naming the tool that acts on it; and a completion repeated the same way answered as done,
as `idempotentHint` promises."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from tests.helpers import git
from tests.mcp.test_server import envelope, serve, server_env


def _commit_work(repo: Path) -> None:
    path = repo / "src" / "auth" / "login.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("def login(p):\n    return bool(p)\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "the work")


def _warned(doc: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(w["code"], w.get("tool")) for w in doc["warnings"]]


def test_check_and_complete_warn_and_a_repeated_completion_is_done(
    repo: Path, tmp_path: Path
) -> None:
    env = server_env(tmp_path)

    async def walk() -> None:
        async with (
            serve(repo, "planner", env) as planner,
            serve(repo, "builder", env) as builder,
        ):
            listed = {t.name: t for t in (await builder.session.list_tools()).tools}
            hints = listed["agent_complete"].annotations
            assert hints is not None
            assert hints.idempotent_hint is True

            await planner.ok("agent_send", envelope=envelope(id="login"))
            await builder.ok("agent_claim", task_id="login")
            amended = envelope(id="login", boundaries="Do not touch the schema, nor the docs.")
            sent = await planner.ok("agent_amend", task_id="login", envelope=amended)
            assert sent["inForce"] is False
            _commit_work(repo)
            checked = await builder.ok("agent_check", task_id="login", text="done")
            assert checked["verdict"] == "pass"
            # Accepting it is a tool call: the warning names the tool that does it.
            assert _warned(checked) == [("amendment_pending", "agent_amend")]
            assert checked["warnings"][0]["file"] == sent["file"].rsplit("/", 1)[-1]
            done = await builder.ok("agent_complete", task_id="login")
            assert done["state"] == "completed"
            assert _warned(done) == [("amendment_lapsed", "agent_update")]

            # The same call again (an answer lost on the way, say): done, nothing new.
            head = git(repo, "rev-parse", "HEAD")
            again = await builder.ok("agent_complete", task_id="login")
            assert (again["state"], again["already"]) == ("completed", True)
            assert again["commit"] == done["commit"]
            assert git(repo, "rev-parse", "HEAD") == head
            # Another call (other artifacts) is still refused.
            other = {"fix": "src/auth/login.py"}
            assert await builder.refused("agent_complete", task_id="login", artifacts=other) == [
                "transition_not_allowed"
            ]

            # A task whose check passes on files nobody touched since the claim.
            await planner.ok("agent_send", envelope=envelope(id="again"))
            await builder.ok("agent_claim", task_id="again")
            await builder.ok("agent_check", task_id="again", text="nothing to do")
            untouched = await builder.ok("agent_complete", task_id="again")
            assert _warned(untouched) == [("owned_files_untouched", "agent_update")]
            assert untouched["warnings"][0]["owned"] == ["src/auth/login.py", "tests/test_login.py"]

    anyio.run(walk)
