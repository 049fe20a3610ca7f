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

from taskfs.core import layout
from taskfs.core.display import safe
from taskfs.core.hosttools import PROGRESS_TOOLS

TYPE_CHECKING = False  # `typing` costs a hook run after every edit 3 ms to import
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, TextIO

HOSTS = ("claude", "codex")


def main(args: Sequence[str], command: str = "nudge") -> int | None:
    """`taskfs nudge --hook HOST [--agent NAME]` (or `prime --hook`), or None when the
    arguments need the full command line (which then parses them and says what is wrong)."""
    options: dict[str, str] = {}
    rest = list(args)
    while rest:
        flag = rest.pop(0)
        if flag not in ("--hook", "--agent") or not rest or flag in options:
            return None
        options[flag] = rest.pop(0)
    if options.get("--hook") not in HOSTS:
        return None
    hook = prime_hook if command == "prime" else nudge_hook
    return hook(options["--hook"], options.get("--agent"), sys.stdin, sys.stdout)


def _guarded(run: Callable[[], None]) -> int:
    try:
        run()
    except Exception:
        if os.environ.get("TASKFS_DEBUG"):
            import traceback

            traceback.print_exc()
    return 0


def _event(stdin: TextIO) -> dict[str, Any]:
    try:
        data = json.loads(stdin.read() or "{}")
    except (ValueError, OSError):
        return {}
    return data if isinstance(data, dict) else {}


def _where(event: dict[str, Any], agent: str | None) -> tuple[str, str, str | None] | None:
    """The taskfs repository the session works in (its root and git dir) and its agent name,
    or None to stay silent."""
    cwd = event.get("cwd")
    found = layout.checkout(cwd if isinstance(cwd, str) and cwd else os.getcwd())
    if found is None or not os.path.isfile(f"{found[0]}/{layout.CONFIG_PATH}"):
        return None
    name = agent or os.environ.get("TASKFS_AGENT") or None
    return found[0], found[1], name if name and layout.is_agent_name(name) else None


def nudge_hook(host: str, agent: str | None, stdin: TextIO, stdout: TextIO) -> int:
    def run() -> None:
        event = _event(stdin)
        tool = event.get("tool_name")
        if isinstance(tool, str) and tool not in PROGRESS_TOOLS.get(host, ()):
            return  # a read, a search, an MCP call: no progress to remind about
        place = _where(event, agent)
        if place is None or place[2] is None:
            return
        from taskfs.readmodel.nudge_memory import nothing_due

        if nothing_due(place[0], place[1], place[2]):
            return  # nothing changed and nothing is due: the common case, from one file
        from pathlib import Path

        from taskfs.api.hosts.reminders import due_reminder

        text = due_reminder(Path(place[0]), place[2])
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
        from taskfs.readmodel import answers

        # What it said the last time, while the ledger and the settings are the same (a
        # session starts often, and a host waits for this before the agent's first turn).
        asked = ("prime --hook", place[2])
        found = answers.answer(asked, place[0])
        if found is not None:
            stdout.write(safe(found))
            return
        stdout.write(safe(_primed(place[0], place[2], asked)))

    return _guarded(run)


def _primed(root: str, agent: str | None, asked: tuple[str, str | None]) -> str:
    """The prime text for a host with the MCP tools, stored for the next session's start."""
    import time
    from pathlib import Path

    from taskfs.api import context
    from taskfs.api.hosts import prime
    from taskfs.readmodel import answers, clock

    repo = context.open(Path(root)).repo
    found = answers.where(root)
    before = answers.identity(found[0], found[1], repo.tasks_rel) if found else ()
    stamp = time.time_ns()
    with clock.deferred() as recording:
        text = prime.prime(repo, agent, mcp=True)
    if found is not None:
        answers.store(
            found[0], found[1], asked, before=before, stamp=stamp, text=text, recording=recording
        )
    return clock.fill(text, recording.nonce)
