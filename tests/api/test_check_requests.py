"""Answering check requests: the policy decides whether the command runs at all.

Requests come from messages (issue 7) and evidence from the runner of `taskfs check` (issue
5); until those are merged, requests are made here by hand and the evidence runner is a
recorder that says whether it was called. What is tested is the part that is the watcher's:
a command the policy does not allow is never run, and a failed check completes nothing.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from taskfs.api.evidence.requests import CheckRequest, Evidence, run_requested_check
from taskfs.core.policy import NOTHING, parse_policy
from taskfs.store.repository import Repository
from taskfs.watch import reconcile
from taskfs.watch.log import ActionLog
from taskfs.watch.reconcile import Reconciler
from tests.helpers import ENVELOPE, submit, taskfs


class Recorder:
    def __init__(self, verdict: str) -> None:
        self.verdict = verdict
        self.calls: list[str] = []

    def __call__(self, repo: Repository, task_id: str) -> Evidence:
        self.calls.append(task_id)
        return Evidence(self.verdict, f"tasks/{task_id}/evidence/x.yaml")  # type: ignore[arg-type]


def working_task(repo: Path) -> CheckRequest:
    task_id = submit(repo, id="work")
    assert taskfs("claim", task_id, "--agent", "builder").code == 0
    return CheckRequest(task_id, "builder", "tasks/work/messages/m.yaml", "m1")


def state(task_id: str) -> str:
    return str(taskfs("show", task_id, "--json").json["state"])


def test_a_command_the_policy_does_not_allow_is_not_run(repo: Path) -> None:
    request = working_task(repo)
    record = Recorder("pass")
    rules = parse_policy({"allow": {"commands": ["make check"]}})
    outcome = run_requested_check(Repository.open(repo), request, rules, record=record)
    assert outcome.ran is False
    assert [p.code for p in outcome.problems] == ["check_not_allowed"]
    assert outcome.problems[0].data["command"] == ENVELOPE["acceptanceCheck"]["passFailCommand"]
    assert record.calls == []
    assert state("work") == "working"


def test_without_a_policy_nothing_is_run(repo: Path) -> None:
    request = working_task(repo)
    record = Recorder("pass")
    outcome = run_requested_check(Repository.open(repo), request, NOTHING, record=record)
    assert (outcome.ran, record.calls) == (False, [])


def test_an_allowed_check_that_fails_leaves_the_task_working(repo: Path) -> None:
    request = working_task(repo)
    record = Recorder("fail")
    command = str(ENVELOPE["acceptanceCheck"]["passFailCommand"])
    rules = parse_policy({"allow": {"commands": [command]}})
    outcome = run_requested_check(Repository.open(repo), request, rules, record=record)
    assert record.calls == ["work"]
    assert (outcome.ran, outcome.verdict, outcome.completed) == (True, "fail", False)
    assert state("work") == "working"


def test_a_task_that_is_not_working_is_not_checked(repo: Path) -> None:
    task_id = submit(repo, id="idle")
    record = Recorder("pass")
    request = CheckRequest(task_id, "builder", "by hand", "k")
    rules = parse_policy({"allow": {"commands": ["**"]}})
    outcome = run_requested_check(Repository.open(repo), request, rules, record=record)
    assert [p.code for p in outcome.problems] == ["transition_not_allowed"]
    assert record.calls == []


def test_the_watcher_logs_a_refused_request_once(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = working_task(repo)
    monkeypatch.setattr(reconcile, "pending_check_requests", lambda repo: [request])
    out = io.StringIO()
    reconciler = Reconciler(Repository.open(repo), ActionLog(out), NOTHING)
    reconciler.pass_()
    reconciler.pass_()
    lines = [line for line in out.getvalue().splitlines() if " check-not-run " in line]
    assert len(lines) == 1
    assert "task=work" in lines[0]
    assert "errors=check_not_allowed" in lines[0]
    assert state("work") == "working"
