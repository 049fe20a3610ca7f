"""Messages about tasks (contract section 6): send, deliver, list, mark read, look one up.

A message that drives the lifecycle (`needs_input`, the answer to the open question, `failed`,
`canceled`) is committed together with its transition, through `stage_transition` (the same
rules and codes as `move`), in one commit or not at all. `result` moves nothing: it is recorded
so that the reviewer's inbox shows it and the check can act on it.

Every message is checked whenever it is read (`taskfs.core.messages` says what and when); one
that fails is shown with its codes and never acted on.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from taskfs.api.submit import FileReport, record_bytes
from taskfs.api.transitions import Staged, stage_transition
from taskfs.core import messages as rules
from taskfs.core import signing, wire
from taskfs.core.interlink import opened_task
from taskfs.core.layout import (
    CONVERSATIONS,
    MESSAGES,
    READS,
    format_time,
    message_location,
    stamped_name,
)
from taskfs.core.lifecycle import MESSAGE_STATUSES, State
from taskfs.core.records import MessageRecord, ReadRecord, ms_time
from taskfs.errors import Problem, TaskfsError, fail, problem
from taskfs.store import keys
from taskfs.store.messages import (
    Stored,
    agent_keys,
    find_task_of,
    load_conversations,
    load_message_file,
    load_messages,
    load_reads,
    message_index,
    pending_paths,
)
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task, load_task
from taskfs.store.writer import Writer

Delivery = Literal["pending", "sent", "read"]
# Acting on a message needs its neighbours' checks, not whether git holds them yet: this spares
# a `git status` on every send.
_NOT_ASKED: frozenset[str] = frozenset()
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
LIFECYCLE_STATUSES = frozenset({"needs_input", "result", "failed", "canceled"})


@dataclass(frozen=True)
class CheckedMessage:
    """A message as read, with every reason it may not be acted on, and how far it got."""

    stored: Stored
    problems: tuple[Problem, ...]
    delivery: Delivery

    @property
    def record(self) -> MessageRecord:
        return self.stored.record

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def in_place(self) -> bool:
        return not any(p.code == "message_replayed" for p in self.problems)


@dataclass(frozen=True)
class Thread:
    """Every message of one task, checked, and the files that could not be read."""

    task_id: str
    messages: tuple[CheckedMessage, ...]
    problems: tuple[Problem, ...] = ()

    def find(self, msg_id: str) -> CheckedMessage | None:
        for checked in self.messages:
            if checked.in_place and checked.record.msg_id == msg_id:
                return checked
        return None


def trust(repo: Repository) -> rules.SenderTrust:
    return rules.SenderTrust(agent_keys(repo), repo.config.require_signed_messages)


def read_thread(
    repo: Repository,
    task_id: str,
    *,
    trusted: rules.SenderTrust | None = None,
    pending: AbstractSet[str] | None = None,
) -> Thread:
    trusted = trusted or trust(repo)
    pending = pending_paths(repo, task_id) if pending is None else pending
    stored, problems = load_messages(repo, task_id, pending)
    reads, read_problems = load_reads(repo, task_id)
    read_by = {(msg_id, mark.by) for mark in reads for msg_id in mark.msg_ids}
    seen: set[tuple[str, str]] = set()
    out: list[CheckedMessage] = []
    for item in stored:
        record = item.record
        found = rules.authenticity(record, trusted)
        placed = rules.placement(record, task_id, item.own_id, seen)
        if not placed:
            seen.add(rules.replay_key(record))
        delivery: Delivery = "sent"
        if not item.committed:
            delivery = "pending"
        elif (record.msg_id, record.recipient) in read_by:
            delivery = "read"
        out.append(CheckedMessage(item, tuple(found + placed), delivery))
    return Thread(task_id, tuple(out), tuple(problems + read_problems))


def read_conversations(repo: Repository, *, trusted: rules.SenderTrust | None = None) -> Thread:
    """The messages about no task (interlink's plain conversation), checked like a thread."""
    if not (repo.root / CONVERSATIONS).is_dir():
        return Thread("", ())
    trusted = trusted or trust(repo)
    pending = {
        path
        for status, path in repo.git.worktree_changes(CONVERSATIONS)
        if status == "??" or "A" in status
    }
    stored, problems = load_conversations(repo, pending)
    seen: set[tuple[str, str]] = set()
    out: list[CheckedMessage] = []
    for item in stored:
        found = rules.authenticity(item.record, trusted)
        found += rules.placement(item.record, None, item.own_id, seen)
        seen.add(rules.replay_key(item.record))
        out.append(CheckedMessage(item, tuple(found), "sent" if item.committed else "pending"))
    return Thread("", tuple(out), tuple(problems))


# -- sending -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Sent:
    record: MessageRecord
    file: str
    commit: str
    state: State
    transition: tuple[State, State] | None

    @property
    def check_requested(self) -> bool:
        return self.record.status == "result"


def send(
    repo: Repository,
    task_id: str,
    agent: str,
    text: str,
    *,
    status: str | None = None,
    in_reply_to: str | None = None,
    to: str | None = None,
    session: str | None = None,
    now: datetime | None = None,
) -> Sent:
    """Write a message from `agent` about the task, signed when `agent` has a key here, and
    make the transition it asks for, in one commit."""
    now = now or datetime.now(timezone.utc)
    if status == "none":
        status = None
    pair = keys.load_private("agent", agent)
    with repo.writing() as writer:
        task = load_task(repo, task_id, strict=True)
        thread = read_thread(repo, task_id, pending=_NOT_ASKED)
        name = stamped_name(now)
        in_reply_to = replying_to(task, thread, agent, status, in_reply_to)
        replied = thread.find(in_reply_to) if in_reply_to else None
        recipient = to or _default_recipient(task, agent, replied)
        record = new_record(
            repo,
            agent,
            recipient,
            text,
            now=now,
            pair=pair,
            task_id=task_id,
            status=status,
            in_reply_to=in_reply_to,
            session=session,
        )
        item = Stored(name, repo.task_rel(task_id, MESSAGES, name), record, committed=False)
        return _act(repo, writer, task, thread, item, now=now, new=True)


def new_record(
    repo: Repository,
    agent: str,
    recipient: str,
    text: str,
    *,
    now: datetime,
    pair: signing.KeyPair | None,
    task_id: str | None,
    status: str | None = None,
    in_reply_to: str | None = None,
    session: str | None = None,
) -> MessageRecord:
    """A new message as interlink has it: an opaque msg_id, `ts` in milliseconds, kind
    `message`, and, when `agent` has a key here, interlink's signature, addressed to the
    recipient's committed key (`recipient_unknown` when it has none)."""
    ts = wire_ms(now)
    record = _build(
        {
            "msg_id": wire.new_msg_id(),
            "task_id": task_id,
            "from": agent,
            "to": recipient,
            "status": status,
            "in_reply_to": in_reply_to,
            "at": ms_time(ts),
            "ts": ts,
            "kind": "message",
            "text": text,
            "session": session,
        }
    )
    if pair is None:
        return record
    to_key = agent_keys(repo).get(recipient)
    if to_key is None:
        raise fail("recipient_unknown", agent=recipient)
    return rules.signed(record, pair, to_key)


def wire_ms(moment: datetime) -> int:
    """`moment` as unix milliseconds (interlink's `ts`)."""
    return (moment - _EPOCH) // timedelta(milliseconds=1)


def _build(fields: dict[str, Any]) -> MessageRecord:
    data = {k: v for k, v in fields.items() if v is not None}
    if fields.get("status") is not None and fields["status"] not in MESSAGE_STATUSES:
        allowed = ", ".join((*MESSAGE_STATUSES, "none"))
        raise fail("invalid_value", field="status", reason=f"use one of {allowed}")
    try:
        return MessageRecord.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False, include_input=False):
            where = ".".join(str(p) for p in error["loc"]) or "message"
            reason = str(error["msg"]).removeprefix("Value error, ")
            problems.append(problem("invalid_value", field=where, reason=reason))
        raise TaskfsError(problems) from None


