"""Lifecycle transitions: claim, move, refuse, complete. One path for all of them.

`transition` reads the task under the checkout's lock, applies every rule, appends one status
file and commits it, so two agents racing for one task can never both win on a checkout.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from taskfs import i18n
from taskfs.api.lifecycle import signing as transition_keys
from taskfs.api.tasks import rules
from taskfs.core import readiness
from taskfs.core.layout import STATUS, format_time, status_name
from taskfs.core.lifecycle import TERMINAL, Parties, State, check_transition, is_state
from taskfs.core.lineage import Lineage
from taskfs.core.status_file import status_document, status_text
from taskfs.errors import Problem, TaskfsError, fail, problem
from taskfs.readmodel.projection import Summary
from taskfs.store.index import check, summaries
from taskfs.store.repository import Repository
from taskfs.store.writer import Writer

if TYPE_CHECKING:
    from taskfs.core.evidence import GateFacts
    from taskfs.core.records import Artifact
    from taskfs.readmodel.ledger import Ledger


@dataclass(frozen=True)
class Moved:
    id: str
    state: State
    status_file: str
    commit: str
    # A completion's warnings (`completion_warnings`): what it left behind; None: no completion.
    warnings: tuple[Problem, ...] | None = None


# A gate is a rule that only some transitions need (dependencies and ownership for a claim).
# It sees the task and all the others under the lock, and returns what is wrong.
Gate = Callable[[Repository, Summary, Mapping[str, Summary]], list[Problem]]


def transition(
    repo: Repository,
    task_id: str,
    target: str,
    agent: str,
    *,
    reason: str | None = None,
    artifacts: Sequence[Artifact] = (),
    now: datetime | None = None,
    notify: bool = True,
) -> Moved:
    """Move the task, in one commit; with `notify`, the task's other party, when it is a peer,
    hears of it in the same commit (`tell_peer`). `claim --sync` tells it only once its claim
    is published (`tell_claim`): a claim it withdraws must have told no one."""
    if not is_state(target):
        from taskfs.core.synonyms import meant

        guess = meant(target)
        hint = f": did you mean {guess!r}?" if guess else ""
        raise fail("usage", reason=f"{target!r} is not a state{hint}")
    state: State = target  # type: ignore[assignment]
    if state == "canceled":
        from taskfs.api.intake import requests

        if requests.is_request(repo, task_id):  # a request is canceled as it stands
            done = requests.cancel(repo, task_id, agent, reason=reason, now=now)
            return Moved(task_id, state, done.file or "", done.commit or "")
    with repo.writing() as writer:
        now = now or datetime.now(timezone.utc)
        staged = stage_transition(
            repo,
            writer,
            task_id,
            state,
            agent,
            reason=reason,
            artifacts=artifacts,
            now=now,
        )
        if notify and (state in NOTIFIED or claims(staged.before, state)):
            tell_peer(repo, writer, staged, agent, reason=reason, now=now)
        commit = writer.commit(
            transition_message(task_id, staged.before, state, agent, reason), agent, when=now
        )
    if state != "completed":
        return Moved(task_id, state, staged.rel, commit)
    from taskfs.api.lifecycle.completion_warnings import left_behind

    return Moved(task_id, state, staged.rel, commit, left_behind(repo, staged.after))


# The acts that end or refuse a task (the terminal states), and its claim: the other party
# hears of each when it is a peer (an interlink agent that sent the task sees it taken, as from
# an interlink executor's first `update`, rather than open until the next act: `tell_claim`).
NOTIFIED: frozenset[State] = TERMINAL


def claims(before: State, after: State) -> bool:
    return before == "submitted" and after == "working"


def tell_claim(repo: Repository, task_id: str, agent: str, *, now: datetime | None = None) -> None:
    """After `claim --sync` published `agent`'s claim: tell the task's sender, when it is a
    peer, in a commit of its own (the next sync publishes it; the bridge carries it now)."""
    from taskfs.store import keypaths

    if not keypaths.has_private("agent", agent):
        return
    with repo.writing() as writer:
        now = now or datetime.now(timezone.utc)
        task = summaries(repo).get(task_id)
        if task is None or task.holder != agent or task.state != "working":
            return
        staged = Staged("submitted", "", task)
        if tell_peer(repo, writer, staged, agent, reason=None, now=now) is None:
            return
        writer.commit(
            f"taskfs: {agent} tells {task.envelope.sender} of its claim of {task_id}\n\n"
            f"Taskfs-Task: {task_id}\nTaskfs-Agent: {agent}\n",
            agent,
            when=now,
        )


def tell_peer(
    repo: Repository,
    writer: Writer,
    staged: Staged,
    agent: str,
    *,
    reason: str | None,
    now: datetime,
) -> str | None:
    """Add to `writer` the signed message that tells the task's other party, when it is a
    peer, what `agent` just did (`taskfs.api.messages.notices`); its msg_id, or None."""
    from taskfs.store import keypaths

    task = staged.after
    sender, holder = task.envelope.sender, task.holder
    to = (holder or task.envelope.recipient) if agent == sender else sender
    # Only a signed message reaches a peer: most agents have no key, and pay one `stat`.
    if to is None or to == agent or not keypaths.has_private("agent", agent):
        return None
    from taskfs.api.messages import notices

    found = notices.notice(
        task.state,  # type: ignore[arg-type]
        reason,
        by_holder=agent == holder,
        evidence=staged.evidence,
        by=agent,
    )
    record = notices.stage(repo, writer, task.id, agent, to, found, now)
    return record.msg_id if record is not None else None


@dataclass(frozen=True)
class Staged:
    """A transition checked and added to a writer, not yet committed."""

    before: State
    rel: str
    after: Summary  # the task as it will be once the commit holds the transition
    evidence: str | None = None  # the evidence file a completion rests on


def stage_transition(
    repo: Repository,
    writer: Writer,
    task_id: str,
    state: State,
    agent: str,
    *,
    now: datetime,
    reason: str | None = None,
    artifacts: Sequence[Artifact] = (),
    message: str | None = None,
    owner: str | None = None,
) -> Staged:
    """Apply every rule of the edge and add its status file to `writer` (held by the caller),
    so that a message and the transition it makes are committed together or not at all.
    `owner`: the delegation chain's owner, when it answers the open question (`Parties`).

    The task is read from the ledger cache, which under the lock is exactly what its files
    say; when anything is wrong with its files the full reader raises the named errors."""
    tasks = summaries(repo, verify=(task_id,))
    task = tasks.get(task_id)
    if task is not None and task.intake:
        # Not a task yet: it has no lifecycle until its requester sends the envelope.
        raise fail("intake_open", id=task_id, requester=task.envelope.sender)
    tasks = _committed(repo, task_id, state, task, tasks)
    if task is None or task.problems or not task.length:
        from taskfs.store.task_reader import load_task  # names what is wrong with its files

        task = Summary.of(load_task(repo, task_id, strict=True))
    accepted = None
    if state == "completed" and agent != task.holder and agent == task.envelope.sender:
        from taskfs.api.lifecycle import acceptance

        accepted = acceptance.holder_result(repo, task_id, task.holder)
    parties = Parties(
        task.envelope.sender, task.envelope.recipient, task.holder, owner, accepted is not None
    )
    current: State = task.state  # type: ignore[assignment]
    problems = check_transition(
        task_id, current, state, agent=agent, parties=parties, reason=reason
    )
    if problems and problems[0].code == "transition_not_allowed":
        raise TaskfsError(_name_current(problems[0], task.head_by, current, task.holder))
    for gate in gates(current, state):
        problems += gate(repo, task, tasks)
    evidence = None
    if state == "completed":
        # The evidence gate also names what the completion rests on, for the status file.
        from taskfs.api.evidence import gate as evidence_gate

        facts = task.envelope
        decision = evidence_gate.completion(
            repo, task_id, facts.command, facts.files_and_interfaces
        )
        problems += evidence_gate.completion_problems(task_id, decision)
        evidence = decision.rests_on.rsplit("/", 1)[-1] if decision.rests_on else None
        if accepted is not None and decision.rests_on:
            from taskfs.api.lifecycle import acceptance

            if not acceptance.recorded_after(repo.git, accepted.stored.rel, decision.rests_on):
                why = (
                    f": the passing evidence predates {task.holder}'s result "
                    f"{accepted.record.msg_id} (run `taskfs check {task_id}` after it)"
                )
                problems.append(problem("completion_requires_evidence", id=task_id, why_text=why))
        if accepted is not None:
            message = message or accepted.record.msg_id
    if problems:
        raise TaskfsError(problems)
    document = status_document(
        task=task_id,
        state=state,
        by=agent,
        at=format_time(now),
        prev=task.head,
        reason=reason.strip() if reason and reason.strip() else None,
        evidence=evidence,
        artifacts=[{"name": a.name, "location": a.location} for a in artifacts],
        message=message,
        # A claim names the version of the contract it takes (`core.amendments`): one written
        # after it waits for this holder's acceptance.
        amendment=task.amended if current == "submitted" and state == "working" else None,
    )
    document = transition_keys.signed(repo, agent, document, _describe_action(task_id, state))
    name = status_name(task.length + 1, state)
    rel = repo.task_rel(task_id, STATUS, name)
    text = status_text(document)
    if text is None:  # a reason or artifacts in free text: the YAML library writes them
        from taskfs.core import yamlio

        text = yamlio.dump(document)
    writer.add(rel, text.encode())
    claimed = current == "submitted" and state == "working"
    after = task._replace(
        state=state,
        holder=agent if claimed else task.holder,
        head=name,
        head_by=agent,
        length=task.length + 1,
        head_at=format_time(now),
    )
    if state == "completed":  # whether it stands, by the rule `ready` and a claim ask of it
        after = after._replace(stands=_stands(repo, after, rel, document, decision.run))
    writer.project(after)  # the read model's row, stored with the commit
    return Staged(current, rel, after, evidence)


def _stands(
    repo: Repository, after: Summary, rel: str, document: dict[str, Any], run: GateFacts | None
) -> bool:
    from taskfs.api.lifecycle.standing import stands_as_written

    return stands_as_written(repo, after, rel, document, run)


def _committed(
    repo: Repository,
    task_id: str,
    state: State,
    task: Summary | None,
    tasks: Ledger,
) -> Ledger:
    """Refuse to build on a task folder holding a file no commit holds, or on an envelope
    changed since its submission recorded it (`envelope_seal`), and read the other tasks a
    claim's gates consult (its dependencies and rivals) as HEAD holds them: the working tree
    may say anything (taskfs.store.head_ledger); the rows' word on archived tasks, links and
    completions is checked against the files (`standing.dependency_view`)."""
    from taskfs.store import head_ledger
    from taskfs.store.envelope_seal import unsealed

    others: list[str] = []
    if task is not None and task.state == "submitted" and state == "working":
        # A dependency's successors decide for it: they are read as HEAD holds them too.
        lineage = Lineage(tasks)
        after = [t for dep in task.envelope.depends_on for t in lineage.line(dep)]
        others = [*task.envelope.depends_on, *after, *task.overlaps]
    found = head_ledger.loose(repo, [task_id, *others])
    if task_id in found:
        raise TaskfsError(head_ledger.refusals(repo, {task_id: found[task_id]}))
    # What the gates rest on is checked against the objects of its folders, read again when
    # its row says otherwise (the task itself was, by `summaries(verify=...)`).
    check(repo, tasks, [t for t in others if t not in found])
    edited = unsealed(repo, task_id)
    if edited is not None:  # a contract changed after its submission: nothing builds on it
        raise TaskfsError(edited)
    if found:
        tasks = head_ledger.committed_view(repo, tasks, found)
    if others:
        from taskfs.api.lifecycle.standing import dependency_view

        assert task is not None
        tasks = dependency_view(repo, task, tasks)
    return tasks


def _describe_action(task_id: str, state: State) -> str:
    from taskfs.core.lifecycle import describe_action

    return describe_action(task_id, state)


def _name_current(found: Problem, by: str | None, current: State, holder: str | None) -> Problem:
    """The refusal, naming who made the current state; a working task's claimer is its holder,
    not whoever moved it back to working last (the sender answering its question)."""
    why = i18n.say(" ({state} since {agent}'s transition)", state=current, agent=by or "?")
    if current == "working":
        why = i18n.say(" (it was already claimed by {agent!r})", agent=holder or by)
    data = {**found.data, "by": by, "holder": holder, "why_text": why}
    return problem("transition_not_allowed", **data)


def _dependencies_gate(
    repo: Repository, task: Summary, tasks: Mapping[str, Summary]
) -> list[Problem]:
    if not task.envelope.depends_on:
        return []
    pending = readiness.unfinished_dependencies(task, tasks)
    if not pending:
        return []
    described = ", ".join(readiness.waiting_on(dep, tasks) for dep in pending)
    return [
        problem(
            "dependencies_unresolved",
            id=task.id,
            pending=pending,
            pending_text=described,
            rule="status",  # the dependencies' status files, read as `standing` checks them
        )
    ]


def _ownership_gate(repo: Repository, task: Summary, tasks: Mapping[str, Summary]) -> list[Problem]:
    # A merge or a late dependency can change the picture after `new` checked it: check again.
    graph, parents = readiness.relations(tasks)
    others = [t.envelope for t in readiness.rivals(task, tasks, graph, parents)]
    # The cache says who the rivals are; the entries and the witness are named afresh.
    return rules.ownership_conflicts([task.envelope], others, graph, parents)


def gates(current: State, target: State) -> tuple[Gate, ...]:
    """The extra rules an edge needs: a claim checks dependencies and ownership again.
    (Completion's evidence gate is applied in `transition`, which records what it rests on.)"""
    if current == "submitted" and target == "working":
        return (_dependencies_gate, _ownership_gate)
    return ()


def transition_message(
    task_id: str, current: State, target: State, agent: str, reason: str | None
) -> str:
    body = f"\n{reason.strip()}\n" if reason and reason.strip() else ""
    return (
        f"taskfs: {task_id} {current} -> {target} by {agent}\n{body}\n"
        f"Taskfs-Task: {task_id}\n"
        f"Taskfs-Transition: {current} -> {target}\n"
        f"Taskfs-Agent: {agent}\n"
    )
