"""The progress nudge and the start-up text, run the way the hosts run them: the command that
`taskfs setup` wrote, through a shell, with the host's JSON on stdin, its stdout read back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from taskfs.api.lifecycle import transitions
from taskfs.store.repository import Repository
from tests.helpers import configure, submit, taskfs

BIN = Path(sys.executable).parent


def set_quiet(repo: Path, minutes: float) -> None:
    configure(repo, nudge={"quietMinutes": minutes})


def claim_at(repo: Path, task_id: str, minutes_ago: float, agent: str = "builder") -> None:
    """A claim whose status file says it was made `minutes_ago`: the ledger's own clock."""
    when = datetime.now(timezone.utc) - timedelta(minutes=minutes_ago)
    transitions.transition(Repository.open(repo), task_id, "working", agent, now=when)


def hook_commands(repo: Path, host: str) -> dict[str, str]:
    """The hook commands `taskfs setup HOST` wrote, by event, read from the host's file."""
    assert taskfs("setup", host, "--agent", "builder").code == 0
    if host == "claude":
        hooks = json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]
    else:
        import tomlkit

        hooks = tomlkit.parse((repo / ".codex" / "config.toml").read_text()).unwrap()["hooks"]
    return {event: groups[0]["hooks"][0]["command"] for event, groups in hooks.items()}


def run_hook(command: str, event: dict[str, Any] | str, cwd: Path) -> tuple[int, str, str]:
    """Run a hook command as a host does: a shell, the event on stdin, the session's cwd."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKFS_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    stdin = event if isinstance(event, str) else json.dumps(event)
    proc = subprocess.run(
        ["sh", "-c", command],
        input=stdin,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return proc.returncode, proc.stdout, proc.stderr


def post_tool_use(repo: Path) -> dict[str, Any]:
    return {
        "session_id": "s1",
        "cwd": str(repo),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_response": {"stdout": ""},
    }


def reminder(stdout: str) -> str:
    output = json.loads(stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "PostToolUse"
    text = str(output["additionalContext"])
    assert "\n" not in text
    return text


def test_the_nudge_fires_after_the_quiet_period_and_not_before(repo: Path) -> None:
    commands = hook_commands(repo, "claude")
    nudge, event = commands["PostToolUse"], post_tool_use(repo)
    assert nudge == f"{BIN}/taskfs nudge --hook claude --agent builder"
    submit(repo, id="login")
    submit(repo, id="docs", filesAndInterfaces=["docs/**"])
    claim_at(repo, "login", minutes_ago=14)
    claim_at(repo, "docs", minutes_ago=16)

    set_quiet(repo, 15)
    code, out, _err = run_hook(nudge, event, repo)
    assert code == 0
    text = reminder(out)
    assert "task docs" in text
    assert "login" not in text
    assert "taskfs send docs --status update" in text
    # Reminded once: not again until another quiet period has passed.
    assert run_hook(nudge, event, repo)[:2] == (0, "")

    set_quiet(repo, 13)
    text = reminder(run_hook(nudge, event, repo)[1])
    assert "task login" in text
    assert "docs" not in text

    # A progress report resets the clock.
    set_quiet(repo, 10)
    assert (
        taskfs("send", "login", "tests written", "--status", "update", "--agent", "builder").code
        == 0
    )
    assert (
        taskfs("send", "docs", "outline done", "--status", "update", "--agent", "builder").code == 0
    )
    assert run_hook(nudge, event, repo)[:2] == (0, "")
    assert taskfs("nudge", "--agent", "builder", "--json").json["reminder"] is None


def test_codex_runs_the_same_nudge_and_the_start_up_text(repo: Path) -> None:
    commands = hook_commands(repo, "codex")
    submit(repo, id="login")
    claim_at(repo, "login", minutes_ago=20)
    text = reminder(run_hook(commands["PostToolUse"], post_tool_use(repo), repo)[1])
    assert "task login" in text

    start = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionStart"}
    code, out, _err = run_hook(commands["SessionStart"], start, repo)
    assert code == 0
    assert "You are agent 'builder'" in out
    assert "agent_check(task_id, text)" in out  # the hook's host has the MCP tools


def test_the_hooks_stay_silent_and_never_fail_the_host(repo: Path, tmp_path: Path) -> None:
    submit(repo, id="login")
    claim_at(repo, "login", minutes_ago=60)
    nudge = "taskfs nudge --hook claude --agent builder"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    # not JSON, another directory, no agent name, another agent: nothing to say
    assert run_hook(nudge, "this is not json", outside) == (0, "", "")
    assert run_hook(nudge, {**post_tool_use(repo), "cwd": str(outside)}, outside) == (0, "", "")
    assert run_hook("taskfs nudge --hook claude", post_tool_use(repo), repo) == (0, "", "")
    assert (
        run_hook("taskfs nudge --hook claude --agent planner", post_tool_use(repo), repo)[1] == ""
    )
    assert run_hook("taskfs prime --hook claude", {"cwd": str(outside)}, outside) == (0, "", "")
    # an error of taskfs's own (settings that do not parse) fails nothing either
    (repo / ".taskfs" / "config.yaml").write_text("nudge: [\n")
    assert run_hook(nudge, post_tool_use(repo), repo) == (0, "", "")
    assert run_hook("taskfs prime --hook claude", post_tool_use(repo), repo)[:2] == (0, "")
    # in-process through the command line, too
    result = taskfs("nudge", "--hook", "claude", "--agent", "builder", stdin=b"{")
    assert (result.code, result.stdout) == (0, "")


def test_the_nudge_runs_after_edits_and_shell_commands_only(repo: Path) -> None:
    claude = hook_commands(repo, "claude")["PostToolUse"]
    codex = hook_commands(repo, "codex")["PostToolUse"]
    submit(repo, id="login")
    claim_at(repo, "login", minutes_ago=20)
    # A read or an MCP call is no progress: the hook answers at once, with nothing, even
    # though a reminder is due (an older set-up ran it after every tool).
    for tool in ("Read", "Grep", "mcp__taskfs__agent_inbox"):
        assert run_hook(claude, {**post_tool_use(repo), "tool_name": tool}, repo)[:2] == (0, "")
    assert run_hook(codex, {**post_tool_use(repo), "tool_name": "view_image"}, repo)[:2] == (0, "")
    # Codex names its edits apply_patch; Claude Code's Write is an edit too.
    patched = run_hook(codex, {**post_tool_use(repo), "tool_name": "apply_patch"}, repo)[1]
    assert "task login" in reminder(patched)
    submit(repo, id="docs", filesAndInterfaces=["docs/**"])
    claim_at(repo, "docs", minutes_ago=20)
    written = run_hook(claude, {**post_tool_use(repo), "tool_name": "Write"}, repo)[1]
    assert "task docs" in reminder(written)
