"""An agent that has only the MCP tools, in a clone, exchanges the ledger with `agent_sync`
(the team day: MCP had no sync tool and `prime --mcp` never named one, so an MCP agent in a
clone could neither publish its acts nor see anyone else's). Driven through the MCP SDK's own
client against real `taskfs mcp` processes in clones of one bare remote."""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.helpers import git, taskfs
from tests.mcp.test_server import envelope, serve, server_env
from tests.remotes import clone, make_remote


def test_agent_sync_carries_a_task_and_its_claim_between_clones(tmp_path: Path) -> None:
    remote = make_remote(tmp_path)
    planner_clone = clone(str(remote), tmp_path / "planner")
    builder_clone = clone(str(remote), tmp_path / "builder")
    env = server_env(tmp_path)

    async def walk() -> None:
        async with (
            serve(planner_clone, "planner", env) as planner,
            serve(builder_clone, "builder", env) as builder,
        ):
            listed = {t.name: t for t in (await planner.session.list_tools()).tools}
            hints = listed["agent_sync"].annotations
            assert hints is not None
            # It reaches the remote (open world) and may undo an unpublished act that lost to a
            # published one (destructive); a second call right after changes nothing more.
            assert (hints.open_world_hint, hints.destructive_hint) == (True, True)
            assert hints.idempotent_hint is True

            await planner.ok("agent_send", envelope=envelope(id="login"))
            pushed = await planner.ok("agent_sync")
            assert pushed["pushed"] == git(planner_clone, "rev-parse", "HEAD")
            assert (pushed["remote"], pushed["branch"]) == ("origin", "main")
            assert (await builder.ok("agent_inbox"))["toClaim"] == []
            fetched = await builder.ok("agent_sync")
            assert fetched["integration"] == "fast-forward"
            assert [t["id"] for t in (await builder.ok("agent_inbox"))["toClaim"]] == ["login"]
            await builder.ok("agent_claim", task_id="login")
            await builder.ok("agent_sync")
            await planner.ok("agent_sync")
            status = await planner.ok("agent_status", task_id="login")
            assert (status["state"], status["holder"]) == ("working", "builder")
            # The same document as `taskfs sync --json`.
            again = await planner.ok("agent_sync")
            cli = taskfs("sync", "--json", cwd=planner_clone).json
            assert set(again) == set(cli)
            assert (again["integration"], again["pushed"]) == ("none", None)
            # A remote that is not there is refused by name, and nothing changes.
            head = git(planner_clone, "rev-parse", "HEAD")
            assert await planner.refused("agent_sync", remote="nowhere") == ["sync_no_upstream"]
            assert git(planner_clone, "rev-parse", "HEAD") == head

    anyio.run(walk)


def test_agent_sync_without_a_remote_is_refused_by_name(repo: Path, tmp_path: Path) -> None:
    async def walk() -> None:
        async with serve(repo, "builder", server_env(tmp_path)) as builder:
            assert await builder.refused("agent_sync") == ["sync_no_upstream"]

    anyio.run(walk)


def test_prime_names_sync_where_the_checkout_has_a_remote(repo: Path, tmp_path: Path) -> None:
    for args, step in ((("--mcp",), "agent_sync"), ((), "taskfs sync")):
        alone = taskfs("--lang", "en", "prime", "--agent", "builder", *args)
        assert alone.code == 0, alone.stdout
        assert step not in alone.stdout
    # A remote added by hand: HEAD did not move, and prime says so all the same.
    remote = make_remote(tmp_path)
    git(repo, "remote", "add", "origin", str(remote))
    for args, step in ((("--mcp",), "agent_sync"), ((), "taskfs sync")):
        shared = taskfs("--lang", "en", "prime", "--agent", "builder", *args)
        assert step in shared.stdout, shared.stdout
    # In a clone, the MCP prime names no command, only tools.
    cloned = clone(str(remote), tmp_path / "clone")
    text = taskfs("--lang", "en", "prime", "--agent", "builder", "--mcp", cwd=cloned).stdout
    assert "agent_sync" in text
    assert "taskfs " not in text.replace("# taskfs", "")
