"""`inbox`, `prime` and the hooks answer without the full reader while nothing they rest on
changed (issue 38, item 12: `inbox` took 3x `ls`, `prime --hook` 1.2-2.5 s and the nudge hook
0.3-1.0 s). A test, not a timing: what a process loaded is a fact, whatever the machine's load
(bench/agent_views.py prints the ratios against `ls --json`).

Each stored answer is held to the command itself through click, the oracle: the same bytes,
durations said as of the moment it is printed, never an answer HEAD or the clock has moved
past."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import configure, git, submit, taskfs
from tests.test_startup import HEAVY, _click, _fast

HOOK_PROBE = """
import contextlib, io, json, sys
from taskfs.cli import run
out = io.StringIO()
sys.stdin = io.StringIO({event!r})
with contextlib.redirect_stdout(out):
    code = run({args!r})
print(json.dumps({{"code": code, "stdout": out.getvalue(),
                  "loaded": [m for m in {heavy!r} + ("click",) if m in sys.modules]}}))
"""


def _hook(repo: Path, args: list[str], event: dict[str, object]) -> dict[str, object]:
    script = HOOK_PROBE.format(event=json.dumps(event), args=args, heavy=HEAVY)
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=repo, capture_output=True, text=True, check=True
    )
    return dict(json.loads(out.stdout))


def team(repo: Path) -> str:
    """A planner's two tasks, one held by builder (who has gone quiet), a question waiting."""
    configure(repo, "quiet after a minute", nudge={"senderQuietMinutes": 1})
    task = submit(repo, id="t1")
    submit(repo, id="t2", filesAndInterfaces=["docs/**"], priority=0, labels=["docs"])
    assert taskfs("claim", task, "--agent", "builder").code == 0
    said = taskfs("send", task, "log it?", "--agent", "builder", "--status", "needs_input")
    assert said.code == 0
    return task


VIEWS = [
    ["inbox", "--agent", "planner", "--json"],
    ["inbox", "--agent", "builder"],
    ["inbox", "--agent", "planner", "--full", "--json"],
    ["prime", "--agent", "planner"],
    ["prime", "--agent", "builder", "--mcp"],
]


@pytest.mark.parametrize("args", VIEWS, ids=" ".join)
def test_a_view_is_answered_from_what_was_stored_and_reads_the_same(
    repo: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.setenv("TASKFS_RACY_MARGIN_MS", "0")  # trust what is fresh: a test, not a wait
    team(repo)
    first = _click(repo, args)  # the full path, which stores its answer
    assert first.code == 0, first.stderr
    found = _fast(repo, args, env={"TASKFS_RACY_MARGIN_MS": "0"})
    assert (found["code"], found["loaded"]) == (0, [])
    assert found["stdout"] == _click(repo, args).stdout


def test_a_commit_or_the_settings_make_it_answer_afresh(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TASKFS_RACY_MARGIN_MS", "0")
    task = team(repo)
    args = ["inbox", "--agent", "planner", "--json"]
    env = {"TASKFS_RACY_MARGIN_MS": "0"}
    assert _click(repo, args).code == 0
    assert _fast(repo, args, env)["code"] == 0
    # A new message moves HEAD: the stored answer no longer holds, the full path answers.
    assert taskfs("send", task, "and one more", "--agent", "builder").code == 0
    moved = _fast(repo, args, env)
    assert "click" in moved["loaded"]  # type: ignore[operator]
    assert "and one more" in json.dumps(json.loads(str(moved["stdout"])))
    # So does a change of the settings the answer reads.
    assert _fast(repo, args, env)["loaded"] == []
    configure(repo, None, nudge={"senderQuietMinutes": 30})
    assert "click" in _fast(repo, args, env)["loaded"]  # type: ignore[operator]


def test_durations_are_said_as_of_printing_and_the_clock_ends_a_stored_list(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A holder quiet for a while is said quiet for as long as it is when the answer is
    printed; a holder who turns quiet after the answer was stored makes it answer afresh."""
    monkeypatch.setenv("TASKFS_RACY_MARGIN_MS", "0")
    configure(repo, "quiet after two seconds", nudge={"senderQuietMinutes": 2 / 60})
    task = submit(repo, id="t1")
    assert taskfs("claim", task, "--agent", "builder").code == 0
    args = ["inbox", "--agent", "planner", "--json"]
    env = {"TASKFS_RACY_MARGIN_MS": "0"}
    stored = json.loads(_click(repo, args).stdout)
    assert stored["quiet"] == []  # not quiet yet
    time.sleep(2.5)
    later = _fast(repo, args, env)
    assert "click" in later["loaded"]  # type: ignore[operator]  # the list changed by time
    quiet = json.loads(str(later["stdout"]))["quiet"]
    assert [(q["id"], q["quietMinutes"]) for q in quiet] == [(task, 0)]
    again = _fast(repo, args, env)
    assert again["loaded"] == []
    assert json.loads(str(again["stdout"]))["quiet"][0]["quietMinutes"] == 0  # a number


def test_the_hooks_answer_without_the_framework(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TASKFS_RACY_MARGIN_MS", "0")
    team(repo)
    event = {"hook_event_name": "SessionStart", "cwd": str(repo)}
    first = _hook(repo, ["prime", "--hook", "claude", "--agent", "builder"], event)
    assert first["code"] == 0
    assert "agent_" in str(first["stdout"])
    again = _hook(repo, ["prime", "--hook", "claude", "--agent", "builder"], event)
    assert again["stdout"] == first["stdout"]
    assert again["loaded"] == []
    edit = {"hook_event_name": "PostToolUse", "tool_name": "Edit", "cwd": str(repo)}
    assert _hook(repo, ["nudge", "--hook", "claude", "--agent", "builder"], edit)["code"] == 0
    quiet = _hook(repo, ["nudge", "--hook", "claude", "--agent", "builder"], edit)
    assert (quiet["code"], quiet["stdout"], quiet["loaded"]) == (0, "", [])


def test_deleting_the_stored_answers_changes_nothing(repo: Path) -> None:
    team(repo)
    args = ["prime", "--agent", "planner"]
    before = _click(repo, args).stdout
    cache = Path(git(repo, "rev-parse", "--git-dir")).resolve() / "taskfs" / "cache" / "answers"
    for stored in cache.glob("*"):
        os.unlink(stored)
    assert taskfs(*args).stdout == before
