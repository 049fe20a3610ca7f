"""interlink's messages in and out of the ledger, as its `SignedMessage` JSON lines.

`export_lines` prints what is stored, exactly as it was signed: a message signed today carries
interlink's fields and signature (see `taskfs.core.messages`), so nothing is re-signed.
`outgoing` is what an agent signed, for a carrier (the bus bridge) to post. `import_lines`
applies interlink's inbound gate in interlink's order (`src/agent.rs`, `decide`):

    signature valid for `from`  -> `to` is the agent's key -> sender admitted (a committed key
    under some name, or the agent's own) -> fresh (`ts` at most 60 s ahead, 24 h behind) ->
    (sender, msg_id) not seen

then records each accepted message, with its effect on its task (the same as `taskfs send`:
`needs_input` -> input_required, the answer -> working, `failed`/`canceled` transitions,
`result` asks for the check), or, without `task_id`, as conversation. Replay protection is
durable: every (sender, msg_id) the ledger holds counts, not interlink's last 4,096 in memory.
A refused line writes nothing and is named; the others still go in. Accepted lines share one
commit, except that a second message from another sender, or about a task already moved in the
batch, starts the next commit (each commit is authored by the message's sender, and a
transition is checked against the task as committed).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple

from taskfs.api.messages import refusals
from taskfs.api.messages import sending as messages
from taskfs.api.messages.opened import envelope_in as _envelope_in
from taskfs.api.messages.openings import record_of, unstored_openings, wire_ms
from taskfs.api.messages.threads import (
    NOT_ASKED,
    CheckedMessage,
    read_conversations,
    read_thread,
    trust,
)
from taskfs.api.tasks import ids, submit
from taskfs.api.tasks.filing import record_bytes
from taskfs.api.tasks.rules import check_new_tasks
from taskfs.core import interlink as vocabulary
from taskfs.core import messages as rules
from taskfs.core import wire, yamlio
from taskfs.core.envelope import validate_envelope
from taskfs.core.layout import ENVELOPE, MESSAGES, stamped_name
from taskfs.core.lifecycle import State
from taskfs.core.records import MessageRecord, ms_time
from taskfs.errors import Problem, TaskfsError, fail, problem
from taskfs.store import keys
from taskfs.store.messages import (
    Stored,
    conversation_rel,
    load_conversations,
    load_messages,
    pending_paths,
)
from taskfs.store.repository import Repository
from taskfs.store.task_reader import load_task
from taskfs.store.writer import Writer

MAX_FUTURE_MS = 60_000
MAX_PAST_MS = 86_400_000


# -- out ---------------------------------------------------------------------------------------


def export_lines(
    repo: Repository, task: str | None = None, msg_ids: Sequence[str] = ()
) -> list[str]:
    """interlink `SignedMessage` JSON, one line per message, oldest first: every message that
    carries interlink's signature (of one task, or of the whole ledger, conversation included),
    or those named. A named message that is missing, or signed only under taskfs's older
    encoding (which no interlink agent reads), is `message_not_found`."""
    if task is not None:
        load_task(repo, task)
        found = list(read_thread(repo, task, pending=set()).messages)
    else:
        found = _everything(repo)
    stored = [(c.record.at, rules.wire_message(c.record)) for c in found if c.record.sig]
    tasks = [task] if task is not None else repo.task_ids()
    everything = sorted(stored + unstored_openings(repo, tasks), key=lambda p: (p[0], p[1].msg_id))
    if not msg_ids:
        return [message.to_json() for _, message in everything]
    lines: list[str] = []
    problems: list[Problem] = []
    for msg_id in dict.fromkeys(msg_ids):
        signed = [m for _, m in everything if m.msg_id == msg_id]
        if not signed:
            named = any(c.record.msg_id == msg_id for c in found)
            why = " carrying interlink's signature" if named else ""
            problems.append(problem("message_not_found", msg_id=msg_id, why_text=why))
        lines += [m.to_json() for m in signed]
    if problems:
        raise TaskfsError(problems)
    return lines


class Outgoing(NamedTuple):
    """One message a carrier posts: its id, its recipient's interlink id, its JSON line, the
    session it names (`send_message`'s unsigned routing hint) and, for an opening signed on
    demand, the name earlier bridges posted it under."""

    msg_id: str
    recipient: str
    line: str
    session: str | None = None
    alias: str | None = None


def outgoing(repo: Repository, agent: str) -> list[Outgoing]:
    """Every committed message `agent` signed with interlink's signature, oldest first: what
    a carrier posts (those not posted yet)."""
    own = keys.public_keys(repo.root, "agent").get(agent)
    if own is None:
        return []
    sender = wire.b64(own)
    found: list[tuple[str, wire.Message, str | None, str | None]] = [
        (c.record.at, rules.wire_message(c.record), c.record.session, None)
        for c in _everything(repo)
        if c.record.sig and c.record.from_id == sender and c.delivery != "pending"
    ]
    openings = unstored_openings(repo, repo.task_ids())
    envelopes = [repo.task_rel(m.task_id or "", ENVELOPE) for _, m in openings]
    committed = repo.git.tracked(envelopes)
    found += [
        (at, m, None, vocabulary.opening_id(m.task_id or ""))
        for (at, m), rel in zip(openings, envelopes, strict=True)
        if m.sender == sender and rel in committed
    ]
    found.sort(key=lambda p: (p[0], p[1].msg_id))
    return [
        Outgoing(m.msg_id, m.recipient, m.to_json(), hint, alias) for _, m, hint, alias in found
    ]


def _everything(repo: Repository) -> list[CheckedMessage]:
    trusted = trust(repo)
    pending = pending_paths(repo)
    found = [
        checked
        for task_id in repo.task_ids()
        for checked in read_thread(repo, task_id, trusted=trusted, pending=pending).messages
    ]
    return found + list(read_conversations(repo, trusted=trusted).messages)


@dataclass(frozen=True)
class Said:
    """A message about no task, committed."""

    record: MessageRecord
    file: str
    commit: str


def send_conversation(
    repo: Repository,
    agent: str,
    to: str,
    text: str,
    *,
    in_reply_to: str | None = None,
    session: str | None = None,
    now: datetime | None = None,
) -> Said:
    """A plain message from `agent` to `to` about no task (interlink's chat turn), signed as
    every message is, recorded under `.taskfs/conversations/` in one commit. It moves nothing."""
    messages.refuse_blank(text)
    now = now or datetime.now(timezone.utc)
    pair = keys.load_private("agent", agent)
    with repo.writing() as writer:
        record = messages.new_record(
            repo, agent, to, text, now=now, pair=pair, task_id=None,
            in_reply_to=in_reply_to, session=session,
        )  # fmt: skip
        problems = rules.authenticity(record, trust(repo, entering=True))
        if problems:
            raise TaskfsError(problems)
        rel = conversation_rel(stamped_name(now))
        writer.add(rel, record_bytes(record.to_document()))
        subject = f"taskfs: message from {agent} to {to}"
        trailers = f"Taskfs-Message: {record.msg_id}\nTaskfs-Agent: {agent}\n"
        commit = writer.commit(f"{subject}\n\n{trailers}", agent, when=now)
    return Said(record, rel, commit)


# -- in ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LineReport:
    """What became of one input line: accepted (and where it went) or refused, with codes."""

    line: int
    msg_id: str | None
    problems: tuple[Problem, ...] = ()
    task_id: str | None = None
    file: str | None = None
    transition: tuple[State, State] | None = None
    commit: str | None = None
    opened: bool = False  # the message opened its task

    @property
    def accepted(self) -> bool:
        return not self.problems

    @property
    def code(self) -> str | None:
        return self.problems[0].code if self.problems else None


@dataclass(frozen=True)
class Imported:
    agent: str
    lines: tuple[LineReport, ...]
    commits: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return all(r.accepted for r in self.lines)


@dataclass
class _Batch:
    """Accepted lines staged in a writer, not committed yet."""

    sender: str | None = None
    tasks: set[str] = field(default_factory=set)
    reports: list[LineReport] = field(default_factory=list)


def import_lines(
    repo: Repository, agent: str, lines: Iterable[str], now: datetime | None = None
) -> Imported:
    """Take interlink `SignedMessage` lines addressed to `agent` through interlink's inbound
    gate and record the accepted ones with their effects (see the module's account). Blank
    lines are skipped. `recipient_unknown` when `agent` has no committed key."""
    now = now or datetime.now(timezone.utc)
    with repo.writing() as writer:
        admitted = keys.committed_public_keys(repo.git, "agent")
        own = admitted.get(agent)
        if own is None:
            raise fail("recipient_unknown", agent=agent)
        names = {wire.b64(key): name for name, key in sorted(admitted.items(), reverse=True)}
        names[wire.b64(own)] = agent
        seen = _seen(repo)
        state = _Importer(repo, writer, agent, now)
        reports: list[LineReport] = []
        refused: list[refusals.Refused] = []
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            report = _gate(
                text, number, own=wire.b64(own), names=names, seen=seen, now_ms=wire_ms(now)
            )
            if isinstance(report, LineReport):
                reports.append(report)
                continue
            message, sender = report
            reports.append(state.record(number, message, sender))
            if reports[-1].accepted:
                seen.add((message.sender, message.msg_id))
            else:  # past the gate, refused by taskfs's rules: its sender hears why
                refused.append(refusals.Refused(message, sender, reports[-1].problems))
        state.flush()
        answered = refusals.answer(repo, writer, agent, refused, now)
        if answered is not None:
            state.commits.append(answered)
    done = {r.line: r for r in state.committed}
    final = tuple(done.get(r.line, r) for r in reports)
    return Imported(agent, final, tuple(state.commits))


def _seen(repo: Repository) -> set[tuple[str, str]]:
    """Every (sender, msg_id) the ledger holds: replay protection that survives restarts."""
    found: set[tuple[str, str]] = set()
    for task_id in repo.task_ids():
        stored, _ = load_messages(repo, task_id, NOT_ASKED)
        found |= {rules.replay_key(s.record) for s in stored}
    stored, _ = load_conversations(repo, NOT_ASKED)
    return found | {rules.replay_key(s.record) for s in stored}


def _gate(
    text: str,
    number: int,
    *,
    own: str,
    names: dict[str, str],
    seen: set[tuple[str, str]],
    now_ms: int,
) -> LineReport | tuple[wire.Message, str]:
    """interlink's inbound gate, in its order: the message and its sender's name, or why not."""
    try:
        message = wire.parse_line(text)
    except wire.WireError as exc:
        return _refused(number, None, "message_invalid", where=f"line {number}", reason=str(exc))
    msg_id = message.msg_id
    if not message.verified():
        reason = "it does not verify for its from key under verify_strict"
        return _refused(number, msg_id, "signature_invalid", msg_id=msg_id, reason=reason)
    if message.recipient != own:
        return _refused(
            number,
            msg_id,
            "message_misaddressed",
            msg_id=msg_id,
            msg_text=f" {msg_id!r}",
            to=message.recipient,
            agent=own,
        )
    if message.kind != "message":
        reason = (
            f"kind {message.kind!r}: taskfs does not pair; admit the peer's key with "
            "`taskfs keys add --agent NAME --public ID`"
        )
        return _refused(number, msg_id, "message_invalid", where=f"line {number}", reason=reason)
    sender = names.get(message.sender)
    if sender is None:
        return _refused(number, msg_id, "sender_unknown", msg_id=msg_id, key=message.sender)
    if message.ts > now_ms + MAX_FUTURE_MS or now_ms > message.ts + MAX_PAST_MS:
        try:
            at = ms_time(message.ts)
        except ValueError:
            at = f"{message.ts} ms"
        now = ms_time(now_ms)
        return _refused(number, msg_id, "message_expired", msg_id=msg_id, at=at, now=now)
    if (message.sender, msg_id) in seen:
        return _refused(number, msg_id, "message_replayed", msg_id=msg_id, file_id=msg_id)
    return message, sender


def _refused(line: int, ident: str | None, code: str, **data: Any) -> LineReport:
    return LineReport(line, ident, (problem(code, **data),))


class _Importer:
    """Records accepted messages in as few commits as the rules allow."""

    def __init__(self, repo: Repository, writer: Writer, agent: str, now: datetime) -> None:
        self.repo, self.writer, self.agent, self.now = repo, writer, agent, now
        self.placed = 0
        self.batch = _Batch()
        self.commits: list[str] = []
        self.committed: list[LineReport] = []

    def record(self, number: int, message: wire.Message, sender: str) -> LineReport:
        try:
            record = record_of(message, sender, self.agent)
        except ValueError as exc:
            where = f"line {number}"
            return _refused(number, message.msg_id, "message_invalid", where=where, reason=str(exc))
        task_id = record.task_id
        if self.batch.sender not in (None, sender) or (task_id in self.batch.tasks):
            self.flush()
        # File names order a thread: lines of one batch keep their order (one microsecond each).
        self.placed += 1
        name = stamped_name(self.now + timedelta(microseconds=self.placed))
        if task_id is not None and not self.repo.has_task(task_id):
            return self._open(number, record, name)
        if task_id is None:
            rel = conversation_rel(name)
            self.writer.add(rel, record_bytes(record.to_document()))
            return self._staged(LineReport(number, record.msg_id, file=rel), sender)
        try:
            task = load_task(self.repo, task_id, strict=True)
            thread = read_thread(self.repo, task_id, pending=NOT_ASKED)
            rel = self.repo.task_rel(task_id, MESSAGES, name)
            item = Stored(name, rel, record, committed=False)
            target, staged = messages.stage_message(
                self.repo, self.writer, task, thread, item, now=self.now
            )
        except TaskfsError as exc:
            return LineReport(number, record.msg_id, exc.problems, task_id=task_id)
        self.writer.add(rel, record_bytes(record.to_document()))
        self.batch.tasks.add(task_id)
        moved = (staged.before, target) if staged is not None and target is not None else None
        report = LineReport(number, record.msg_id, task_id=task_id, file=rel, transition=moved)
        return self._staged(report, sender)

    def _open(self, number: int, record: MessageRecord, name: str) -> LineReport:
        """A message naming a task the ledger does not have opens it, as interlink's requester
        does, when its text is an envelope (the same rule as `send_message`): submitted from
        the sender to this agent, with the message beside it, in one commit of the sender's."""
        task_id = record.task_id
        assert task_id is not None
        fields = _envelope_in(record.text)
        whole = (
            fields is not None
            and not validate_envelope(
                {**fields, "id": fields.get("id", task_id), "from": record.sender, "to": self.agent}
            )[1]
        )
        if self.repo.task_dir(task_id).exists() or not whole:
            return self._request(number, record, name)
        taken = ids.taken(self.repo, [task_id], record.sender)
        if taken:  # an archived task's id: no door takes it (`ids`)
            return LineReport(number, record.msg_id, tuple(taken.values()), task_id=task_id)
        assert fields is not None
        addressed, wrong = vocabulary.addressed(
            {**fields, "id": fields.get("id", task_id)}, record.sender, self.agent
        )
        try:
            if wrong is not None or addressed["id"] != task_id or record.status is not None:
                why = "its envelope names another id, sender or recipient, or it has a status"
                raise fail("invalid_value", field="text", reason=why)
            label = f"line {number}"
            envelope, found = submit.parse_source(
                submit.Source(label, yamlio.dump(addressed).encode("utf-8"))
            )
            if envelope is None:
                raise TaskfsError(found)
            check_new_tasks(self.repo, [envelope])
        except TaskfsError as exc:
            return LineReport(number, record.msg_id, exc.problems, task_id=task_id)
        self.flush()
        rel = self.repo.task_rel(task_id, MESSAGES, name)
        self.writer.add(rel, record_bytes(record.to_document()))
        trailers = [f"Taskfs-Message: {record.msg_id}"]
        commit = submit.write_new_tasks(
            self.repo, self.writer, [envelope], record.sender, trailers=trailers,
            opened=record.msg_id,
        )  # fmt: skip
        self.commits.append(commit)
        report = LineReport(
            number, record.msg_id, task_id=task_id, file=rel, commit=commit, opened=True
        )
        self.committed.append(report)
        return report

    def _request(self, number: int, record: MessageRecord, name: str) -> LineReport:
        """A peer's words on a task id the ledger has no task for, that are not yet a whole
        envelope (prose, or some of its fields): kept as a request, or added to the peer's
        open one, and answered with a signed `needs_input` naming what the envelope lacks
        (contract section 12), the peer's message and the answer in one commit. Only a plain
        message or an `update` opens one; other statuses are about a task it does not have."""
        from taskfs.api.intake import requests
        from taskfs.api.messages.intake_answers import reply_to

        task_id = record.task_id
        assert task_id is not None
        if record.status not in (None, "update"):
            return LineReport(number, record.msg_id, (problem("task_not_found", id=task_id),))
        self.flush()
        rel = self.repo.task_rel(task_id, MESSAGES, name)
        kept = requests.Extra(rel, record_bytes(record.to_document()), record.sender)
        answer = reply_to(self.repo, self.agent, record.msg_id, self.now)
        try:
            if requests.is_request(self.repo, task_id):
                done = requests.add_within(
                    self.repo, self.writer, task_id, record.sender, record.text,
                    message=record.msg_id, extra=[kept], reply=answer, now=self.now,
                )  # fmt: skip
            else:
                done = requests.open_within(
                    self.repo, self.writer, record.sender, record.text, to=self.agent,
                    task_id=task_id, door="interlink", message=record.msg_id, extra=[kept],
                    reply=answer, now=self.now,
                )  # fmt: skip
        except TaskfsError as exc:
            return LineReport(number, record.msg_id, exc.problems, task_id=task_id)
        commit = done.commit or ""
        self.commits.append(commit)
        report = LineReport(
            number, record.msg_id, task_id=task_id, file=rel, commit=commit, opened=done.submitted
        )
        self.committed.append(report)
        return report

    def _staged(self, report: LineReport, sender: str) -> LineReport:
        self.batch.sender = sender
        self.batch.reports.append(report)
        return report

    def flush(self) -> None:
        batch, self.batch = self.batch, _Batch()
        if not batch.reports or batch.sender is None:
            return
        commit = self.writer.commit(_commit_message(batch, self.agent), batch.sender, when=self.now)
        self.commits.append(commit)
        self.committed += [
            LineReport(r.line, r.msg_id, (), r.task_id, r.file, r.transition, commit)
            for r in batch.reports
        ]


def _commit_message(batch: _Batch, agent: str) -> str:
    count = len(batch.reports)
    subject = f"taskfs: {count} interlink message(s) from {batch.sender} to {agent}"
    trailers: list[str] = []
    for report in batch.reports:
        if report.task_id is not None:
            trailers.append(f"Taskfs-Task: {report.task_id}")
        trailers.append(f"Taskfs-Message: {report.msg_id}")
        if report.transition is not None:
            before, after = report.transition
            trailers.append(f"Taskfs-Transition: {before} -> {after}")
    trailers.append(f"Taskfs-Agent: {batch.sender}")
    return subject + "\n\n" + "\n".join(trailers) + "\n"
