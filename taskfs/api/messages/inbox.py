"""What waits for an agent: tasks to claim, questions to answer, results to review, unread
messages, the tasks it sent that came back refused or failed or whose holder went quiet, and
messages refused (shown with their codes, never counted as work).

Nothing here waits for anything: delivery is asynchronous, the inbox is a view of the files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from taskfs import i18n
from taskfs.api.intake.requests import intakes
from taskfs.api.lifecycle.forks import Lost, lost_in
from taskfs.api.lifecycle.sent import SentTask, needing, sent
from taskfs.api.lifecycle.stale import last_activity, last_commits
from taskfs.api.messages.openings import stored_opening
from taskfs.api.messages.threads import (
    CheckedMessage,
    Thread,
    for_session,
    read_conversations,
    read_thread,
    trust,
)
from taskfs.api.tasks import listing
from taskfs.core.intake import Intake
from taskfs.core.layout import EVIDENCE, STAMPED_NAME_RE, parse_time, parse_time_or_none
from taskfs.core.lifecycle import HELD, TERMINAL
from taskfs.core.messages import SenderTrust
from taskfs.core.records import StatusRecord
from taskfs.store.all_tasks import load_all
from taskfs.store.messages import pending_paths
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task


@dataclass(frozen=True)
class FailedCheck:
    """A failing acceptance run of a task the agent holds, made by someone else."""

    task_id: str
    by: str  # who ran it
    exit_code: int | None
    output: Mapping[str, str]  # the last lines of each stream (`checks.output`)
    evidence: str  # the evidence file
    at: str


@dataclass(frozen=True)
class PendingAmendment:
    """An amendment of a task the agent holds, waiting for its acceptance."""

    task_id: str
    by: str
    name: str  # its file
    reason: str | None
    changed: tuple[str, ...]  # the keys it changes against the contract in force
    at: str


@dataclass(frozen=True)
class Inbox:
    agent: str
    to_claim: tuple[Task, ...]
    ready: frozenset[str]
    questions: tuple[CheckedMessage, ...]
    results: tuple[CheckedMessage, ...]
    unread: tuple[CheckedMessage, ...]
    refused: tuple[CheckedMessage, ...]
    # The agent's transitions that lost a fork between clones (its claim lost to another's).
    superseded: tuple[Lost, ...] = ()
    # Questions among `questions` put to another agent, shown here because this agent owns
    # the delegation chain and may answer them (`taskfs.api.messages.chain_owner`).
    as_owner: frozenset[str] = frozenset()
    # Open intakes (contract section 12) addressed to this agent, which it may propose an
    # envelope for, and those it asked for, which wait for its envelope or its acceptance.
    requests: tuple[Intake, ...] = ()
    requested: tuple[Intake, ...] = ()
    # Tasks this agent sent that need it (`taskfs.api.lifecycle.sent`): refused or failed and
    # not yet handled, and those whose holder has gone quiet.
    ended: tuple[SentTask, ...] = ()
    quiet: tuple[SentTask, ...] = ()
    # Checks of tasks this agent holds that someone else ran (the runner fleet, the sender)
    # and that failed, which it has not answered since: each with the run's last lines.
    checks: tuple[FailedCheck, ...] = ()
    # Amendments of the contracts of tasks this agent holds, waiting for its acceptance.
    amendments: tuple[PendingAmendment, ...] = ()
    # Every task, as the inbox read it: `prime` and the text inbox read them again from here.
    tasks: Mapping[str, Task] = field(default_factory=dict, compare=False, repr=False)

    @property
    def markable(self) -> list[str]:
        """The unread messages a read mark can mark: those about a task (a plain message waits
        until it is answered)."""
        return [c.record.msg_id for c in self.unread if c.record.task_id]

    @property
    def claimable(self) -> tuple[Task, ...]:
        """The tasks to claim that a claim would take now (`listing.ready`, the claim's own
        gates); the others wait on a dependency or a rival (`waiting_claims`)."""
        return tuple(t for t in self.to_claim if t.id in self.ready)

    @property
    def waiting_claims(self) -> tuple[Task, ...]:
        return tuple(t for t in self.to_claim if t.id not in self.ready)

    @property
    def badge(self) -> str:
        """The count line a status bar shows a person, in their language (the document's
        `counts` are the data)."""
        return self.badge_text()

    def badge_text(self) -> str:
        """The count line for people, in their language."""
        line = i18n.say(
            "{agent}: {claim} to claim, {answer} to answer, {review} to review, {unread} unread",
            agent=self.agent,
            claim=len(self.claimable),
            answer=len(self.questions),
            review=len(self.results),
            unread=len(self.unread),
        )
        if self.requests or self.requested:
            count = len(self.requests) + len(self.requested)
            line += (
                i18n.say(", 1 request to shape")
                if count == 1
                else i18n.say(", {count} requests to shape", count=count)
            )
        if self.checks:
            count = len(self.checks)
            line += (
                i18n.say(", 1 failed check")
                if count == 1
                else i18n.say(", {count} failed checks", count=count)
            )
        if self.amendments:
            count = len(self.amendments)
            line += (
                i18n.say(", 1 amendment to accept")
                if count == 1
                else i18n.say(", {count} amendments to accept", count=count)
            )
        if self.ended:
            line += i18n.say(", {count} refused or failed", count=len(self.ended))
        if self.quiet:
            line += i18n.say(", {count} quiet", count=len(self.quiet))
        return line


class Reading:
    """The ledger as the inboxes of one moment read it: every task, and each task's thread
    read once, however many agents' inboxes are asked (the board asks every agent's); the
    last commits to every holder's files from one walk of history."""

    def __init__(self, repo: Repository, tasks: dict[str, Task] | None = None) -> None:
        self.repo = repo
        self.tasks = load_all(repo) if tasks is None else tasks  # `load_all`'s, as it ordered them
        self._threads: dict[str, Thread] = {}
        self._read: tuple[SenderTrust, set[str]] | None = None
        self._last: dict[str, datetime | None] = {}
        self._said: Thread | None = None
        self._commits: dict[str, datetime] | None = None

    def thread(self, task_id: str) -> Thread:
        found = self._threads.get(task_id)
        if found is None:
            if self._read is None:
                self._read = trust(self.repo), pending_paths(self.repo)
            trusted, pending = self._read
            found = read_thread(self.repo, task_id, trusted=trusted, pending=pending)
            self._threads[task_id] = found
        return found

    def conversations(self) -> Thread:
        """The messages about no task, read once."""
        if self._said is None:
            if self._read is None:
                self._read = trust(self.repo), pending_paths(self.repo)
            self._said = read_conversations(self.repo, trusted=self._read[0])
        return self._said

    def last(self, task: Task) -> datetime | None:
        """When the task last moved: a transition, a message, a commit to its files."""
        if task.id not in self._last:
            if self._commits is None:
                held = [t for t in self.tasks.values() if t.state in HELD]
                self._commits = last_commits(self.repo, held)
            self._last[task.id] = last_activity(self.repo, task, self._commits)
        return self._last[task.id]


