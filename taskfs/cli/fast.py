"""The hottest commands, run without loading the command-line framework.

Agents call `taskfs ls --json`, `taskfs ready --json` and `taskfs claim ID` constantly, so these
skip click and the forty command definitions it would build: the arguments are read here and
the same body is called (`taskfs.cli.bodies`), so the same document is printed. `ls`,
`ready` and `show` first try the answer the read model prepared (`taskfs.readmodel`), which
needs no more than a `stat` per file it was derived from; this module imports nothing else
of taskfs but the leaves until the answer is not there.
Anything this does not recognise exactly (another option, a bad value, `--help`, `--`, text
output of a listing for people) returns None, and click handles it as usual, error messages
included.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

# command: (the options taking a value, how many plain arguments, whether --json is required)
COMMANDS = {
    "ls": (("--state", "--to", "--context"), 0, True),
    "ready": (("--agent",), 0, True),
    "claim": (("--agent",), 1, False),
    "show": (("--format",), 1, False),
    "move": (("--agent", "--reason"), 2, False),
    "refuse": (("--agent", "--reason"), 1, False),
    "complete": (("--agent",), 1, False),
    "new": (("--agent",), -1, False),  # -1: one plain argument or more
    "send": (("--agent", "--status", "--in-reply-to", "--to", "--session"), 2, False),
}
# The transitions: their target state (move names it), as their click commands call the body.
TARGETS = {"claim": "working", "refuse": "rejected", "complete": "completed"}


def run(args: Sequence[str]) -> int | None:
    """The exit status, or None when click should handle these arguments."""
    if not args or args[0] not in COMMANDS:
        return None
    known, plain, needs_json = COMMANDS[args[0]]
    as_json = "--json" in args
    parsed = _parse(args[1:], known)
    if parsed is None or (needs_json and not as_json):
        return None
    values, arguments = parsed
    if len(arguments) != plain and not (plain == -1 and arguments):
        return None
    command = args[0]
    if command == "show":
        return _show(arguments[0], values.get("--format", "text"), as_json)
    agent = values.pop("--agent", os.environ.get("TASKFS_AGENT")) or None
    if command in ("ls", "ready"):
        answer = _prepared(command, values, agent)
        if answer is not None:
            sys.stdout.write(answer + "\n")
            return 0
    from taskfs.core.lifecycle import LISTED_STATES, STATES

    if values.get("--state") not in (None, *LISTED_STATES):
        return None  # click names the allowed states
    if command == "move" and arguments[1] not in STATES:
        return None  # likewise
    if command == "send" and not _message_status(values.get("--status")):
        return None  # click names the allowed ones
    from taskfs import i18n

    i18n.choose(None)  # as click's group does: no language chosen on the command line
    return _body(command, values, arguments, agent, as_json)


def _message_status(status: str | None) -> bool:
    from taskfs.core.lifecycle import SEND_STATUSES

    return status is None or status in SEND_STATUSES


def _body(
    command: str, values: dict[str, str], arguments: list[str], agent: str | None, as_json: bool
) -> int:
    """The command's body, as its click command calls it."""
    from taskfs.cli import bodies

    if command == "ls":
        return bodies.ls(values.get("--state"), values.get("--to"), values.get("--context"), True)
    if command == "ready":
        return bodies.ready(agent, True)
    if command == "claim":
        return bodies.claim(arguments[0], agent, as_json)  # a task already held is said so
    if command == "new":
        return bodies.new(arguments, agent, as_json)
    if command == "send":
        return bodies.send(
            arguments[0],
            arguments[1],
            agent,
            values.get("--status"),
            values.get("--in-reply-to"),
            values.get("--to"),
            values.get("--session"),
            as_json,
        )
    target = arguments[1] if command == "move" else TARGETS[command]
    return bodies.transition(arguments[0], target, agent, values.get("--reason"), as_json)


def _show(task_id: str, fmt: str, as_json: bool) -> int | None:
    """`show ID` (text or `--json`): the stored answer when it still holds (no YAML, no
    pydantic, see `taskfs.readmodel.show`), else the full reader. Markdown goes to click."""
    if fmt != "text":
        return None
    from taskfs.readmodel import show as answers

    stored = answers.answer(task_id, as_json)
    if stored is not None:
        if stored or as_json:
            sys.stdout.write(stored + "\n")
        return 0
    from taskfs import i18n
    from taskfs.cli import bodies

    i18n.choose(None)
    return bodies.show(task_id, as_json)


def _prepared(command: str, values: dict[str, str], agent: str | None) -> str | None:
    from taskfs.core.layout import is_agent_name
    from taskfs.readmodel import prepared

    if agent is not None and not is_agent_name(agent):
        return None  # the full path names what is wrong
    return prepared.answer(command, values, agent, moved=_head_moved_elsewhere)


def _head_moved_elsewhere(root: str, git_dir: str, token: bytes, tasks_rel: str) -> bool:
    # Only when HEAD moved since the answers were prepared: one `git diff`, through the api.
    from taskfs.api.tasks.listing import head_moved_elsewhere

    return head_moved_elsewhere(root, git_dir, token, tasks_rel)


def _parse(args: Sequence[str], known: Sequence[str]) -> tuple[dict[str, str], list[str]] | None:
    """The options' values and the plain arguments; None for anything not understood here."""
    values: dict[str, str] = {}
    plain: list[str] = []
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--json":
            continue
        if not arg.startswith("-"):
            plain.append(arg)
            continue
        name, eq, value = arg.partition("=")
        if name not in known or name in values:
            return None
        if not eq:
            if not rest:
                return None
            value = rest.pop(0)
            if value.startswith("-"):
                return None  # `--reason --json`: for click to read
        values[name] = value
    return values, plain
