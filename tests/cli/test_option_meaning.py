"""The option table carries meaning, not only parsing (issue 36, item 8): a command's options
travel as one value from the table (`taskfs.cli.options`) to the click command, the fast path
and the query, so a filter added to the table is honoured by both paths, with the store and
without it, and an option the table gives no meaning is refused before anything answers.

The property test writes command lines as an agent might (every option of every command the
fast path reads, in any order and spelling, with values right and wrong) and holds the fast
path's answer to click's on the same ledger, with the store and without it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taskfs.cli.options import COMMANDS, allowed
from tests.helpers import Result, git, submit, taskfs, write_envelope
from tests.readmodel.test_never_trusted import _clean, _forget_open_stores

TRUE = {"passFailCommand": "true", "endToEndVerification": "it runs"}
IDS = ("plain", "held", "blocked", "other", "nope", "BAD ID")
VALUES = (
    "builder", "planner", "reviewer", "submitted", "working", "intake", "auth-hardening",
    "elsewhere", "x", "", "a b", "-x", "12", "0", "nan", "86401", "0.5", "plain", "auth",
    "LOGIN",
)  # fmt: skip
READS = ("ls", "ready", "show")


def _ledger(repo: Path) -> None:
    submit(repo, id="plain", filesAndInterfaces=["src/plain/**"], acceptanceCheck=TRUE,
           labels=["auth", "ui"], priority=1)  # fmt: skip
    submit(repo, id="held", filesAndInterfaces=["src/held/**"], acceptanceCheck=TRUE,
           labels=["auth"])  # fmt: skip
    submit(repo, id="blocked", filesAndInterfaces=["src/blocked/**"], dependsOn=["plain"])
    submit(repo, id="other", filesAndInterfaces=["src/other/**"], to="reviewer", contextID="x")
    assert taskfs("claim", "held", "--agent", "builder").code == 0
    taskfs("check", "held")


@st.composite
def command_lines(draw: st.DrawFn, envelopes: tuple[str, ...]) -> list[str]:
    name = draw(st.sampled_from(sorted(COMMANDS)))
    command = COMMANDS[name]
    words: list[list[str]] = []
    for option in command.options.values():
        if not draw(st.booleans()):
            continue
        spellings = [option.name] + ([option.negative] if option.negative else [])
        spelled = draw(st.sampled_from(spellings))
        if not option.value:
            words.append([spelled])
            continue
        pool = list(VALUES)
        if option.choices:
            pool += list(allowed(option.choices))
        for _ in range(draw(st.integers(1, 2)) if option.multiple else 1):
            value = draw(st.sampled_from(pool))
            joined = draw(st.booleans())
            words.append([f"{spelled}={value}"] if joined else [spelled, value])
    for argument, count in command.arguments:
        if argument == "files":
            pool = list(envelopes)
        elif argument == "state":
            pool = ["working", "input_required", "completed", "canceled", "finished"]
        elif argument == "text":
            pool = ["hello", "progress made"]
        else:
            pool = list(IDS)
        for _ in range(draw(st.integers(1, 2)) if count == -1 else 1):
            words.append([draw(st.sampled_from(pool))])
    order = draw(st.permutations(range(len(words))))
    return [name, *(word for i in order for word in words[i])]


# What differs between two runs of the same write: the names and times it made.
MADE = (
    (re.compile(r"[0-9]{8}T[0-9]{6}\.[0-9]{6}Z-[0-9a-z]{8}"), "<stamp>"),
    (re.compile(r"[0-9]{4}-[a-z_]+-[0-9a-z]{8}\.yaml"), "<status>"),
    (re.compile(r"\b[0-9a-f]{40}\b"), "<commit>"),
    (re.compile(r"\b[0-9a-f]{32}\b"), "<msg_id>"),
    (re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z"), "<time>"),
    (re.compile(r"after [0-9.]+ s"), "after <seconds>"),
    (re.compile(r"\bm-[0-9a-z]+\b"), "<msg>"),
)


def _made(text: str) -> str:
    for pattern, said in MADE:
        text = pattern.sub(said, text)
    return text


def _seen(result: Result) -> tuple[int, Any]:
    try:
        body: Any = _clean(json.loads(_made(result.stdout)))
    except ValueError:
        body = _made(result.stdout)
    assert "internal_error" not in result.stdout, result.stdout
    return result.code, body


def _both(repo: Path, line: list[str]) -> tuple[tuple[int, Any], tuple[int, Any]]:
    """The line through the fast path, then through click (`--lang en` steps the fast path
    aside), on the same repository."""
    return _seen(taskfs(*line, cwd=repo)), _seen(taskfs("--lang", "en", *line, cwd=repo))


def _drop_store(repo: Path) -> None:
    shutil.rmtree(repo / ".git" / "taskfs" / "cache", ignore_errors=True)
    _forget_open_stores()


@pytest.fixture
def setting(repo: Path, tmp_path: Path) -> tuple[Path, tuple[str, ...]]:
    _ledger(repo)
    assert taskfs("ls", "--json").code == 0
    good = write_envelope(tmp_path / "good.yaml", id="fresh", filesAndInterfaces=["src/f/**"])
    bad = write_envelope(tmp_path / "bad.yaml", objective=None)
    clash = write_envelope(tmp_path / "clash.yaml", id="clash", filesAndInterfaces=["src/plain/a"])
    pristine = tmp_path / "pristine"
    shutil.copytree(repo, pristine, symlinks=True)
    return pristine, (str(good), str(bad), str(clash))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_the_fast_path_answers_every_command_line_as_click_does(
    setting: tuple[Path, tuple[str, ...]], tmp_path: Path, data: st.DataObject
) -> None:
    pristine, envelopes = setting
    line = data.draw(command_lines(envelopes), label="line")
    with_store = data.draw(st.booleans(), label="with the store")
    twins = []
    for side in ("fast", "click"):
        twin = tmp_path / f"{side}-{os.getpid()}"
        shutil.rmtree(twin, ignore_errors=True)
        shutil.copytree(pristine, twin, symlinks=True)
        if not with_store:
            _drop_store(twin)
        twins.append(twin)
    _forget_open_stores()
    if line[0] in READS:
        fast, click = _both(twins[0], line)
        assert fast == click, line
        return
    fast = _seen(taskfs(*line, cwd=twins[0]))
    _forget_open_stores()
    click = _seen(taskfs("--lang", "en", *line, cwd=twins[1]))
    assert fast == click, line
    after = [_seen(taskfs("ls", "--json", cwd=t)) for t in twins]
    assert after[0] == after[1], line


# -- a filter added to the table -------------------------------------------------------------

ADDED = """
import contextlib, io, json, sys
from taskfs.cli import options
options.COMMANDS["ls"] = options.Command(
    (),
    *options.COMMANDS["ls"].options.values(),
    options.Option("--from", "sender", "Only tasks sent by this agent.", field="from"),
)
from taskfs.cli import fast, run
out = io.StringIO()
with contextlib.redirect_stdout(out):
    by_fast = fast.run(sys.argv[1:])
