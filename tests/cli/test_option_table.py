"""One table of options drives both click and the fast path (`taskfs.cli.options`, issue 31): every
command the fast path reads accepts exactly click's options, with the same meaning, and a command
line answers the same whichever of the two reads it."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from taskfs.cli import fast
from taskfs.cli.app import cli
from taskfs.cli.options import COMMANDS, Command, Given, allowed, parse
from tests.helpers import submit, taskfs


def _described(command: click.Command) -> tuple[dict[str, object], list[tuple[str, int]]]:
    options: dict[str, object] = {}
    arguments = []
    for param in command.params:
        if isinstance(param, click.Argument):
            arguments.append((str(param.name), param.nargs))
            continue
        assert isinstance(param, click.Option)
        choices = tuple(param.type.choices) if isinstance(param.type, click.Choice) else None
        for name in param.opts:
            options[name] = (
                param.name,
                param.is_flag,
                param.multiple,
                param.envvar,
                choices,
                param.default if isinstance(param.default, str) else None,
                param.secondary_opts[0] if param.secondary_opts else None,
            )
    return options, arguments


def _tabled(command: Command) -> tuple[dict[str, object], list[tuple[str, int]]]:
    options: dict[str, object] = {}
    for option in command.options.values():
        choices = allowed(option.choices) if option.choices else None
        options[option.name] = (
            option.dest,
            not option.value,
            option.multiple,
            option.envvar,
            choices,
            option.default,
            option.negative,
        )
    return options, list(command.arguments)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_fast_path_and_click_read_the_same_options(name: str) -> None:
    command = cli.commands[name]
    assert _described(command) == _tabled(COMMANDS[name])


def test_every_command_the_fast_path_reads_is_in_the_table() -> None:
    # A command line the fast path answers is one the table describes, and none other.
    for name in ("validate", "log", "audit", "owners", "sync"):
        assert fast.run([name, "x"]) is None
        assert name not in COMMANDS


@pytest.mark.parametrize(
    "args",
    [
        ["--agent=builder", "--json"],
        ["--agent", "builder", "--json"],
        ["--json", "--agent", "builder"],
    ],
)
def test_spellings_of_an_option_read_alike(args: list[str]) -> None:
    parsed = parse("ready", args)
    assert parsed == Given("ready", {"agent": "builder", "labels": (), "as_json": True})


def test_what_click_must_say_is_left_to_click() -> None:
    assert parse("send", ["t", "hi", "--reason", "x"]) is None  # not an option of send
    assert parse("send", ["t", "hi", "--to"]) is None  # a value missing
    assert parse("send", ["t", "hi", "--to", "--json"]) is None  # an option for a value
    assert parse("send", ["t"]) is None  # an argument missing
    assert parse("send", ["t", "hi", "--json=1"]) is None  # a flag given a value
    completed = parse("complete", ["t", "--artifact", "a=b", "--artifact=c=d"])
    assert completed is not None
    assert (completed["artifacts"], completed["task_id"]) == (("a=b", "c=d"), "t")
    off = parse("check", ["t", "--no-network"])
    assert off is not None
    assert off["network"] is False
    on = parse("check", ["t", "--network", "--json"])
    assert on is not None
    assert (on["network"], on["as_json"]) == (True, True)
    assert parse("check", ["t", "--network", "--no-network"]) is None  # one of the two, once
    unset = parse("check", ["t"])
    assert unset is not None
    assert (unset["network"], unset["text"], unset["fresh"]) == (
        None,
        "",
        False,
    )


def test_the_fast_path_fills_in_what_click_fills_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one value both paths build: an option not given has its environment variable's
    value (an empty one is none), else its default, as click gives it."""
    monkeypatch.setenv("TASKFS_AGENT", "builder")
    given = parse("claim", ["t"])
    assert given == Given(
        "claim", {"agent": "builder", "push": False, "as_json": False, "task_id": "t"}
    )
    monkeypatch.setenv("TASKFS_AGENT", "")
    given = parse("claim", ["t", "--json"])
    assert given is not None
    assert given["agent"] is None


def test_a_command_line_answers_the_same_through_either(repo: Path) -> None:
    """The same lines, read by the fast path (the `taskfs` entry point) and by click
    (`--lang en` first makes the fast path step aside): the same status and document. Each
    line is a question or a refusal, so that both sides meet the same ledger."""
    task = submit(repo)
    submit(repo, id="second", filesAndInterfaces=["src/second.py"], dependsOn=[task])
    lines = [
        ["ls", "--json", "--state=submitted"],
        ["ls", "--json", "--to", "builder"],
        ["ready", "--json", "--agent=builder"],
        ["show", task, "--json", "--format", "text"],
        ["claim", task, "--json", "--agent=nobody"],
        ["move", task, "completed", "--agent", "builder", "--reason=go", "--json"],
        ["refuse", "second", "--json", "--agent", "nobody", "--reason", "no"],
    ]
    for line in lines:
        via_fast = taskfs(*line)
        via_click = taskfs("--lang", "en", *line)
        assert (via_fast.code, via_fast.json) == (via_click.code, via_click.json), line