def submitter(task: Task) -> str | None:
    """Who sent the task: its `from`, else the agent that submitted it."""
    if task.envelope.sender:
        return task.envelope.sender
    return task.chain.links[0].record.by if task.chain.links else None


def counterpart(task: Task, agent: str) -> str | None:
    """Whom a party of the task talks to: the sender talks to the worker, everyone else to
    the sender."""
    sender = submitter(task)
    if agent == sender:
        return task.chain.holder or task.envelope.recipient
    return sender


def _default_recipient(task: Task, agent: str, replied: CheckedMessage | None) -> str:
    if replied is not None:
        return replied.record.sender
    recipient = counterpart(task, agent)
    if recipient is None:
        raise fail("usage", reason=f"task {task.id!r} names nobody to write to: use --to")
    return recipient


def _act(
    repo: Repository,
    writer: Writer,
    task: Task,
    thread: Thread,
    item: Stored,
    *,
    now: datetime,
    new: bool,
) -> Sent:
    """Check a message entering the ledger, stage the transition it asks for, commit both.
    `new`: the file is to be written; otherwise it is already in the working tree."""
    from taskfs.store import head_ledger

    head_ledger.refuse_loose(repo, task.id)  # a message waiting for delivery is not loose
    record = item.record
    target, staged = stage_message(repo, writer, task, thread, item, now=now)
    if new:
        writer.add(item.rel, record_bytes(record.to_document()))
    else:
        writer.include(item.rel)
    moved = (staged.before, target) if staged is not None and target is not None else None
    commit = writer.commit(_commit_message(record, moved), record.sender, when=now)
    return Sent(record, item.rel, commit, target or task.state, moved)