def inbox(
    repo: Repository,
    agent: str,
    *,
    session: str | None = None,
    reading: Reading | None = None,
    labels: Sequence[str] = (),
) -> Inbox:
    """What waits for `agent`; with `session`, leaving out messages routed to its other
    sessions (`threads.for_session`). `reading`: the ledger as already read for another
    agent's inbox of the same moment. `labels`: the tasks to claim and those it sent that
    need it, only those carrying every one."""
    reading = reading or Reading(repo)
    tasks = reading.tasks
    questions: list[CheckedMessage] = []
    results: list[CheckedMessage] = []
    unread: list[CheckedMessage] = []
    refused: list[CheckedMessage] = []
    superseded: list[Lost] = []
    as_owner: set[str] = set()
    for task in tasks.values():
        superseded += lost_in(task.id, task.chain, agent)
        thread = reading.thread(task.id)
        opened = stored_opening(task)  # the task itself, waiting to be claimed: not unread
        # A message this agent has answered is read, whether or not it marked it so.
        answered = {
            c.record.in_reply_to
            for c in thread.messages
            if c.record.sender == agent and c.record.in_reply_to
        }
        for checked in thread.messages:
            if opened is not None and checked.record.msg_id == opened:
                continue
            if _owned_question(repo, tasks, task, checked, agent):
                questions.append(checked)
                as_owner.add(checked.record.msg_id)
                continue
            if checked.record.recipient != agent or checked.delivery == "pending":
                continue
            if not for_session(checked.record, agent, session):
                continue
            if not checked.ok:
                # A refused message on a closed task waits for nothing: history, not inbox.
                if task.state not in TERMINAL:
                    refused.append(checked)
                continue
            if checked.delivery == "sent" and checked.record.msg_id not in answered:
                unread.append(checked)
            if is_open_question(task, checked):
                questions.append(checked)
            elif waits_for_review(repo, task, thread, checked):
                results.append(checked)
    unread += _said_to(reading.conversations(), agent, session)
    wanted = set(labels)
    to_claim = tuple(
        sorted(
            (
                t
                for t in tasks.values()
                if t.state == "submitted"
                and t.envelope.recipient == agent
                and wanted <= set(t.envelope.labels)
            ),
            key=lambda t: t.rank,
        )
    )
    ready = frozenset(t.id for t in listing.ready(repo, agent))
    open_requests = [i for i in intakes(repo, agent) if i.is_open]
    ended, quiet = needing(
        sent(repo, agent, tasks=tasks, labels=labels, thread=reading.thread, last=reading.last)
    )
    return Inbox(
        agent,
        to_claim,
        ready,
        tuple(questions),
        tuple(results),
        tuple(unread),
        tuple(refused),
        tuple(superseded),
        frozenset(as_owner),
        tuple(i for i in open_requests if i.requester != agent),
        tuple(i for i in open_requests if i.requester == agent),
        tuple(ended),
        tuple(quiet),
        tuple(failed_checks(repo, tasks, agent)),
        tuple(pending_amendments(tasks, agent)),
        tasks,
    )


