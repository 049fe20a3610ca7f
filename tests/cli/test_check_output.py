"""A failing check says why to the task's holder, whoever ran it (issue 38, item 5).

The runner fleet (`taskfs watch --once` under the operator's policy, as CI runs it) checks a
task its holder asked to have checked, and the command fails: the holder's inbox, `show` and
`log` carry the failing run's last lines, not only "fail, exit 2"."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskfs.core import yamlio
from tests.helpers import submit, taskfs

REASON = "No rule to make target 'check'"


def fleet_checked(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A task for builder whose check is `make check` (no Makefile: make says why and exits
    2), asked to be checked by builder and run by the fleet."""
    task = submit(
        repo,
        filesAndInterfaces=["src/**"],
        acceptanceCheck={"passFailCommand": "make check", "endToEndVerification": "read it"},
    )
    assert taskfs("claim", task, "--agent", "builder").code == 0
    asked = taskfs("check", task, "--request", "--agent", "builder", "--json")
    assert asked.code == 0, asked.stdout
    policy = tmp_path / "policy.yaml"
    policy.write_text(yamlio.dump({"allow": {"commands": ["make check"]}, "complete": True}))
    monkeypatch.setenv("TASKFS_POLICY", str(policy))
    ran = taskfs("watch", "--once")
    assert ran.code == 0, ran.stdout + ran.stderr
    monkeypatch.delenv("TASKFS_POLICY")
    return task


def test_the_holder_reads_why_the_fleets_check_failed(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = fleet_checked(repo, tmp_path, monkeypatch)
    # show: the text prints the failing run's last lines; --json carries them on its row.
    shown = taskfs("show", task)
    assert REASON in shown.stdout, shown.stdout
    rows = taskfs("show", task, "--json").json["evidence"]
    assert (rows[-1]["verdict"], rows[-1]["by"]) == ("fail", "watcher")
    assert REASON in rows[-1]["output"]["stderr"]
    # log: likewise, text and JSON.
    assert REASON in taskfs("log", task).stdout
    runs = [r for r in taskfs("log", task, "--json").json["timeline"] if r["kind"] == "evidence"]
    assert REASON in runs[-1]["output"]["stderr"]
    # Who ran it, as show says (the team day read `by script` in log where show said the agent).
    assert runs[-1]["actor"] == rows[-1]["by"] == "watcher"
    # The holder's inbox, text and JSON: the failed check, with its reason.
    inbox = taskfs("inbox", "--agent", "builder", "--json").json
    failed = [c for c in inbox["checks"] if c["task_id"] == task]
    assert len(failed) == 1
    assert (failed[0]["status"], failed[0]["from"]) == ("fail", "watcher")
    assert REASON in failed[0]["text"]
    assert REASON in taskfs("inbox", "--agent", "builder").stdout
    # The sender's inbox is not the holder's: nothing there.
    assert taskfs("inbox", "--agent", "planner", "--json").json.get("checks", []) == []


def test_the_failed_check_leaves_the_inbox_once_the_holder_answers_it(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = fleet_checked(repo, tmp_path, monkeypatch)
    waiting = taskfs("inbox", "--agent", "builder", "--json").json["checks"]
    assert [c["task_id"] for c in waiting] == [task]
    said = taskfs("send", task, "adding the Makefile", "--agent", "builder", "--status", "update")
    assert said.code == 0, said.stdout
    assert taskfs("inbox", "--agent", "builder", "--json").json["checks"] == []