fast_out = out.getvalue()
out = io.StringIO()
with contextlib.redirect_stdout(out):
    by_click = run(["--lang", "en", *sys.argv[1:]])
print(json.dumps([by_fast, fast_out, by_click, out.getvalue()]))
"""


def test_a_filter_added_to_the_table_alone_is_honoured_by_both_paths(repo: Path) -> None:
    """`--from` added to `ls` in the table, and nowhere else: the fast path and click filter
    alike, with the store and without it."""
    submit(repo, id="mine", filesAndInterfaces=["src/mine/**"])
    submit(repo, id="theirs", filesAndInterfaces=["src/theirs/**"], **{"from": "reviewer"})
    for store in ("kept", "dropped"):
        if store == "dropped":
            _drop_store(repo)
        proc = subprocess.run(
            [sys.executable, "-c", ADDED, "ls", "--json", "--from", "reviewer"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        by_fast, fast_out, by_click, click_out = json.loads(proc.stdout)
        assert by_fast in (0, None), store  # None: it stepped aside, which is no answer
        assert by_click == 0, click_out
        assert [t["id"] for t in json.loads(click_out)["tasks"]] == ["theirs"], store
        if by_fast == 0:
            assert fast_out == click_out, store


def test_an_option_the_table_gives_no_meaning_is_refused_where_it_is_written() -> None:
    """An option of `ls` that is neither a filter nor read by the command's body is a mistake
    the table itself refuses, before any command line is read by either path."""
    from taskfs.cli import options

    with pytest.raises(ValueError, match="--from"):
        options.Command((), options.Option("--from", "sender", "x"), reads=())


def test_the_same_ledger_answers_each_filter_alike_through_either_path(repo: Path) -> None:
    """Each filter of `ls` and `ready`, through both paths, with the store and without."""
    _ledger(repo)
    git(repo, "status")
    lines = [
        ["ls", "--json", "--to", "reviewer"],
        ["ls", "--json", "--context", "x"],
        ["ls", "--json", "--state", "working"],
        ["ls", "--json", "--archived"],
        ["ready", "--json", "--agent", "reviewer"],
    ]
    for line in lines:
        kept = _both(repo, line)
        _drop_store(repo)
        dropped = _both(repo, line)
        assert kept[0] == kept[1] == dropped[0] == dropped[1], line


def _filter_options() -> list[tuple[str, Any]]:
    return [
        (name, option)
        for name in ("ls", "ready")
        for option in COMMANDS[name].options.values()
        if option.field is not None
    ]


def _holds(found: Any, value: str) -> bool:
    """Whether a row's field holds a value given on the command line: it is the value, or (a
    list, as `labels`) has it."""
    return value in found if isinstance(found, list) else str(found) == value


def test_every_filter_of_the_table_keeps_exactly_the_rows_it_names(repo: Path) -> None:
    """Whatever filters the table holds (a new one included, with no test of its own): each
    value of its field in the ledger keeps exactly the rows with that value, through both paths,
    with the store and without it."""
    _ledger(repo)
    assert taskfs("move", "other", "canceled", "--agent", "planner").code == 0
    assert taskfs("archive", "--older-than", "0").code == 0
    for name, option in _filter_options():
        base = [name, "--json"]
        every = taskfs(name, "--json").json["tasks"]
        if not option.value:  # a flag: given, its rows say True; not given, they say False
            given = taskfs(*base, option.name).json["tasks"]
            assert all(row.get(option.field) is True for row in given), option.name
            assert all(row.get(option.field, False) is False for row in every), option.name
            continue
        if option.field == "text":  # what `ls --grep` searches: no field of the row printed
            continue
        said = [row.get(option.field) for row in every if row.get(option.field) is not None]
        values = {str(v) for found in said for v in (found if isinstance(found, list) else [found])}
        assert values or option.field != "labels", option.name
        for value in sorted(values):
            line = [*base, option.name, value]
            expected = [row for row in every if _holds(row.get(option.field), value)]
            for store in ("kept", "dropped"):
                if store == "dropped":
                    _drop_store(repo)
                fast, click = _both(repo, line)
                assert fast == click, (line, store)
                assert fast[1]["tasks"] == _clean(expected), (line, store)
