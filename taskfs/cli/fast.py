"""The hottest commands, run without loading the command-line framework.

Agents call `taskfs ls --json`, `taskfs ready --json` and `taskfs claim ID` constantly, so these
skip click and the forty command definitions it would build: the arguments are read here
through the option table into the one value click would build (`taskfs.cli.options.Given`),
and the same body is called with it (`taskfs.cli.bodies.answer`), so the same document is
printed. `ls`,
`ready` and `show` first try the read model's answer (`taskfs.readmodel`): `ls` and `ready`
from its store once HEAD is the commit its rows were settled against (a read of git's HEAD
file), `show` from the answer stored beside it; this module imports nothing else of taskfs but
the leaves until the answer is not there.
Anything this does not recognise exactly (another option, a bad value, `--help`, `--`, text
output of a listing for people) returns None, and click handles it as usual, error messages
included.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from taskfs.cli.options import COMMANDS, Given, allowed, parse
from taskfs.core.display import safe

# What this path answers only as JSON: the listings' text for people is click's.
JSON_ONLY = ("ls", "ready")


def run(args: Sequence[str]) -> int | None:
    """The exit status, or None when click should handle these arguments."""
    if not args or args[0] not in COMMANDS:
        return None
    command = args[0]
    given = parse(command, list(args[1:]))
    if given is None:
        return None
    # A malformed task id: click's task id type refuses it (`invalid_task_id`), for any command.
    if (command in JSON_ONLY and not given["as_json"]) or _for_click(given) or _malformed_id(given):
        return None
    for option in COMMANDS[command].options.values():
        value = given[option.dest]
        if option.choices and value is not None and value not in allowed(option.choices):
            return None  # click names the allowed values
    if command == "show":
        if given["fmt"] != "text":
            return None  # markdown: click's
        return _show(given)
    if command in ("ls", "ready"):
        rows = _prepared(given)
        if rows is not None:
            _write_listing(rows)
            return 0
    if command == "move":
        from taskfs.core.lifecycle import STATES

        if given["state"] not in STATES:
            return None  # likewise, with the state meant
    if command == "check" and not _seconds(given):
        return None  # click says what a time limit may be
    from taskfs import i18n
    from taskfs.cli import bodies

    i18n.choose(None)  # as click's group does: no language chosen on the command line
    return bodies.answer(given)


def _malformed_id(given: Given) -> bool:
    task_id = given.get("task_id")
    if task_id is None:
        return False
    from taskfs.core.layout import is_task_id

    return not is_task_id(task_id)


def _seconds(given: Given) -> bool:
    """Read `--timeout` as click's range does (more than 0, at most a day, a number): False
    when it is none of that."""
    text = given["timeout"]
    if text is None:
        return True
    try:
        seconds = float(text)
    except ValueError:
        return False
    given.values["timeout"] = seconds
    return 0 < seconds <= 24 * 60 * 60  # NaN is neither, as click's own check says


def _for_click(given: Given) -> bool:
    """Options this path reads (so that it never misreads them) but leaves to click to act
    on: a claim pushed to the remote, the artifacts a completion names (click checks each
    NAME=LOCATION)."""
    return bool(given.get("push") or given.get("artifacts"))


def _show(given: Given) -> int:
    """`show ID` (text or `--json`): the stored answer when it still holds (no YAML, no
    pydantic, see `taskfs.readmodel.show`), else the full reader."""
    from taskfs.readmodel import show as answers

    stored = answers.answer(given["task_id"], given["as_json"], catch_up=_catch_up)
    if stored is not None:
        if stored or given["as_json"]:
            sys.stdout.write(safe(stored) + "\n")
        return 0
    from taskfs import i18n
    from taskfs.cli import bodies

    i18n.choose(None)
    return bodies.answer(given)


def _prepared(given: Given) -> list[str] | None:
    from taskfs.core.layout import is_agent_name
    from taskfs.readmodel import listing

    agent = given.get("agent")
    if agent is not None and not is_agent_name(agent):
        return None  # the full path names what is wrong
    return listing.rows(given.name, given.filters(), agent, catch_up=_catch_up)


def _write_listing(rows: list[str]) -> None:
    """The listing document of `rows`, as the full path prints it, written a thousand rows at
    a time (never the whole document at once: at 50,000 tasks it is 7 MB)."""
    from taskfs.core import shapes

    out = sys.stdout
    out.write(safe(shapes.listing_head()))
    for start in range(0, len(rows), 1000):
        part = ", ".join(rows[start : start + 1000])
        out.write((", " if start else "") + safe(part))
    out.write(shapes.LISTING_TAIL + "\n")


def _catch_up(root: str, git_dir: str) -> bool:
    # Only when HEAD moved since the store's rows were settled: a `git diff`, through the api.
    from taskfs.api.tasks.listing import catch_up

    return catch_up(root)
