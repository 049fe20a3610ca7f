"""Requests that are not yet a contract: opening, completing and canceling an intake (contract
section 12; the files are `taskfs.core.intake`'s); the recipient's proposals and their
acceptance are `taskfs.api.intake.proposals`, which adds its requests through `add_within`.

Every door calls these: `taskfs intake` and `send` on the command line, the MCP tools, A2A's
`SendMessage` with a text part, and interlink's prose opening. A request is kept whatever it
lacks, and answered with every problem of the envelope it has given so far. The request that
makes the envelope whole submits the task, under the intake's id, through the code `taskfs new`
runs (`submit_within`), in the same commit as the request itself; a request the rules between
tasks refuse (an ownership conflict, a cycle) is kept too, and answered with those refusals.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import NamedTuple

from taskfs import i18n
from taskfs.api.tasks import ids, submit
from taskfs.api.tasks.filing import record_bytes
from taskfs.core import layout, yamlio
from taskfs.core.envelope import validate_envelope
from taskfs.core.intake import (
    Door,
    Entry,
    Intake,
    IntakeRecord,
)
from taskfs.core.interlink import text_fields
from taskfs.core.layout import INTAKE, format_time, stamped_name
from taskfs.errors import Problem, TaskfsError, fail
from taskfs.store import index
from taskfs.store.intake_reader import has_intake, is_intake, load_intake
from taskfs.store.repository import Repository
from taskfs.store.writer import Writer


class Answer(NamedTuple):
    """An intake after an act on it: what still keeps it from being a task (`problems`:
    empty once submitted), whether this act submitted it, the commit and the intake file it
    added; for an acceptance, the proposal it accepted and the envelope it submitted."""

    intake: Intake
    problems: tuple[Problem, ...]
    submitted: bool
    commit: str | None
    file: str | None = None
    accepted: str | None = None
    envelope: dict[str, object] | None = None

    @property
    def id(self) -> str:
        return self.intake.id

    @property
    def state(self) -> str:
        return "submitted" if self.submitted else self.intake.state


class Extra(NamedTuple):
    """A file a door commits with the act: the signed message that carried the request, or
    the answer it sends back (both in the task's `messages/`), and who wrote it."""

    rel: str
    data: bytes
    by: str = ""


# A door's answer to a request, made once it is known what became of it (None: no file).
Reply = Callable[[Answer], Extra | None]


def request(
    repo: Repository,
    agent: str,
    text: str,
    *,
    task_id: str | None = None,
    to: str | None = None,
    door: Door,
    message: str | None = None,
    context: str | None = None,
    extra: Sequence[Extra] = (),
    now: datetime | None = None,
) -> Answer | submit.Submitted:
    """Words arriving at a door from `agent`, on `task_id` (or none). On the requester's open
    intake they are its next request. A whole, valid envelope is submitted as `taskfs new`
    submits it (its refusals are refusals). Anything else (prose, a partial or faulty envelope)
    is kept as a new intake, under the id it names or a new one, and answered."""
    if task_id is not None and is_intake(repo, task_id):
        return add_request(repo, task_id, agent, text, message=message, extra=extra, now=now)
    fields = text_fields(text) or {}
    sender, named_to, named_id = fields.get("from"), fields.get("to"), fields.get("id")
    if sender is not None and sender != agent:
        raise fail(
            "agent_not_allowed",
            agent=agent,
            action="submit",
            action_text="send this envelope",
            reason=f"the envelope says it is from {sender!r}",
        )
    if to is not None and named_to not in (None, to):
        raise fail("invalid_value", field="to", reason=f"the request is addressed to {to!r}")
    if task_id is not None and named_id not in (None, task_id):
        raise fail("invalid_value", field="id", reason=f"the request is on {task_id!r}")
    found = validate_envelope(fields)[1] if fields else []
    if isinstance(named_id, str) and not layout.is_task_id(named_id):
        raise TaskfsError(found)  # no place to keep it: every problem, as `new` names them
    if fields and not found:
        if task_id is not None or to is not None:
            fields = {**fields, "id": task_id or named_id, "to": to or named_to}
        kept = {k: v for k, v in fields.items() if v is not None}  # a priority 0 is a value
        source = submit.Source(door, yamlio.dump(kept).encode())
        return submit.submit(repo, [source], agent)[0]
    return open_request(
        repo,
        agent,
        text,
        to=to or (named_to if isinstance(named_to, str) else None),
        task_id=task_id or (named_id if isinstance(named_id, str) else None),
        door=door,
        message=message,
        context=context,
        extra=extra,
        now=now,
    )


def open_request(
    repo: Repository,
    requester: str,
    text: str,
    *,
    to: str | None = None,
    task_id: str | None = None,
    door: Door = "cli",
    message: str | None = None,
    context: str | None = None,
    extra: Sequence[Extra] = (),
    now: datetime | None = None,
    discovered_from: str | None = None,
) -> Answer:
    """Keep `requester`'s words as a new intake under `task_id` (or a new id); a text that is
    a whole envelope submits the task at once."""
    with repo.writing() as writer:
        return open_within(
            repo,
            writer,
            requester,
            text,
            to=to,
            task_id=task_id,
            door=door,
            message=message,
            context=context,
            extra=extra,
            now=now,
            discovered_from=discovered_from,
        )


def open_within(
    repo: Repository,
    writer: Writer,
    requester: str,
    text: str,
    *,
    to: str | None = None,
    task_id: str | None = None,
    door: Door = "cli",
    message: str | None = None,
    context: str | None = None,
    extra: Sequence[Extra] = (),
    reply: Reply | None = None,
    now: datetime | None = None,
    discovered_from: str | None = None,
) -> Answer:
    """`open_request` under a writer the caller holds (a door that imports messages in
    batches); `reply` makes the door's answer, committed with the request."""
    check_agent(requester, "agent")
    if to is not None:
        check_agent(to, "to")
    _said(text)
    if task_id is not None and not layout.is_task_id(task_id):
        raise fail("invalid_task_id", field="id", value=task_id)
    now = now or datetime.now(timezone.utc)
    if task_id is None:
        task_id = ids.fresh_id(repo)
    else:  # any folder takes it, the requester's own request too (more words go to that)
        ids.refuse_taken(repo, [task_id])
    record = IntakeRecord(
        intake=task_id,
        kind="request",
        by=requester,
        at=format_time(now),
        to=to,
        door=door,
        text=text,
        message=message,
        context=context or None,
        discovered_from=discovered_from,
    )
    return _record(repo, writer, None, record, now=now, extra=extra, reply=reply)


def add_request(
    repo: Repository,
    task_id: str,
    requester: str,
    text: str,
    *,
    accepts: str | None = None,
    message: str | None = None,
    extra: Sequence[Extra] = (),
    now: datetime | None = None,
) -> Answer:
    """More of the requester's words on its open intake: missing fields, a whole envelope, or
    prose. Only the requester adds requests (anyone else's words are messages)."""
    with repo.writing() as writer:
        return add_within(
            repo,
            writer,
            task_id,
            requester,
            text,
            accepts=accepts,
            message=message,
            extra=extra,
            now=now,
        )


def add_within(
    repo: Repository,
    writer: Writer,
    task_id: str,
    requester: str,
    text: str,
    *,
    accepts: str | None = None,
    message: str | None = None,
    extra: Sequence[Extra] = (),
    reply: Reply | None = None,
    now: datetime | None = None,
) -> Answer:
    """`add_request` under a writer the caller holds; `reply` as for `open_within`."""
    now = now or datetime.now(timezone.utc)
    _said(text)
    intake = open_intake(repo, task_id)
    if requester != intake.requester:
        raise fail(
            "agent_not_allowed",
            agent=requester,
            action="request",
            action_text=f"add to intake {task_id!r}",
            reason=f"the request is {intake.requester}'s; propose an envelope instead "
            "(taskfs intake propose)",
        )
    record = IntakeRecord(
        intake=task_id,
        kind="request",
        by=requester,
        at=format_time(now),
        text=text,
        message=message,
        accepts=accepts,
    )
    return _record(repo, writer, intake, record, now=now, extra=extra, reply=reply)


def cancel(
    repo: Repository,
    task_id: str,
    agent: str,
    *,
    reason: str | None = None,
    extra: Sequence[Extra] = (),
    now: datetime | None = None,
) -> Answer:
    """Close an open intake: its requester's or its recipient's act."""
    now = now or datetime.now(timezone.utc)
    with repo.writing() as writer:
        intake = open_intake(repo, task_id, target="canceled")
        parties = {intake.requester, intake.recipient} - {None}
        if agent not in parties:
            named = ", ".join(repr(p) for p in sorted(p for p in parties if p))
            raise fail(
                "agent_not_allowed",
                agent=agent,
                action="canceled",
                action_text=f"cancel intake {task_id!r}",
                reason=f"only a party to it may ({named})",
            )
        record = IntakeRecord(
            intake=task_id,
            kind="canceled",
            by=agent,
            at=format_time(now),
            reason=reason.strip() if reason and reason.strip() else None,
        )
        rel = add_record(repo, writer, record, now)
        for item in extra:
            writer.add(item.rel, item.data)
        commit = writer.commit(subject(task_id, agent, "canceled"), agent, when=now)
    closed = Intake(task_id, (*intake.entries, Entry(rel.rsplit("/", 1)[1], record)))
    return Answer(closed, (), False, commit, rel)


def is_request(repo: Repository, task_id: str) -> bool:
    """Whether `task_id` names an intake that is not a task (open or closed)."""
    return is_intake(repo, task_id)


def has_request(repo: Repository, task_id: str) -> bool:
    """Whether `task_id` was a request (an intake), whether it became a task or not."""
    return has_intake(repo, task_id)


def read(repo: Repository, task_id: str) -> Answer:
    """An intake as it stands (one that became a task included), with what it lacks."""
    if not has_intake(repo, task_id):
        raise fail("task_not_found", id=task_id)
    intake, _problems = load_intake(repo, task_id)
    problems = () if not intake.is_open else tuple(intake.missing())
    return Answer(intake, problems, intake.submitted, None)


def intakes(repo: Repository, agent: str | None = None) -> list[Intake]:
    """The intakes that are not tasks (open and canceled), oldest first; with `agent`, those
    it asked for or that are addressed to it."""
    found = []
    ledger = index.summaries(repo)
    for summary in ledger.many(ledger.intake_ids()):
        task_id = summary.id
        if agent is not None and agent not in (summary.envelope.sender, summary.envelope.recipient):
            continue
        try:
            found.append(load_intake(repo, task_id)[0])
        except TaskfsError:
            continue
    return sorted(found, key=lambda i: (i.opening.at, i.id))


# -- the one write path of every act that adds a request ---------------------------------


def _record(
    repo: Repository,
    writer: Writer,
    intake: Intake | None,
    record: IntakeRecord,
    *,
    now: datetime,
    extra: Sequence[Extra],
    reply: Reply | None = None,
) -> Answer:
    """Add `record` (and the door's `extra` files); when the envelope it completes is whole,
    submit the task in the same commit; else commit the request alone, with the door's
    answer (`reply`) when it makes one. A submitted task's answer follows in a commit of its
    own (the answer says it was submitted, which is known only once it was)."""
    rel = add_record(repo, writer, record, now)
    for item in extra:
        writer.add(item.rel, item.data)
    entries = intake.entries if intake is not None else ()
    after = Intake(record.intake, (*entries, Entry(rel.rsplit("/", 1)[1], record)))
    problems = after.missing()
    if not problems:
        envelope, _found = validate_envelope(after.draft())
        assert envelope is not None
        source = submit.Source(f"intake {after.id}", b"")
        trailer = "Taskfs-Request: submitted"
        try:
            # A request that came as a peer's signed message names it: the `submitted` it
            # makes rests on that message (audit: `taskfs.api.review.intake_audit`).
            submit.submit_within(
                repo,
                writer,
                [(source, envelope)],
                after.requester,
                trailers=[trailer],
                opened=record.message,
                discovered_from=after.discovered_from,
            )
        except TaskfsError as exc:
            problems = list(exc.problems)  # kept, and answered with the rules' refusals
        else:
            done = Answer(after._replace(submitted=True), (), True, repo.git.head(), rel)
            answered = reply(done) if reply is not None else None
            if answered is not None:
                writer.add(answered.rel, answered.data)
                commit = writer.commit(subject(after.id, answered.by, "answer"), answered.by)
                return done._replace(commit=commit)
            return done
    kept = Answer(after, tuple(problems), False, None, rel)
    answered = reply(kept) if reply is not None else None
    if answered is not None:
        writer.add(answered.rel, answered.data)
    commit = writer.commit(subject(after.id, record.by, "request"), record.by, when=now)
    return kept._replace(commit=commit)


def add_record(repo: Repository, writer: Writer, record: IntakeRecord, now: datetime) -> str:
    """Add the intake file, signed by its writer where it has a key (a request a peer's signed
    message carried rests on that message: `message`)."""
    from taskfs.api.lifecycle.signing import sign_act

    rel = repo.task_rel(record.intake, INTAKE, stamped_name(now))
    action = f"write the {record.kind} of intake {record.intake!r}"
    vouched = record.message is not None
    document = sign_act(repo, record.by, "intake", record.to_document(), action, vouched=vouched)
    writer.add(rel, record_bytes(document))
    return rel


def open_intake(repo: Repository, task_id: str, *, target: str | None = None) -> Intake:
    """The open intake `task_id`, read from committed files; a task, a closed intake or no
    such thing is refused by name."""
    if not layout.is_task_id(task_id) or not repo.task_dir(task_id).exists():
        raise fail("task_not_found", id=task_id)
    from taskfs.store import head_ledger

    head_ledger.refuse_loose(repo, task_id)
    if not is_intake(repo, task_id):
        if repo.has_task(task_id):
            raise fail("intake_closed", id=task_id, state_text=i18n.say("it is a task now"))
        raise fail("task_not_found", id=task_id)
    intake, problems = load_intake(repo, task_id)
    if problems:
        raise TaskfsError(problems)
    if not intake.is_open:
        raise fail(
            "intake_closed", id=task_id, state_text=i18n.say("it is {state}", state=intake.state)
        )
    return intake


def _said(text: str) -> None:
    """A request says something: an empty one would be kept as a request for nothing, and
    an envelope YAML refuses as a request missing everything (`text_fields`)."""
    if not text.strip():
        raise fail("request_empty")
    text_fields(text)


def check_agent(name: str, field: str) -> None:
    if not layout.is_agent_name(name):
        raise fail("invalid_agent", field=field, value=name)


def subject(task_id: str, agent: str, kind: str) -> str:
    return (
        f"taskfs: {task_id} intake {kind} by {agent}\n\n"
        f"Taskfs-Task: {task_id}\nTaskfs-Request: {kind}\nTaskfs-Agent: {agent}\n"
    )
