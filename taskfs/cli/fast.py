"""The hottest commands, run without loading the command-line framework.

Agents call `taskfs ls --json`, `taskfs ready --json` and `taskfs claim ID` constantly, so these
skip click and the forty command definitions it would build: the arguments are read here and
the same body is called (`taskfs.cli.bodies`), so the same document is printed. `ls`,
`ready` and `show` first try the read model's answer (`taskfs.readmodel`): `ls` and `ready`
from its store once HEAD is the commit its rows were settled against (a read of git's HEAD
file), `show` from the answer stored beside it; this module imports nothing else of taskfs but
the leaves until the answer is not there.
Anything this does not recognise exactly (another option, a bad value, `--help`, `--`, text
output of a listing for people) returns None, and click handles it as usual, error messages
included.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from taskfs.cli.options import COMMANDS, allowed, parse
from taskfs.core.display import safe

TYPE_CHECKING = False  # `typing` costs the hot path 3 ms to import; type checkers know this
if TYPE_CHECKING:
    from typing import Any

# The transitions: their target state (move names it), as their click commands call the body.
TARGETS = {"claim": "working", "refuse": "rejected", "complete": "completed"}
# What this path answers only as JSON: the listings' text for people is click's.
JSON_ONLY = ("ls", "ready")


def run(args: Sequence[str]) -> int | None:
    """The exit status, or None when click should handle these arguments."""
    if not args or args[0] not in COMMANDS:
        return None
    command = args[0]
    parsed = parse(COMMANDS[command], list(args[1:]))
    if parsed is None:
        return None
    values, arguments = parsed
    as_json = bool(values.pop("as_json", False))
    # A malformed task id: click's task id type refuses it (`invalid_task_id`), for any command.
    if (
        (command in JSON_ONLY and not as_json)
        or _for_click(command, values)
        or _malformed_id(COMMANDS[command], arguments)
    ):
        return None
    if command == "show":
        return _show(arguments[0], values.get("fmt", "text"), as_json)
    # An empty --agent is a name given (`invalid_agent`); an empty TASKFS_AGENT is none.
    agent = values.pop("agent", None)
    if agent is None:
        agent = os.environ.get("TASKFS_AGENT") or None
    if command in ("ls", "ready"):
        answer = _prepared(command, values, agent)
        if answer is not None:
            sys.stdout.write(safe(answer) + "\n")
            return 0
    for option in COMMANDS[command].options.values():
        if option.choices and values.get(option.dest) not in (None, *allowed(option.choices)):
            return None  # click names the allowed values
    if command == "move":
        from taskfs.core.lifecycle import STATES

        if arguments[1] not in STATES:
            return None  # likewise, with the state meant
    if command == "check" and not _seconds(values):
        return None  # click says what a time limit may be
    from taskfs import i18n

    i18n.choose(None)  # as click's group does: no language chosen on the command line
    return _body(command, values, arguments, agent, as_json)


def _malformed_id(command: Any, arguments: list[str]) -> bool:
    named = [n for n, _count in command.arguments]
    if "task_id" not in named:
        return False
    from taskfs.core.layout import is_task_id

    return not is_task_id(arguments[named.index("task_id")])


def _seconds(values: dict[str, Any]) -> bool:
    """Read `--timeout` as click's range does (more than 0, at most a day, a number): False
    when it is none of that."""
    given = values.get("timeout")
    if given is None:
        return True
    try:
        seconds = float(given)
    except ValueError:
        return False
    values["timeout"] = seconds
    return 0 < seconds <= 24 * 60 * 60  # NaN is neither, as click's own check says


def _for_click(command: str, values: dict[str, object]) -> bool:
    """Options this path reads (so that it never misreads them) but leaves to click to act
    on: a claim pushed to the remote, the artifacts a completion names (click checks each
    NAME=LOCATION)."""
    return bool(values.get("push") or values.get("artifacts"))


def _body(
    command: str, values: dict[str, Any], arguments: list[str], agent: str | None, as_json: bool
) -> int:
    """The command's body, as its click command calls it."""
    from taskfs.cli import bodies

    if command == "ls":
        archived = bool(values.pop("archived", False))
        return bodies.ls(True, archived=archived, **values)
    if command == "ready":
        return bodies.ready(agent, True, **values)
    if command == "claim":
        return bodies.claim(arguments[0], agent, as_json)  # a task already held is said so
    if command == "new":
        return bodies.new(arguments, agent, as_json)
    if command == "check":
        from taskfs.cli import checking

        return checking.check(
            arguments[0],
            timeout=values.get("timeout"),
            fresh=bool(values.get("fresh")),
            request=bool(values.get("request")),
            text=values.get("text", ""),
            sandbox=values.get("sandbox"),
            network=values.get("network"),
            agent=agent,
            as_json=as_json,
        )
    if command == "send":
        return bodies.send(
            arguments[0],
            arguments[1],
            agent,
            values.get("status"),
            values.get("in_reply_to"),
            values.get("to"),
            values.get("session"),
            as_json,
        )
    target = arguments[1] if command == "move" else TARGETS[command]
    return bodies.transition(arguments[0], target, agent, values.get("reason"), as_json)


def _show(task_id: str, fmt: str, as_json: bool) -> int | None:
    """`show ID` (text or `--json`): the stored answer when it still holds (no YAML, no
    pydantic, see `taskfs.readmodel.show`), else the full reader. Markdown goes to click."""
    if fmt != "text":
        return None
    from taskfs.readmodel import show as answers

    stored = answers.answer(task_id, as_json)
    if stored is not None:
        if stored or as_json:
            sys.stdout.write(safe(stored) + "\n")
        return 0
    from taskfs import i18n
    from taskfs.cli import bodies

    i18n.choose(None)
    return bodies.show(task_id, as_json)


def _prepared(command: str, values: dict[str, str], agent: str | None) -> str | None:
    from taskfs.core.layout import is_agent_name
    from taskfs.readmodel import db

    if agent is not None and not is_agent_name(agent):
        return None  # the full path names what is wrong
    return db.answer(command, values, agent, catch_up=_catch_up)


def _catch_up(root: str, git_dir: str) -> bool:
    # Only when HEAD moved since the store's rows were settled: a `git diff`, through the api.
    from taskfs.api.tasks.listing import catch_up

    return catch_up(root)
