"""Check requests: "the recipient asks for its result to be checked", answered by the watcher.

The watcher asks `pending_check_requests` what waits, and hands each request to
`run_requested_check`, which runs the task's acceptance check only when the operator's runner
policy allows its command (`taskfs.core.policy`), has the evidence written and committed, and
completes the task through `transitions.transition` when the check passed. A check that failed
leaves the task `working`; its evidence says why. A command the policy does not allow is not
run: the outcome names `check_not_allowed` and why, and a person runs `taskfs check` by hand.

Two parts wait for work merged from other branches; each is marked TODO with what replaces it:
where requests come from (`result` messages, `taskfs check --request`: issue 7) and the
evidence runner (`taskfs check`'s api: issue 5). Until then no request is ever pending, so the
watcher never reaches the runner.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from taskfs.api import transitions
from taskfs.core.policy import RunnerPolicy, decide
from taskfs.errors import Problem, TaskfsError, problem
from taskfs.store.ledger import load_task
from taskfs.store.repository import Repository

Verdict = Literal["pass", "fail"]


@dataclass(frozen=True)
class CheckRequest:
    """One request for a task's acceptance check."""

    task_id: str
    requested_by: str  # the agent that asked: the recipient holding the task
    source: str  # what asked: the message file's path, or `taskfs check --request`
    key: str  # the request's identity: one request is answered once


@dataclass(frozen=True)
class Evidence:
    """What the evidence runner answers: the verdict and the committed evidence file."""

    verdict: Verdict
    path: str


@dataclass(frozen=True)
class CheckOutcome:
    request: CheckRequest
    ran: bool
    verdict: Verdict | None = None
    evidence: str | None = None
    completed: bool = False
    problems: tuple[Problem, ...] = ()


RecordEvidence = Callable[[Repository, str], Evidence]


def pending_check_requests(repo: Repository) -> list[CheckRequest]:
    """The check requests that wait for an answer, oldest first."""
    # TODO(lead, after issue 7 merges): one CheckRequest per `result` message in
    # tasks/<id>/messages/ (and per `taskfs check --request`) of a `working` task that no
    # evidence file or reply made after it answers yet; key = the message file's path,
    # requested_by = its verified sender. A message whose signature does not verify is
    # never a request (contract section 6).
    return []


def record_evidence(repo: Repository, task_id: str) -> Evidence:
    """Run the task's acceptance check and commit its evidence (the runner of `taskfs check`)."""
    # TODO(lead, after issue 5 merges): call taskfs.api.evidence's runner for `task_id` and
    # return Evidence(verdict, path of the committed evidence file).
    raise NotImplementedError("the evidence runner arrives with issue 5")


def run_requested_check(
    repo: Repository,
    request: CheckRequest,
    policy: RunnerPolicy,
    *,
    record: RecordEvidence = record_evidence,
) -> CheckOutcome:
    """Answer one request: run the check if the policy allows it, complete the task on a pass."""
    task = load_task(repo, request.task_id)
    if task.state != "working":
        found = problem(
            "transition_not_allowed",
            id=task.id,
            from_state=task.state,
            to_state="completed",
            why_text=" (only a working task's result is checked)",
        )
        return CheckOutcome(request, ran=False, problems=(found,))
    command = task.envelope.acceptance_check.pass_fail_command
    decision = decide(policy, command, task.envelope.sender)
    if not decision.allowed:
        found = problem("check_not_allowed", id=task.id, command=command, reason=decision.reason)
        return CheckOutcome(request, ran=False, problems=(found,))
    evidence = record(repo, task.id)
    if evidence.verdict != "pass":
        return CheckOutcome(request, ran=True, verdict=evidence.verdict, evidence=evidence.path)
    try:
        transitions.transition(
            repo, task.id, "completed", request.requested_by, evidence=evidence.path
        )
    except TaskfsError as exc:
        return CheckOutcome(
            request, ran=True, verdict="pass", evidence=evidence.path, problems=exc.problems
        )
    return CheckOutcome(request, ran=True, verdict="pass", evidence=evidence.path, completed=True)
