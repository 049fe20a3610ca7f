"""Finding tasks (issue 38, items 1 and 4): `--label` on `ls`, `ready`, `sent`, the board and
the MCP tools, and `ls --grep TEXT` (the objective, a request's words, the messages' text), the
same on the path that skips click (the read model's stored rows) and through click."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import anyio

from tests.helpers import git, send, submit, taskfs, taskfs_process
from tests.mcp.test_server import serve, server_env
from tests.test_startup import _click


def plan(repo: Path) -> None:
    submit(repo, id="t-ui", filesAndInterfaces=["ui/**"], labels=["ui", "bug"], priority=1)
    submit(repo, id="t-api", filesAndInterfaces=["api/**"], labels=["api", "bug"])
    submit(repo, id="t-doc", filesAndInterfaces=["docs/**"], labels=["docs"],
           objective="Describe the Überblick page for new users in plain words.")  # fmt: skip
    opened = taskfs("intake", "open", "Make the export button work offline", "--agent",
                    "alice", "--to", "builder", "--id", "r-export")  # fmt: skip
    assert opened.code == 0, opened.stderr
    assert taskfs("claim", "t-api", "--agent", "builder").code == 0
    send("t-api", "builder", "planner", "The rate limiter drops every third request")


def ids(*args: str, fresh: Path | None = None, oracle: Path | None = None) -> list[str]:
    if oracle is not None:
        result: Any = _click(oracle, [*args, "--json"])
    elif fresh is not None:
        result = taskfs_process(*args, "--json", cwd=fresh)
    else:
        result = taskfs(*args, "--json")
    assert result.code == 0, result.stdout + result.stderr
    return [t["id"] for t in result.json["tasks"]]


CASES: list[tuple[list[str], list[str]]] = [
    (["ls", "--label", "bug"], ["t-api", "t-ui"]),
    (["ls", "--label", "bug", "--label", "ui"], ["t-ui"]),
    (["ls", "--label", "nope"], []),
    (["ls", "--label", "bug", "--state", "working"], ["t-api"]),
    (["ready", "--label", "bug"], ["t-ui"]),
    (["ls", "--grep", "überblick"], ["t-doc"]),  # the objective, in any case
    (["ls", "--grep", "EXPORT BUTTON"], ["r-export"]),  # a request's words
    (["ls", "--grep", "rate limiter"], ["t-api"]),  # a message's text
    (["ls", "--grep", "login", "--label", "bug"], ["t-api", "t-ui"]),
]


def test_both_paths_filter_alike_and_the_store_can_go(repo: Path) -> None:
    plan(repo)
    for args, wanted in CASES:
        assert ids(*args) == wanted, args
        assert ids(*args, fresh=repo) == wanted, args
        assert ids(*args, oracle=repo) == wanted, args
    shutil.rmtree(repo / ".git" / "taskfs" / "cache")
    for args, wanted in CASES:
        assert ids(*args, fresh=repo) == wanted, args


def test_a_message_sent_later_is_found_without_reading_the_ledger_again(repo: Path) -> None:
    plan(repo)
    assert ids("ls", "--grep", "flaky") == []
    send("t-ui", "planner", "builder", "The flaky test is in ui/test_menu.py")
    assert ids("ls", "--grep", "flaky", fresh=repo) == ["t-ui"]
    shutil.rmtree(repo / ".git" / "taskfs" / "cache")
    assert ids("ls", "--grep", "flaky", fresh=repo) == ["t-ui"]


def test_sent_and_the_board_filter_by_label(repo: Path) -> None:
    plan(repo)
    sent = taskfs("sent", "--agent", "planner", "--label", "bug", "--json").json
    assert sorted(t["id"] for t in sent["tasks"]) == ["t-api", "t-ui"]
    assert sent["tasks"][0]["labels"]
    board = taskfs("board", "--html", str(repo / "b.html"), "--label", "docs", "--json").json
    shown = [t for column in board["columns"].values() for t in column]
    assert "t-doc" in shown
    assert "t-ui" not in shown
    page = (repo / "b.html").read_text()
    assert "&quot;label&quot;: [&quot;docs&quot;]" in page  # its cards' filter values
    assert '<span class="label">docs</span>' in page


def test_the_mcp_tools_filter_by_label(repo: Path, tmp_path: Path) -> None:
    plan(repo)
    env = server_env(tmp_path)

    async def look() -> None:
        async with serve(repo, "planner", env) as planner, serve(repo, "builder", env) as builder:
            mine = await planner.ok("agent_tasks", label="bug")
            assert sorted(t["id"] for t in mine["tasks"]) == ["t-api", "t-ui"]
            box = await builder.ok("agent_inbox", label="docs")
            assert [t["id"] for t in box["toClaim"]] == ["t-doc"]
            assert box["toClaim"][0]["labels"] == ["docs"]

    anyio.run(look)
    assert git(repo, "status", "--porcelain", "--", "tasks") == ""