def _said_to(conversations: Thread, agent: str, session: str | None) -> list[CheckedMessage]:
    """Plain messages to `agent` about no task (interlink's untagged chat: "can you look at
    this?") that it has not answered: not replied to, and nothing said to their sender since.
    Without this an interlink peer's delegation by plain message went unseen."""
    said = conversations.messages
    last: dict[str, datetime] = {}  # peer -> when `agent` last wrote to it
    replied: set[str] = set()
    for checked in said:
        record = checked.record
        if record.sender == agent and record.recipient is not None:
            at = parse_time(record.at)
            last[record.recipient] = max(last.get(record.recipient, at), at)
            if record.in_reply_to:
                replied.add(record.in_reply_to)
    return [
        checked
        for checked in said
        if checked.ok
        and checked.delivery == "sent"
        and checked.record.recipient == agent
        and checked.record.sender != agent
        and checked.record.msg_id not in replied
        and (
            checked.record.sender not in last
            or last[checked.record.sender] < parse_time(checked.record.at)
        )
        and for_session(checked.record, agent, session)
    ]


def pending_amendments(tasks: Mapping[str, Task], agent: str) -> list[PendingAmendment]:
    """The amendments of the open tasks `agent` holds that wait for its acceptance."""
    from taskfs.core.amendments import changed_keys

    found = []
    for task in tasks.values():
        if task.holder != agent or task.state in TERMINAL or task.version is None:
            continue
        now = task.envelope.to_document()
        for entry in task.version.pending:
            record = entry.record
            changed = tuple(changed_keys(now, record.envelope or {}))
            found.append(
                PendingAmendment(task.id, record.by, entry.name, record.reason, changed, record.at)
            )
    return found


