"""`agent_check`'s own `result` is answered by the evidence it recorded (team day, item 2).

The tool runs the check and sends the result in one call; the evidence was stamped when the run
started, before the result, so the watcher took the result for an unanswered request: with no
runner policy it logged `check-not-run errors=check_not_allowed` and committed a message to the
holder to run the check it had just run, also once the task was completed.
"""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.cli.watcher import FAST
from tests.helpers import git, taskfs, taskfs_process
from tests.mcp.test_server import envelope, serve, server_env


def watcher_messages(repo: Path, task: str) -> list[str]:
    shown = taskfs("messages", task, "--json").json["messages"]
    return [m["text"] for m in shown if m["from"] == "watcher"]


def test_agent_checks_result_is_answered_by_its_own_evidence(repo: Path, tmp_path: Path) -> None:
    env = server_env(tmp_path)
    text = envelope(
        id="t1",
        filesAndInterfaces=["a.txt"],
        acceptanceCheck={"passFailCommand": "grep -q hello a.txt", "endToEndVerification": "cat"},
    )

    async def work() -> None:
        async with serve(repo, "planner", env) as planner, serve(repo, "builder", env) as builder:
            await planner.ok("agent_send", envelope=text)
            await builder.ok("agent_claim", task_id="t1")
            (repo / "a.txt").write_text("hello\n")
            git(repo, "add", "a.txt")
            git(repo, "commit", "-q", "-m", "a.txt")
            checked = await builder.ok("agent_check", task_id="t1", text="done")
            assert checked["verdict"] == "pass"

    anyio.run(work)
    head = git(repo, "rev-parse", "HEAD")
    watched = taskfs_process("watch", "--once", *FAST, cwd=repo)
    assert watched.code == 0, watched.stderr
    assert "check-not-run" not in watched.stderr, watched.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    assert watcher_messages(repo, "t1") == []
    # Completed, the task has nothing more to answer either.
    assert taskfs("complete", "t1", "--agent", "builder").code == 0
    again = taskfs_process("watch", "--once", *FAST, cwd=repo)
    assert "check-not-run" not in again.stderr, again.stderr
    assert watcher_messages(repo, "t1") == []


def test_a_result_nobody_checked_is_declined_in_one_sentence(repo: Path) -> None:
    """A `result` with no evidence after it is still a request: the watcher, allowed to run
    nothing, tells its sender so once, saying it did not run the check once."""
    from taskfs import errors

    assert taskfs("new", "-", stdin=envelope(id="t2").encode()).code == 0
    assert taskfs("claim", "t2", "--agent", "builder").code == 0
    assert taskfs("send", "t2", "done", "--agent", "builder", "--status", "result").code == 0
    watched = taskfs_process("watch", "--once", *FAST, cwd=repo)
    assert "errors=check_not_allowed" in watched.stderr, watched.stderr
    (said,) = watcher_messages(repo, "t2")
    opening = errors.MESSAGES["check_not_allowed"].split("{id!r}")[0]
    assert said.count(opening.strip()) == 1, said
    assert said.count("taskfs check t2") == 1, said
