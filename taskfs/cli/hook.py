"""The hook mode of `taskfs nudge` and `taskfs prime` (`--hook claude|codex`): what an agent
host runs after each tool call and when a session starts.

A hook reads the host's JSON on stdin (its `cwd` says where the session works), prints what
the host shows the agent, and never fails the host: outside a taskfs repository, without an
agent name, or on any error of its own it prints nothing and exits 0. The nudge answers in the
host's JSON (`hookSpecificOutput.additionalContext`: added to what the agent reads next,
without blocking or flagging the tool call; Claude Code and Codex read the same shape); prime
prints plain text, which both hosts add to the session's context.

`taskfs nudge --hook` is run after tool calls (setup's matcher names the edit and shell tools;
an older set-up ran it after every tool), so it is kept off the command-line framework:
`taskfs.cli.main` calls `main` here directly, a call after any other tool answers before
looking for a repository, and the ledger is read only when a reminder could be due
(`taskfs.api.hosts.reminders`).
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from taskfs.core import layout
from taskfs.core.display import safe
from taskfs.core.hosttools import PROGRESS_TOOLS

HOSTS = ("claude", "codex")


def main(args: Sequence[str]) -> int | None:
    """`taskfs nudge --hook HOST [--agent NAME]`, or None when the arguments need the full
    command line (which then parses them and says what is wrong)."""
    options: dict[str, str] = {}
    rest = list(args)
    while rest:
        flag = rest.pop(0)
        if flag not in ("--hook", "--agent") or not rest or flag in options:
            return None
        options[flag] = rest.pop(0)
    if options.get("--hook") not in HOSTS:
        return None
    return nudge_hook(options["--hook"], options.get("--agent"), sys.stdin, sys.stdout)


def _guarded(run: Callable[[], None]) -> int:
    try:
        run()
    except Exception:
        if os.environ.get("TASKFS_DEBUG"):
            traceback.print_exc()
    return 0


def _event(stdin: TextIO) -> dict[str, Any]:
    try:
        data = json.loads(stdin.read() or "{}")
    except (ValueError, OSError):
        return {}
    return data if isinstance(data, dict) else {}


def _where(event: dict[str, Any], agent: str | None) -> tuple[Path, str | None] | None:
    """The taskfs repository the session works in and its agent name, or None to stay silent."""
    cwd = event.get("cwd")
    root = layout.find_worktree(Path(cwd if isinstance(cwd, str) and cwd else os.getcwd()))
    if root is None or not (root / layout.CONFIG_PATH).is_file():
        return None
    name = agent or os.environ.get("TASKFS_AGENT") or None
    return root, name if name and layout.is_agent_name(name) else None


def nudge_hook(host: str, agent: str | None, stdin: TextIO, stdout: TextIO) -> int:
    def run() -> None:
        event = _event(stdin)
        tool = event.get("tool_name")
        if isinstance(tool, str) and tool not in PROGRESS_TOOLS.get(host, ()):
            return  # a read, a search, an MCP call: no progress to remind about
        place = _where(event, agent)
        if place is None or place[1] is None:
            return
        from taskfs.api.hosts.reminders import due_reminder

        text = due_reminder(place[0], place[1])
        if text:
            name = event.get("hook_event_name")
            output = {
                "hookSpecificOutput": {
                    "hookEventName": name if isinstance(name, str) else "PostToolUse",
                    "additionalContext": text,
                }
            }
            stdout.write(json.dumps(output) + "\n")

    return _guarded(run)


def prime_hook(host: str, agent: str | None, stdin: TextIO, stdout: TextIO) -> int:
    """`taskfs prime --hook HOST`: the prime text for a session starting in a taskfs
    repository (plain text: both hosts add a SessionStart hook's output to the context). The
    hook is installed by `taskfs setup`, which registers `taskfs mcp` with the same host, so
    the text names the MCP tools."""

    def run() -> None:
        place = _where(_event(stdin), agent)
        if place is None:
            return
        from taskfs.api import context
        from taskfs.api.hosts import prime

        stdout.write(safe(prime.prime(context.open(place[0]).repo, place[1], mcp=True)))

    return _guarded(run)
