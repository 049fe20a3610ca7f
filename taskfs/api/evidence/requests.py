"""Check requests: "the recipient asks for its result to be checked", answered by the watcher.

The watcher asks `pending_check_requests` what waits, and hands each request to
`run_requested_check`, which runs the task's acceptance check only when the operator's runner
policy allows its command (`taskfs.core.policy`) and has the evidence written and committed.
Completing stays the holder's act: only a policy with `complete: true` has a passing check
complete the task: on the holder's behalf, the status file naming the holder (`by`) and the
`result` message that asked (`message`), the commit the watcher's, saying for whom; for a peer's
work, by the task's sender accepting its result (`taskfs.api.lifecycle.acceptance`). A check
that failed leaves the task `working`; its evidence says why. A command the policy does not
allow is not run: the watcher answers the request with a message to its sender saying why
(`check_not_allowed`), committed, so the sender is told once, across restarts too. The request
still waits: a person may run `taskfs check` by hand, or the operator allow the command, and
the next watcher to start runs it.

A request is a verified `result` message of a `working` task (`taskfs send --status result`,
`taskfs check --request`, the MCP tools) that is still waiting for review: no transition and no
evidence file came after it. A message whose signature does not verify is never a request
(contract section 6), and an answered request is never run twice: its evidence comes after it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from taskfs.api.lifecycle import transitions
from taskfs.core.lifecycle import next_states
from taskfs.core.policy import RunnerPolicy, decide_run
from taskfs.errors import Problem, TaskfsError, problem
from taskfs.store.index import summaries
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task, load_task

Verdict = Literal["pass", "fail"]


@dataclass(frozen=True)
class CheckRequest:
    """One request for a task's acceptance check."""

    task_id: str
    requested_by: str  # the agent that asked: the recipient holding the task
    source: str  # what asked: the message file's path, or `taskfs check --request`
    key: str  # the request's identity (the result message's id): one request is answered once
    declined: bool = False  # the watcher already told its sender the policy did not allow it


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
    answered: str | None = None  # the message that told the sender why, when one was sent


RecordEvidence = Callable[[Repository, str], Evidence]


def pending_check_requests(repo: Repository) -> list[CheckRequest]:
    """The check requests that wait for an answer, oldest first."""
    from taskfs.api.messages.inbox import awaits_check, watcher_declined
    from taskfs.api.messages.threads import read_thread, trust

    working = summaries(repo).in_state("working")
    if not working:
        return []
    trusted = trust(repo)
    requests: list[tuple[str, CheckRequest]] = []
    for task_id in working:
        task = load_task(repo, task_id)
        thread = read_thread(repo, task_id, trusted=trusted)
        for checked in thread.messages:
            usable = checked.ok and checked.delivery != "pending" and checked.in_place
            if usable and awaits_check(repo, task, thread, checked):
                record = checked.record
                declined = watcher_declined(thread, checked)
                request = CheckRequest(
                    task_id, record.sender, checked.stored.rel, record.msg_id, declined
                )
                requests.append((record.at, request))
    return [request for _at, request in sorted(requests, key=lambda pair: pair[0])]


def record_evidence(repo: Repository, task_id: str) -> Evidence:
    """Run the task's acceptance check and commit its evidence (the runner of `taskfs check`)."""
    from taskfs.api.evidence import checks as evidence

    checked = evidence.check(repo, task_id, agent="watcher")
    return Evidence(checked.verdict, checked.evidence)


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
            next_states=next_states(task.state),
        )
        return CheckOutcome(request, ran=False, problems=(found,))
    command = task.envelope.acceptance_check.pass_fail_command
    decision = decide_run(policy, command, task.envelope.sender)
    if not decision.allowed:
        found = problem("check_not_allowed", id=task.id, command=command, reason=decision.reason)
        # Its sender was told once; the request waits for a person or a wider policy.
        answered = None if request.declined else _tell_sender(repo, request, found)
        return CheckOutcome(request, ran=False, problems=(found,), answered=answered)
    evidence = record(repo, task.id)
    if evidence.verdict != "pass" or not policy.complete:
        return CheckOutcome(request, ran=True, verdict=evidence.verdict, evidence=evidence.path)
    try:
        completer = _completer(repo, task, request)
        if completer == request.requested_by:
            complete_on_behalf(repo, request)
        else:  # a peer's work: its sender accepts the result (the gate finds the evidence)
            transitions.transition(repo, task.id, "completed", completer)
    except TaskfsError as exc:
        return CheckOutcome(
            request, ran=True, verdict="pass", evidence=evidence.path, problems=exc.problems
        )
    return CheckOutcome(request, ran=True, verdict="pass", evidence=evidence.path, completed=True)


def _completer(repo: Repository, task: Task, request: CheckRequest) -> str:
    """Who completes on a pass: the holder that asked; but a peer's key signs nothing here, so
    its work is completed by the task's sender, accepting its result
    (`taskfs.api.lifecycle.acceptance`)."""
    from taskfs.api.messages.routing import is_peer

    sender = task.envelope.sender
    if sender and is_peer(repo, request.requested_by) and not is_peer(repo, sender):
        return sender
    return request.requested_by


def complete_on_behalf(repo: Repository, request: CheckRequest) -> str:
    """Complete the task for its holder, as the watcher: the status file is the holder's
    (only the holder completes, contract section 3) and names the `result` message that asked
    for it; the commit is authored by the watcher and says on whose behalf, so that history
    never shows the holder making a commit it did not make. `audit` accepts exactly this: a
    completion committed by the watcher that rests on a result its `by` sent. The completion
    rests on the newest passing evidence (the gate finds it)."""
    from datetime import datetime, timezone

    from taskfs.api.messages.sending import WATCHER

    holder = request.requested_by
    with repo.writing() as writer:
        now = datetime.now(timezone.utc)
        staged = transitions.stage_transition(
            repo, writer, request.task_id, "completed", holder, now=now, message=request.key
        )
        message = transitions.transition_message(
            request.task_id, staged.before, "completed", holder, None
        )
        subject, _sep, trailers = message.partition("\n")
        trailers = trailers.replace(f"Taskfs-Agent: {holder}\n", f"Taskfs-Agent: {WATCHER}\n")
        return writer.commit(
            f"{subject} (committed by {WATCHER})\n{trailers}Taskfs-On-Behalf-Of: {holder}\n",
            WATCHER,
            when=now,
        )


def _tell_sender(repo: Repository, request: CheckRequest, found: Problem) -> str | None:
    """Answer a declined request with a message to its sender; its id, or None when the
    message could not be written (the watcher's log still says why)."""
    from taskfs import i18n
    from taskfs.api.messages.sending import WATCHER, send

    # The problem says what was not run and how to run it; the message adds only what follows.
    text = i18n.say(
        "{problem}, where the command may run; then `taskfs complete {id}`",
        problem=found.message,
        id=request.task_id,
    )
    try:
        sent = send(
            repo,
            request.task_id,
            WATCHER,
            text,
            in_reply_to=request.key,
            to=request.requested_by,
        )
    except TaskfsError:
        return None
    return sent.record.msg_id