def failed_checks(repo: Repository, tasks: Mapping[str, Task], agent: str) -> list[FailedCheck]:
    """The working tasks `agent` holds whose latest acceptance run failed, run by someone else
    (the runner fleet answering its request, its sender), with nothing from `agent` about the
    task since: the holder is told why in the command's own words, whoever ran the check."""
    from taskfs.api.views.entries import task_evidence, task_messages

    found = []
    for task in tasks.values():
        if task.state != "working" or task.holder != agent:
            continue
        runs = task_evidence(repo, task.id)
        latest = runs[-1] if runs else None
        if latest is None or latest.kind != "check" or latest.passed or latest.by == agent:
            continue
        ran = parse_time_or_none(latest.at)
        answered = any(
            m.sender == agent and (ran is None or (parse_time_or_none(m.at) or ran) >= ran)
            for m in task_messages(repo, task.id)
        )
        if not answered:
            found.append(
                FailedCheck(
                    task.id,
                    latest.by or latest.source,
                    latest.exit_code,
                    latest.output or {},
                    latest.path,
                    latest.at,
                )
            )
    return found


def _owned_question(
    repo: Repository, tasks: Mapping[str, Task], task: Task, checked: CheckedMessage, agent: str
) -> bool:
    """An open question of a delegated task, put to someone else, in a chain `agent` owns."""
    record = checked.record
    if agent in (record.recipient, record.sender) or task.envelope.parent is None:
        return False
    if not checked.ok or checked.delivery == "pending" or not is_open_question(task, checked):
        return False
    from taskfs.api.messages.chain_owner import chain_owner

    return chain_owner(repo, task, tasks) == agent


def is_open_question(task: Task, checked: CheckedMessage) -> bool:
    """The question that put the task in `input_required` and that no answer has closed."""
    head = task.chain.head
    return (
        checked.record.status == "needs_input"
        and task.state == "input_required"
        and head is not None
        and head.record.message == checked.record.msg_id
    )


def waits_for_review(repo: Repository, task: Task, thread: Thread, checked: CheckedMessage) -> bool:
    """A `result` waits while the task is still `working`, it is the task's latest genuine
    result, neither a transition nor an evidence file has come after it, and the watcher has
    not said why it did not check it."""
    return awaits_check(repo, task, thread, checked) and not watcher_declined(thread, checked)


def awaits_check(repo: Repository, task: Task, thread: Thread, checked: CheckedMessage) -> bool:
    """A `result` of a `working` task, its latest genuine one, that neither a transition nor
    an evidence file has answered (a request the watcher declined still waits for a check)."""
    if checked.record.status != "result" or task.state != "working":
        return False
    results = [c for c in thread.messages if c.ok and c.record.status == "result"]
    if results[-1] is not checked:
        return False
    head = task.chain.head
    if head is not None and _came_after(thread, head.record, checked):
        return False
    later = [
        name
        for name in repo.list_dir(task.id, EVIDENCE)
        if STAMPED_NAME_RE.fullmatch(name) and name > checked.stored.name
    ]
    return not later


def _came_after(thread: Thread, transition: StatusRecord, checked: CheckedMessage) -> bool:
    """Whether the task's latest transition came after the message: a transition a message made
    (a peer's `update` claiming the task, say) came with that message, whose place in the
    thread says when it arrived (its `at` is the peer's clock, the transition's this ledger's);
    any other, by its time."""
    made_by = thread.find(transition.message) if transition.message else None
    if made_by is not None:
        return made_by.stored.name > checked.stored.name
    return parse_time(transition.at) > parse_time(checked.record.at)


def watcher_declined(thread: Thread, checked: CheckedMessage) -> bool:
    """Whether the watcher already said, in a committed message, why it did not check this
    result (taskfs.api.evidence.requests): its sender is told once."""
    from taskfs.api.messages.sending import WATCHER

    return any(
        c.record.sender == WATCHER
        and c.record.in_reply_to == checked.record.msg_id
        and c.delivery != "pending"
        for c in thread.messages
    )