def stage_message(
    repo: Repository,
    writer: Writer,
    task: Task,
    thread: Thread,
    item: Stored,
    *,
    now: datetime,
) -> tuple[State | None, Staged | None]:
    """Every check of a message entering the ledger and the transition it asks for, added to
    `writer` only when nothing is wrong (the message file itself is the caller's to add)."""
    record = item.record
    others = [c for c in thread.messages if c.stored.name != item.name]
    seen = {rules.replay_key(c.record) for c in others if c.in_place}
    problems = rules.authenticity(record, trust(repo))
    problems += rules.placement(record, task.id, item.own_id, seen)
    problems += rules.freshness(record, now)
    replied = None
    if record.in_reply_to is not None:
        replied = next(
            (c for c in others if c.in_place and c.record.msg_id == record.in_reply_to), None
        )
        # A reply to the task's opening (interlink's first message, `<task>/envelope`) is
        # writing about the task: the envelope is no message file.
        if replied is None and opened_task(record.in_reply_to) != task.id:
            problems.append(problem("message_not_found", msg_id=record.in_reply_to))
    open_question = _open_question(task)
    owner = _answering_owner(repo, task, record, open_question)
    sender_problems = _sender_problems(task, record, replied, owner)
    problems += sender_problems
    # An agent that may not write here may not move the task either: say it once.
    target = (
        None
        if sender_problems
        else rules.effect(record, task.state, open_question, task.envelope.recipient)
    )
    if target == "working" and replied is not None:
        # Answering acts on the question: it must be genuine and put to this agent.
        # The chain's owner may answer a question put to the agent that delegated to the asker.
        addressee = replied.record.recipient if record.sender == owner else record.sender
        problems += [*replied.problems, *rules.addressed(replied.record, addressee)]
    staged: Staged | None = None
    if target is not None:
        try:
            staged = stage_transition(
                repo,
                # With a refusal already found, the transition's own codes are still named, but
                # nothing reaches the writer that a caller may go on using.
                Writer(repo) if problems else writer,
                task.id,
                target,
                record.sender,
                now=now,
                reason=record.text if target in ("failed", "canceled") else None,
                message=record.msg_id,
                owner=owner,
            )
        except TaskfsError as exc:
            problems += [_reason_is_text(p, record) for p in exc.problems]
    if problems:
        raise TaskfsError(problems)
    return target, staged


