"""`inbox` and `prime` answered from what was stored the last time (`taskfs.readmodel.answers`),
and stored by the full path when it answers them.

The fast side (`fast`) reads the command line as click would for the plain forms only (`inbox
[--agent A] [--session S] [--full] [--json]`, `prime [--agent A] [--mcp] [--json]`); anything
else (`--mark-read`, `--help`, an unknown option) is click's. The question is the same tuple on
both sides (`request`), so the stored answer is found only for the very command line that
stored it.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # `typing` costs the hot path 3 ms to import
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

# command -> its options: name -> (key in the question, takes a value)
OPTIONS: dict[str, dict[str, tuple[str, bool]]] = {
    "inbox": {
        "--agent": ("agent", True),
        "--session": ("session", True),
        "--full": ("full", False),
        "--json": ("json", False),
    },
    "prime": {"--agent": ("agent", True), "--mcp": ("mcp", False), "--json": ("json", False)},
}
DEFAULTS = {"agent": "TASKFS_AGENT", "session": "TASKFS_SESSION"}


def request(command: str, **given: Any) -> tuple[Any, ...]:
    """The question a command line asks: the command and every option's value, by name, the
    acting agent and session resolved from the environment as click resolves them."""
    values: dict[str, Any] = {key: False for key, takes in OPTIONS[command].values() if not takes}
    values.update({key: None for key, takes in OPTIONS[command].values() if takes})
    for key, value in given.items():
        values[key] = value
    for key, variable in DEFAULTS.items():
        if key in values and not values[key]:
            values[key] = os.environ.get(variable) or None
    return (command, *sorted(values.items()))


def fast(args: Sequence[str]) -> int | None:
    """The stored answer to this command line, printed (exit 0); None for click to answer."""
    command, rest = args[0], list(args[1:])
    known = OPTIONS[command]
    given: dict[str, Any] = {}
    while rest:
        name, eq, value = rest.pop(0).partition("=")
        option = known.get(name)
        if option is None or option[0] in given:
            return None
        key, takes = option
        if not takes:
            if eq:
                return None
            given[key] = True
            continue
        if not eq:
            if not rest or rest[0].startswith("-"):
                return None
            value = rest.pop(0)
        given[key] = value
    from taskfs.core.layout import is_agent_name
    from taskfs.readmodel import answers

    asked = request(command, **given)
    agent = dict(asked[1:]).get("agent")
    if agent is not None and not is_agent_name(agent):
        return None  # the full path names what is wrong
    found = answers.answer(asked)
    if found is None:
        return None
    from taskfs.core.display import safe

    sys.stdout.write(safe(found))
    return 0


def storing(asked: tuple[Any, ...], run: Callable[[], int], tasks_rel: str | None) -> int:
    """Run the full path's command (`run`, which prints its answer), remembering what it
    printed for the next time the same question is asked (`answers.store`)."""
    import contextlib
    import io
    import time

    from taskfs.readmodel import answers, clock

    found = answers.where() if tasks_rel is not None else None
    if found is None or tasks_rel is None:
        return run()
    root, git_dir = found
    before = answers.identity(root, git_dir, tasks_rel)
    stamp = time.time_ns()
    printed = io.StringIO()
    with clock.deferred() as recording, contextlib.redirect_stdout(printed):
        code = run()
    text = printed.getvalue()
    if code == 0:
        answers.store(
            root, git_dir, asked, before=before, stamp=stamp, text=text, recording=recording
        )
    sys.stdout.write(clock.fill(text, recording.nonce))
    return code
