"""Sending messages about tasks (contract section 6).

A message that drives the lifecycle (`needs_input`, the answer to the open question, `failed`,
`canceled`) is committed together with its transition, through `stage_transition` (the same
rules and codes as `move`), in one commit or not at all. `result` moves nothing: it is recorded
so that the reviewer's inbox shows it and the check can act on it. Messages are looked up in
`taskfs.api.messages.threads`, delivered and marked read in `taskfs.api.messages.delivery`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import ValidationError

from taskfs.api.lifecycle.signing import act_pair
from taskfs.api.lifecycle.transitions import Staged, stage_transition
from taskfs.api.messages.openings import wire_ms
from taskfs.api.messages.threads import (
    NOT_ASKED,
    CheckedMessage,
    Thread,
    counterpart,
    named,
    read_thread,
    stem,
    submitter,
    trust,
)
from taskfs.api.tasks.filing import record_bytes
from taskfs.core import ledger_kinds, signing, wire
from taskfs.core import messages as rules
from taskfs.core.interlink import opened_task
from taskfs.core.layout import (
    MESSAGES,
    stamped_name,
)
from taskfs.core.lifecycle import MESSAGE_STATUSES, SEND_STATUSES, State, next_states
from taskfs.core.records import MessageRecord, ms_time
from taskfs.errors import Problem, TaskfsError, fail, problem
from taskfs.store.messages import Stored, agent_keys
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task, load_task
from taskfs.store.writer import Writer

LIFECYCLE_STATUSES = frozenset({"needs_input", "result", "failed", "canceled"})
# What the sender means a message to do, when a tool says so: `answer` must answer the open
# question (refused otherwise, rather than recorded as a reply that moves nothing); `note`
# moves nothing (an update from a submitted task's recipient is no claim then).
Intent = Literal["answer", "note"] | None


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
    intent: Intent = None,
) -> Sent:
    """Write a message from `agent` about the task, signed when `agent` has a key here, and
    make the transition it asks for, in one commit (`intent`: see `Intent`)."""
    now = now or datetime.now(timezone.utc)
    if status == "none":
        status = None
    pair = act_pair(repo, agent)
    with repo.writing() as writer:
        task, thread, item = _draft(
            repo,
            task_id,
            agent,
            text,
            now=now,
            pair=pair,
            status=status,
            in_reply_to=in_reply_to,
            to=to,
            session=session,
        )
        return act(repo, writer, task, thread, item, now=now, new=True, intent=intent)


# The statuses whose text is the transition's reason, with that transition's own rule for a
# blank one: `failed` needs a reason (`reason_required`, as `move` says), `canceled` may go
# without (agent_cancel without a reason).
REASONS = ("failed", "canceled")


def refuse_blank(text: str) -> None:
    """`message_empty` for a text that says nothing: every message an agent writes is asked
    this before it is drafted, whichever door it came through."""
    if not text.strip():
        raise fail("message_empty")


def _draft(
    repo: Repository,
    task_id: str,
    agent: str,
    text: str,
    *,
    now: datetime,
    pair: signing.KeyPair | None,
    status: str | None,
    in_reply_to: str | None = None,
    to: str | None = None,
    session: str | None = None,
) -> tuple[Task, Thread, Stored]:
    """The task, its thread and the new message as it would be stored."""
    task = load_task(repo, task_id, strict=True)
    if status not in REASONS:
        refuse_blank(text)
    thread = read_thread(repo, task_id, pending=NOT_ASKED)
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
    return task, thread, item


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


def _build(fields: dict[str, Any]) -> MessageRecord:
    data = {k: v for k, v in fields.items() if v is not None}
    if fields.get("status") is not None and fields["status"] not in MESSAGE_STATUSES:
        allowed = ", ".join(SEND_STATUSES)
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


def _default_recipient(task: Task, agent: str, replied: CheckedMessage | None) -> str:
    if replied is not None:
        return replied.record.sender
    recipient = counterpart(task, agent)
    if recipient is None:
        raise fail("usage", reason=f"task {task.id!r} names nobody to write to: use --to")
    return recipient


def act(
    repo: Repository,
    writer: Writer,
    task: Task,
    thread: Thread,
    item: Stored,
    *,
    now: datetime,
    new: bool,
    intent: Intent = None,
) -> Sent:
    """Check a message entering the ledger, stage the transition it asks for, commit both.
    `new`: the file is to be written; otherwise it is already in the working tree."""
    from taskfs.store import head_ledger

    head_ledger.refuse_loose(repo, task.id)  # a message waiting for delivery is not loose
    record = item.record
    target, staged = stage_message(repo, writer, task, thread, item, now=now, intent=intent)
    if new:
        writer.add(item.rel, record_bytes(record.to_document()))
    else:
        writer.include(item.rel)
    moved = (staged.before, target) if staged is not None and target is not None else None
    _project_text(repo, writer, task.id, staged, record.text)
    commit = writer.commit(_commit_message(record, moved), record.sender, when=now)
    return Sent(record, item.rel, commit, target or task.state, moved)


def _project_text(
    repo: Repository, writer: Writer, task_id: str, staged: Staged | None, text: str
) -> None:
    """The task's row with the message's text added to what `ls --grep` searches, for the
    commit to store (`Writer.project`): a reader after a message needs no catching up."""
    from taskfs.readmodel.projection import text_of
    from taskfs.store.index import summaries

    ledger = summaries(repo)
    before = ledger.text(task_id)
    row = staged.after if staged is not None else ledger.get(task_id)
    if before is not None and row is not None:
        writer.project(row._replace(text=f"{before}\n{text_of(text)}" if before else text_of(text)))


def stage_message(
    repo: Repository,
    writer: Writer,
    task: Task,
    thread: Thread,
    item: Stored,
    *,
    now: datetime,
    intent: Intent = None,
) -> tuple[State | None, Staged | None]:
    """Every check of a message entering the ledger and the transition it asks for, added to
    `writer` only when nothing is wrong (the message file itself is the caller's to add)."""
    record = item.record
    others = [c for c in thread.messages if c.stored.name != item.name]
    seen = {rules.replay_key(c.record) for c in others if c.in_place}
    problems = rules.authenticity(record, trust(repo, entering=True))
    problems += rules.placement(record, task.id, item.own_id, seen)
    problems += rules.freshness(record, now)
    replied = None
    if record.in_reply_to is not None:
        replied = next(
            (c for c in others if c.in_place and c.record.msg_id == record.in_reply_to), None
        )
        # A reply to an opening not kept as a message file (`<task>/envelope`) is writing
        # about the task: the envelope is no message file.
        if replied is None and opened_task(record.in_reply_to) != task.id:
            problems.append(problem("message_not_found", msg_id=record.in_reply_to))
    open_question = _open_question(task)
    owner = _answering_owner(repo, task, record, open_question)
    sender_problems = _sender_problems(task, record, replied, owner)
    problems += sender_problems
    # An agent that may not write here may not move the task either: say it once.
    target = (
        None
        if sender_problems or intent == "note"
        else rules.effect(record, task.state, open_question, task.envelope.recipient)
    )
    if intent == "answer" and target != "working" and not sender_problems:
        problems.append(_not_an_answer(task, record, replied, open_question))
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


def _not_an_answer(
    task: Task, record: MessageRecord, replied: CheckedMessage | None, open_question: str | None
) -> Problem:
    """Why a message meant as an answer answers nothing: the question was one's own (or put
    to someone else), or it is not the task's open question."""
    if replied is not None and replied.record.recipient != record.sender:
        return problem(
            "message_misaddressed",
            msg_id=replied.record.msg_id,
            msg_text=f" {replied.record.msg_id!r}",
            to=replied.record.recipient,
            agent=record.sender,
        )
    why = (
        f" (message {record.in_reply_to!r} is not its open question {open_question!r})"
        if open_question
        else " (it has no open question to answer)"
    )
    return problem(
        "transition_not_allowed",
        id=task.id,
        from_state=task.state,
        to_state="working",
        why_text=why,
        next_states=next_states(task.state),
    )


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
    chain (`taskfs.api.messages.chain_owner`); otherwise None."""
    if open_question is None or record.in_reply_to != open_question:
        return None
    from taskfs.api.messages.chain_owner import chain_owner

    owner = chain_owner(repo, task)
    return owner if owner is not None and owner == record.sender else None


# The agent name the watcher answers check requests under (taskfs.api.evidence.requests).
WATCHER = ledger_kinds.WATCHER


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
    return named(token, ((c.record.msg_id, stem(c.stored.name)) for c in placed)) or given


def request_check(
    repo: Repository, task_id: str, agent: str, text: str, *, now: datetime | None = None
) -> Sent:
    """The recipient asks for its result to be checked: a `result` message (contract section
    6), which a watcher whose runner policy allows the command answers with evidence and, on a
    pass, completion. It never completes the task by itself. `now`: when it was asked (a check
    run before the message is written dates it to before the run)."""
    text = text or "please check my result"
    return send(repo, task_id, agent, text, status="result", now=now)


def refuse_check_request(repo: Repository, task_id: str, agent: str, text: str) -> None:
    """Raise what `request_check` would refuse now, writing nothing: a caller that runs the
    check before it commits the request (so that a stopped check leaves nothing) asks this
    first, so that a request that cannot be made runs no command. `request_check` checks
    again under the lock."""
    now = datetime.now(timezone.utc)
    pair = act_pair(repo, agent)
    text = text or "please check my result"
    task, thread, item = _draft(repo, task_id, agent, text, now=now, pair=pair, status="result")
    from taskfs.store import head_ledger

    head_ledger.refuse_loose(repo, task.id)
    stage_message(repo, Writer(repo), task, thread, item, now=now)