def _reason_is_text(found: Problem, record: MessageRecord) -> Problem:
    """A message's text is its transition's reason: say so, not `--reason`."""
    if found.code != "reason_required":
        return found
    how = f'taskfs send {record.task_id} --status {record.status} "why" (the text is the reason)'
    return problem("reason_required", **{**found.data, "how": how})


def _answering_owner(
    repo: Repository, task: Task, record: MessageRecord, open_question: str | None
) -> str | None:
    """The sender, when it answers the task's open question as the owner of its delegation
    chain (`taskfs.api.chain_owner`); otherwise None."""
    if open_question is None or record.in_reply_to != open_question:
        return None
    from taskfs.api.chain_owner import chain_owner

    owner = chain_owner(repo, task)
    return owner if owner is not None and owner == record.sender else None


# The agent name the watcher answers check requests under (taskfs.api.check_requests).
WATCHER = "watcher"


def _sender_problems(
    task: Task, record: MessageRecord, replied: CheckedMessage | None, owner: str | None = None
) -> list[Problem]:
    if (
        record.sender == WATCHER
        and record.status is None
        and replied is not None
        and replied.record.status == "result"
        and record.recipient == replied.record.sender
    ):
        return []  # the watcher says why it did not answer a check request: a note, no move
    parties = {submitter(task), task.envelope.recipient, task.chain.holder, owner} - {None}
    invited = replied is not None and replied.record.recipient == record.sender
    if record.sender not in parties and not invited:
        return [
            problem(
                "agent_not_allowed",
                agent=record.sender,
                action="message",
                action_text=f"write about task {task.id!r}",
                reason="only a party to the task, or an agent it wrote to, may",
            )
        ]
    expected = counterpart(task, record.sender)
    if record.status in LIFECYCLE_STATUSES and expected and record.recipient != expected:
        # The message is not stored: name the party it must go to, not its id.
        return [problem("message_misaddressed", to=record.recipient, agent=expected, task=task.id)]
    return []


def _open_question(task: Task) -> str | None:
    """The question that put the task in `input_required`, which an answer must reply to."""
    head = task.chain.head
    if head is None or task.state != "input_required":
        return None
    return head.record.message


def _commit_message(record: MessageRecord, moved: tuple[State, State] | None) -> str:
    kind = record.status or "message"
    subject = f"taskfs: {record.task_id} {kind} from {record.sender} to {record.recipient}"
    trailers = [f"Taskfs-Task: {record.task_id}", f"Taskfs-Message: {record.msg_id}"]
    if moved is not None:
        subject += f": {moved[0]} -> {moved[1]}"
        trailers.append(f"Taskfs-Transition: {moved[0]} -> {moved[1]}")
    trailers.append(f"Taskfs-Agent: {record.sender}")
    return subject + "\n\n" + "\n".join(trailers) + "\n"


# -- delivering message files written elsewhere --------------------------------------------


@dataclass(frozen=True)
class Delivered:
    path: str
    sent: Sent | None = None
    problems: tuple[Problem, ...] = ()
    already: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems


def deliver(
    repo: Repository, paths: Sequence[str] = (), *, now: datetime | None = None
) -> list[Delivered]:
    """Act on message files written into `messages/` but not committed (by an agent without
    git, or copied in): check each, make its transition, commit both. Refused files stay
    where they are, uncommitted, and are answered with their codes."""
    now = now or datetime.now(timezone.utc)
    pending = pending_paths(repo)
    if paths:
        targets = [_repo_relative(repo, p) for p in paths]
    else:
        targets = sorted(
            p for p in pending if p.split("/")[-2:-1] == [MESSAGES] and p.endswith(".yaml")
        )
    return [_deliver_one(repo, rel, now) for rel in targets]


def _repo_relative(repo: Repository, label: str) -> str:
    path = Path(label)
    absolute = (path if path.is_absolute() else Path.cwd() / path).resolve()
    try:
        return absolute.relative_to(repo.root).as_posix()
    except ValueError:
        return label


