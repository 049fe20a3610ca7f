"""Every command that takes a task id refuses a malformed one as `invalid_task_id` (contract
section 1), before it looks anything up: a path that climbs out (`../etc`) or an id in capitals
is no task that could be missing (`task_not_found` would send the user looking for it). The
fast path (`taskfs.cli.fast`) and click answer alike."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from taskfs.cli.app import cli
from tests.helpers import git, taskfs

MALFORMED = ["../etc", "Div-Zero", ".", "..", "_x", "a/b", "a" * 65, "", "a b"]

# Each command taking a task id, with {id} where the id goes and the other arguments it needs.
COMMAND_LINES: dict[str, list[str]] = {
    "show": ["show", "{id}"],
    "log": ["log", "{id}"],
    "messages": ["messages", "{id}"],
    "bind": ["bind", "{id}", "--agent", "bob"],
    "claim": ["claim", "{id}", "--agent", "bob"],
    "move": ["move", "{id}", "working", "--agent", "bob"],
    "refuse": ["refuse", "{id}", "--agent", "bob", "--reason", "no"],
    "complete": ["complete", "{id}", "--agent", "bob"],
    "check": ["check", "{id}"],
    "send": ["send", "{id}", "--agent", "bob", "hello"],
    "amend": ["amend", "{id}", "amendment.yaml", "--agent", "bob"],
    "evidence add": [
        "evidence",
        "add",
        "{id}",
        "--verdict",
        "pass",
        "--source",
        "person",
        "--agent",
        "bob",
    ],
    "interlink export": ["interlink", "export", "--task", "{id}"],
    "intake open": ["intake", "open", "--id", "{id}", "--agent", "bob", "a request"],
    "intake add": ["intake", "add", "{id}", "--agent", "bob", "more"],
    "intake propose": ["intake", "propose", "{id}", "envelope.yaml", "--agent", "bob"],
    "intake accept": ["intake", "accept", "{id}", "--agent", "bob"],
    "intake cancel": ["intake", "cancel", "{id}", "--agent", "bob"],
    "discover": ["discover", "{id}", "--agent", "bob"],
    "reassign": ["reassign", "{id}", "--to", "carol", "--agent", "bob"],
    "retry": ["retry", "{id}", "--agent", "bob"],
    "a2a follow": ["a2a", "follow", "{id}"],
}
# The parameters that hold a task id, by the name the commands give them.
ID_PARAMETERS = {"task_id", "task_ids", "task", "new_id"}


def _commands_taking_ids() -> set[str]:
    found: set[str] = set()

    def walk(group: click.Group, prefix: list[str]) -> None:
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                walk(command, [*prefix, name])
            elif any(p.name in ID_PARAMETERS for p in command.params):
                found.add(" ".join([*prefix, name]))

    walk(cli, [])
    return found


def test_every_command_taking_a_task_id_is_covered() -> None:
    # A command added with a task id argument is added here, and so is refused like the rest.
    assert _commands_taking_ids() == set(COMMAND_LINES)


@pytest.mark.parametrize("name", sorted(COMMAND_LINES))
def test_a_malformed_task_id_is_invalid_task_id(repo: Path, name: str) -> None:
    before = git(repo, "rev-parse", "HEAD")
    for bad in MALFORMED:
        args = [a.replace("{id}", bad) for a in COMMAND_LINES[name]]
        result = taskfs(*args, "--json")
        assert result.code == 1, (args, result.stdout, result.stderr)
        assert result.codes == ["invalid_task_id"], (args, result.stdout)
        text = taskfs(*args)  # for people: the same code, on stderr, nothing on stdout
        assert text.code == 1, (args, text.stderr)
        assert "error[invalid_task_id]" in text.stderr, (args, text.stderr)
    assert git(repo, "rev-parse", "HEAD") == before  # nothing written


def test_discover_refuses_a_malformed_new_id(repo: Path) -> None:
    result = taskfs("discover", "t1", "--id", "../etc", "--agent", "bob", "--json")
    assert (result.code, result.codes) == (1, ["invalid_task_id"])


def test_a_well_formed_id_that_does_not_exist_is_still_task_not_found(repo: Path) -> None:
    for args in (["show", "div-zero"], ["claim", "div-zero", "--agent", "bob"]):
        result = taskfs(*args, "--json")
        assert (result.code, result.codes) == (1, ["task_not_found"])