def _deliver_one(repo: Repository, rel: str, now: datetime) -> Delivered:
    try:
        with repo.writing() as writer:
            item = load_message_file(repo, rel, pending_paths(repo))
            if item.committed:
                return Delivered(rel, already=True)
            task = load_task(repo, rel.split("/")[-3], strict=True)
            thread = read_thread(repo, task.id, pending=_NOT_ASKED)
            return Delivered(rel, sent=_act(repo, writer, task, thread, item, now=now, new=False))
    except TaskfsError as exc:
        return Delivered(rel, problems=exc.problems)


# -- reading -------------------------------------------------------------------------------


def file_reports(repo: Repository, task_id: str) -> list[FileReport]:
    """`validate`'s view of a task's message and read files: malformed files, and messages
    that fail their signature or are copies (unsigned ones are shown, not reported: whether
    they were acceptable depended on the configuration when they were sent)."""
    if not repo.list_dir(task_id, MESSAGES) and not repo.list_dir(task_id, READS):
        return []
    # Whether a file is committed does not matter here: no need to ask git.
    thread = read_thread(repo, task_id, pending=set())
    reports: dict[str, list[Problem]] = {}
    for checked in thread.messages:
        reports[checked.stored.rel] = [
            p for p in checked.problems if p.code in ("signature_invalid", "message_replayed")
        ]
    for found in thread.problems:
        reports.setdefault(str(found.data.get("path", "")), []).append(found)
    for name in repo.list_dir(task_id, READS):
        reports.setdefault(repo.task_rel(task_id, READS, name), [])
    return [FileReport(path, tuple(found)) for path, found in sorted(reports.items())]


def messages(repo: Repository, task_id: str) -> Thread:
    load_task(repo, task_id)
    return read_thread(repo, task_id)


def conversation(
    repo: Repository, agent: str, peer: str, *, session: str | None = None
) -> list[CheckedMessage]:
    """Every message between `agent` and `peer`, about any task, oldest first; with `session`,
    only what that session of `agent` should see (`for_session`)."""
    pair = {agent, peer}
    trusted, pending = trust(repo), pending_paths(repo)
    threads = [
        read_thread(repo, task_id, trusted=trusted, pending=pending) for task_id in repo.task_ids()
    ]
    threads.append(read_conversations(repo, trusted=trusted))
    found = [
        checked
        for thread in threads
        for checked in thread.messages
        if (
            {checked.record.sender, checked.record.recipient} == pair
            or (agent == peer and checked.record.sender == checked.record.recipient == agent)
        )
        and for_session(checked.record, agent, session)
    ]
    return sorted(found, key=lambda c: (c.record.at, c.record.msg_id))


def for_session(record: MessageRecord, agent: str, session: str | None) -> bool:
    """Whether one session of `agent` should see a message: a message to `agent` that names a
    session goes to that session only; everything else (no session named, no session asked,
    or written by `agent` itself) is for every session."""
    return (
        session is None
        or record.session is None
        or record.recipient != agent
        or record.session == session
    )


def pending(repo: Repository, sender: str | None = None) -> list[CheckedMessage]:
    """Message files written but not committed yet (by `sender`, when named), oldest first:
    what `deliver` would act on."""
    waiting = pending_paths(repo)
    task_ids = sorted({p.split("/")[-3] for p in waiting if p.split("/")[-2:-1] == [MESSAGES]})
    trusted = trust(repo)
    found = [
        checked
        for task_id in task_ids
        if repo.has_task(task_id)
        for checked in read_thread(repo, task_id, trusted=trusted, pending=waiting).messages
        if checked.delivery == "pending" and sender in (None, checked.record.sender)
    ]
    return sorted(found, key=lambda c: (c.record.at, c.record.msg_id))


def locate(repo: Repository, msg_id: str, index: dict[str, str] | None = None) -> str | None:
    """The task a message about a task belongs to: an older id names it; an opaque one is
    found by the msg_id its file holds (in `index`, when the caller made one), never by a file
    name."""
    location = message_location(msg_id)
    if location is not None:
        return location[0] if repo.has_task(location[0]) else None
    return index.get(msg_id) if index is not None else find_task_of(repo, msg_id)


@dataclass(frozen=True)
class Status:
    message: CheckedMessage
    task_state: State


def message_status(repo: Repository, msg_id: str) -> Status:
    """Where a message got to (`pending`, `sent`, `read`) and the state of its task."""
    task_id = locate(repo, msg_id)
    if task_id is None:
        raise fail("message_not_found", msg_id=msg_id)
    task = load_task(repo, task_id)
    found = read_thread(repo, task.id).find(msg_id)
    if found is None:
        raise fail("message_not_found", msg_id=msg_id)
    return Status(found, task.state)


# -- read marks ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Marked:
    marked: tuple[str, ...]
    already: tuple[str, ...]
    commit: str | None


def mark_read(
    repo: Repository, agent: str, msg_ids: Iterable[str], *, now: datetime | None = None
) -> Marked:
    """Mark messages addressed to `agent` as read: one `reads/` file per task, one commit."""
    now = now or datetime.now(timezone.utc)
    wanted = list(dict.fromkeys(msg_ids))
    if not wanted:
        raise fail("usage", reason="name at least one message id")
    with repo.writing() as writer:
        threads: dict[str, Thread] = {}
        problems: list[Problem] = []
        marks: dict[str, list[str]] = {}
        already: list[str] = []
        opaque = [m for m in wanted if message_location(m) is None]
        index = message_index(repo) if opaque else None
        for msg_id in wanted:
            task_id = locate(repo, msg_id, index)
            if task_id is None:
                problems.append(problem("message_not_found", msg_id=msg_id))
                continue
            thread = threads.get(task_id) or read_thread(repo, task_id)
            threads[task_id] = thread
            found = thread.find(msg_id)
            if found is None or found.delivery == "pending":
                problems.append(problem("message_not_found", msg_id=msg_id))
                continue
            refused = [*found.problems, *rules.addressed(found.record, agent)]
            problems += refused
            if not refused and found.delivery == "read":
                already.append(msg_id)
            elif not refused:
                marks.setdefault(task_id, []).append(msg_id)
        if problems:
            raise TaskfsError(problems)
        if not marks:
            return Marked((), tuple(already), None)
        for task_id, ids in marks.items():
            mark = ReadRecord(task_id=task_id, by=agent, at=format_time(now), msg_ids=tuple(ids))
            rel = repo.task_rel(task_id, READS, stamped_name(now))
            writer.add(rel, record_bytes(mark.to_document()))
        marked = tuple(m for ids in marks.values() for m in ids)
        subject = f"taskfs: {len(marked)} message(s) read by {agent}"
        trailers = "".join(f"Taskfs-Task: {task_id}\n" for task_id in marks)
        commit = writer.commit(f"{subject}\n\n{trailers}Taskfs-Agent: {agent}\n", agent, when=now)
    return Marked(marked, tuple(already), commit)


def replying_to(
    task: Task, thread: Thread, agent: str, status: str | None, given: str | None
) -> str | None:
    """The msg_id a new message answers. `given` may be the id, a unique prefix of it, the
    file stem it is stored under, or `last` (the latest message to `agent`). A plain message
    without one, from the agent the task's open question was put to, answers that question:
    there is only ever one open per task."""
    if given is None:
        if status is not None or task.state != "input_required":
            return None
        head = task.chain.head
        asked = thread.find(head.record.message) if head and head.record.message else None
        return asked.record.msg_id if asked and asked.record.recipient == agent else None
    token = given.strip()
    if not token or thread.find(token) is not None:
        return token
    placed = [c for c in thread.messages if c.in_place]
    if token.lower() == "last":
        mine = [c for c in placed if c.record.recipient == agent]
        return mine[-1].record.msg_id if mine else given
    found = {
        c.record.msg_id
        for c in placed
        if c.record.msg_id.startswith(token) or c.stored.name.rsplit(".", 1)[0] == token
    }
    if len(found) > 1:
        raise fail(
            "message_not_found",
            msg_id=given,
            why_text=f" (the prefix fits {len(found)} messages: give more of the id)",
        )
    return found.pop() if found else given
