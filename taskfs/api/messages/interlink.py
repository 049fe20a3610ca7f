"""interlink's five tools over taskfs's messages: `send_message`, `cancel_task`,
`message_status`, `conversation_history` and `list_pending`.

Each is the same `taskfs.api.messages.sending` (and `submit`) call that `taskfs send`, `messages`,
`conversation` and `deliver` make, so every lifecycle rule and code is theirs. interlink adds
two decisions, made here and nowhere else:

- A task opening is a message. `send_message` without `task_id` whose text is an envelope
  (a YAML mapping with envelope keys) submits it, addressed to `to`; its id is the signed
  opening's (an opaque id), or `<task>/envelope` for a task without one
  (`core.interlink.opening_id`), and it counts as a message everywhere below.
- A message to a peer (an agent reached over the bus) goes to the session interlink would
  choose, chosen before anything is written (`routing.route`); its delivery is interlink's
  (`routing.on_the_bus`).
- Without `task_id`, and with text that is no envelope, a message without `status` is
  interlink's plain chat turn: conversation about no task (`wire.send_conversation`), moving
  nothing; a reply to such a message is one too. A message with a `status` is about a task, so
  reply stickiness applies, per peer: it goes to the task of the last message exchanged with
  `to`, in either direction, the openings included; `in_reply_to` names its task itself. With
  no task exchanged yet it is refused (`no_conversation`): taskfs never guesses a task.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import NamedTuple, TypeVar

from taskfs.api.intake import requests
from taskfs.api.messages import routing, threads, wire
from taskfs.api.messages import sending as messages
from taskfs.api.messages.openings import stored_opening
from taskfs.api.messages.sending import Sent
from taskfs.api.messages.threads import CheckedMessage, Delivery
from taskfs.api.messages.wire import Said
from taskfs.api.tasks import submit
from taskfs.api.tasks.filing import record_bytes
from taskfs.core import interlink as rules
from taskfs.core import yamlio
from taskfs.core.layout import CONVERSATIONS, ENVELOPE, MESSAGES, parse_time, stamped_name
from taskfs.core.lifecycle import MESSAGE_STATUSES, SEND_STATUSES, State
from taskfs.core.records import MessageRecord
from taskfs.errors import TaskfsError, fail
from taskfs.store import keys
from taskfs.store.all_tasks import load_all
from taskfs.store.messages import pending_paths
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task, load_task

CANCEL_TEXT = (
    "Canceled by {agent}: stop working on this task. Cancellation is cooperative: nothing was "
    "stopped by force."
)
# interlink's `conversation_history` shows this many messages when no limit is given.
HISTORY_DEFAULT = 20


@dataclass(frozen=True)
class Opening:
    """A task seen as the first message of its conversation: its envelope, from its sender."""

    task: Task
    delivery: Delivery
    file: str

    @property
    def msg_id(self) -> str:
        """The signed opening's id where the task keeps one, else its envelope's name."""
        return stored_opening(self.task) or rules.opening_id(self.task.id)

    @property
    def sender(self) -> str:
        return threads.submitter(self.task) or "anonymous"

    @property
    def recipient(self) -> str | None:
        return self.task.envelope.recipient

    @property
    def at(self) -> str:
        links = self.task.chain.links
        # A task without a status file is broken (audit names it); sort it first.
        return links[0].record.at if links else "1970-01-01T00:00:00Z"


Entry = CheckedMessage | Opening


def opening(repo: Repository, task: Task) -> Opening:
    """A task's opening: `read` once anyone but its sender has moved the task."""
    sender = threads.submitter(task)
    seen = any(link.record.by != sender for link in task.chain.links[1:])
    return Opening(task, "read" if seen else "sent", repo.task_rel(task.id, ENVELOPE))


# -- send_message, cancel_task ---------------------------------------------------------


class Queued(NamedTuple):
    """What `send_message` or `cancel_task` wrote, and, for a peer, the session it goes to
    (`routing.route`; its session None when no bus answered)."""

    result: Sent | Opening | Said | Requested
    route: routing.Route | None


def send_message(
    repo: Repository,
    agent: str,
    to: str,
    text: str,
    *,
    session: str | None = None,
    task_id: str | None = None,
    status: str | None = None,
    in_reply_to: str | None = None,
    now: datetime | None = None,
) -> Queued:
    """A message to `to`, or the task its envelope opens (see the module's account), after
    choosing the peer's session as interlink does. Empty optional arguments are absent ones, as
    interlink reads them; a status is trimmed, and one interlink does not know is refused by
    name."""
    status = status.strip() if status and status.strip() else None
    if status is not None and status not in SEND_STATUSES:
        allowed = " / ".join(MESSAGE_STATUSES)
        reason = f"unknown status {status!r} (use {allowed})"
        raise fail("invalid_value", field="status", reason=reason, value=status)
    session = session.strip() if session and session.strip() else None
    task_id = task_id or None
    in_reply_to = in_reply_to or None
    chosen = routing.route(repo, agent, to, session)
    result = _send(repo, agent, to, text, session, task_id, status, in_reply_to, now)
    return Queued(result, chosen)


def _send(  # noqa: PLR0917 (send_message's arguments, read)
    repo: Repository,
    agent: str,
    to: str,
    text: str,
    session: str | None,
    task_id: str | None,
    status: str | None,
    in_reply_to: str | None,
    now: datetime | None,
) -> Sent | Opening | Said | Requested:
    if in_reply_to is not None:
        replied = rules.opened_task(in_reply_to) or threads.locate(repo, in_reply_to) or ""
        if not replied and task_id is None and _conversation_message(repo, in_reply_to):
            return _converse(repo, agent, to, text, status, in_reply_to, session, now)
        if not replied or (task_id is not None and task_id != replied):
            raise fail("message_not_found", msg_id=in_reply_to)
        task_id = replied
        if rules.opened_task(in_reply_to):
            # Answering an opening is writing about its task: the envelope is no message file.
            in_reply_to = None
    if (
        task_id is not None
        and status is None
        and not repo.task_dir(task_id).exists()
        and routing.is_peer(repo, to)
    ):
        # A new task id to a peer, as interlink's requester opens a task: an envelope opens the
        # task under that id; prose (or part of an envelope) opens a request (contract section
        # 12), which the bridge carries to the peer. (An agent of this ledger is asked with
        # agent_send; a task id it does not know stays task_not_found.)
        fields = _envelope_in(text)
        if fields is not None and not _partial(fields, task_id):
            if fields.get("id", task_id) != task_id:
                reason = f"the envelope's id is {fields['id']!r}, the message's task_id {task_id!r}"
                raise fail("invalid_value", field="task_id", reason=reason)
            return open_task(repo, agent, to, {**fields, "id": task_id})
        return open_request(repo, agent, to, text, task_id, session=session, now=now)
    if task_id is None:
        fields = _envelope_in(text)
        if fields is not None:
            if status not in (None, "none"):
                raise fail("invalid_value", field="status", reason="a task is opened without one")
            return open_task(repo, agent, to, fields)
        if status is None:
            return _converse(repo, agent, to, text, status, in_reply_to, session, now)
        task_id = rules.sticky_task(
            (parse_time(_at(e)), e_id(e), _task_of(e))
            for e in conversation_history(repo, agent, to)
            if _usable(e) and _task_of(e)
        )
        if task_id is None:
            raise fail("no_conversation", agent=agent, peer=to)
    return messages.send(
        repo,
        task_id,
        agent,
        text,
        status=status,
        in_reply_to=in_reply_to,
        to=to,
        session=session,
        now=now,
    )


def _converse(  # noqa: PLR0917 (send_message's arguments, passed on)
    repo: Repository,
    agent: str,
    to: str,
    text: str,
    status: str | None,
    in_reply_to: str | None,
    session: str | None,
    now: datetime | None,
) -> Said:
    """interlink's plain message: about no task, so it carries no status."""
    if status is not None:
        raise fail("invalid_value", field="status", reason="a message about no task has none")
    return wire.send_conversation(
        repo, agent, to, text, in_reply_to=in_reply_to, session=session, now=now
    )


def _conversation_message(repo: Repository, msg_id: str) -> CheckedMessage | None:
    found = threads.read_conversations(repo).messages
    return next((c for c in found if c.in_place and c.record.msg_id == msg_id), None)


def _envelope_in(text: str) -> dict[str, object] | None:
    return rules.text_fields(text)


def _partial(fields: dict[str, object], task_id: str) -> bool:
    """Whether an envelope lacks something, and so is a request's words, not a task yet."""
    from taskfs.core.envelope import validate_envelope

    return bool(validate_envelope({"from": "x", "to": "y", **fields, "id": task_id})[1])


@dataclass(frozen=True)
class Requested:
    """A request opened by `send_message` on a new task id (prose, or a partial envelope): the
    intake, and the message that carries its words to the recipient (signed for a peer, which
    the bridge posts as interlink's opening)."""

    record: MessageRecord
    answer: requests.Answer
    file: str


def open_request(
    repo: Repository,
    agent: str,
    to: str,
    text: str,
    task_id: str,
    *,
    session: str | None = None,
    now: datetime | None = None,
) -> Requested:
    """The intake `task_id` from `agent` to `to`, its words kept as `agent`'s message on that
    task id, in one commit: the recipient's answer and any later words go on that id."""
    now = now or datetime.now(timezone.utc)
    pair = keys.load_private("agent", agent)
    with repo.writing() as writer:
        record = messages.new_record(
            repo, agent, to, text, now=now, pair=pair, task_id=task_id, session=session
        )
        rel = repo.task_rel(task_id, MESSAGES, stamped_name(now))
        carried = requests.Extra(rel, record_bytes(record.to_document()), agent)
        answer = requests.open_within(
            repo, writer, agent, text, to=to, task_id=task_id, door="interlink",
            message=record.msg_id, extra=[carried], now=now,
        )  # fmt: skip
    return Requested(record, answer, rel)


def open_task(repo: Repository, agent: str, to: str, fields: dict[str, object]) -> Opening:
    """Submit the envelope, from `agent` to `to`, through the same path as `taskfs new`."""
    addressed, wrong = rules.addressed(fields, agent, to)
    if wrong == "to":
        raise fail(
            "invalid_value",
            field="to",
            reason=f"the envelope is addressed to {fields['to']!r}, the message to {to!r}",
        )
    if wrong == "from":
        raise fail(
            "agent_not_allowed",
            agent=agent,
            action="submit",
            action_text="send this envelope",
            reason=f"the envelope says it is from {fields['from']!r}",
        )
    source = submit.Source("send_message", yamlio.dump(addressed).encode("utf-8"))
    done = submit.submit(repo, [source], agent)
    return opening(repo, load_task(repo, done[0].id))


def cancel_task(
    repo: Repository,
    agent: str,
    to: str,
    task_id: str,
    *,
    reason: str | None = None,
    now: datetime | None = None,
) -> Queued:
    """A `canceled` message to `to` and the transition, in one commit, routed like every
    message (interlink's `cancel_task` always routes through the roster). Cooperative: whoever
    works on the task learns of it from its inbox; no process is stopped. `reason` is the
    signed text, as in interlink (blank: interlink's own `canceled` for a peer, taskfs's
    standing text for an agent of this ledger)."""
    chosen = routing.route(repo, agent, to, None)
    standing = "canceled" if chosen is not None else CANCEL_TEXT.format(agent=agent)
    text = reason.strip() if reason and reason.strip() else standing
    sent = messages.send(repo, task_id, agent, text, status="canceled", to=to, now=now)
    return Queued(sent, chosen)


def delivery(repo: Repository, agent: str, queued: Queued) -> Delivery:
    """How far what `send_message` wrote got: `pending` for a peer's (no bus took it yet)."""
    result = queued.result
    if isinstance(result, Opening):
        return result.delivery
    if isinstance(result, Requested):
        signed = result.record.sig is not None
        return "pending" if queued.route is not None and signed else "sent"
    if queued.route is not None and result.record.sig is not None:
        return "pending"
    return "sent"


# -- message_status, conversation_history ----------------------------------------------


@dataclass(frozen=True)
class MessageState:
    entry: Entry
    task_state: State | None  # None: a message about no task


def message_status(repo: Repository, msg_id: str, agent: str | None = None) -> MessageState:
    """Where a message (or an opening) got to, and the state of its task, as interlink means
    it for `agent`: its own messages to peers through the bus (`routing.on_the_bus`), and a
    message to it `received` (`as_received`)."""
    task_id = rules.opened_task(msg_id)
    if task_id is None:
        said = _conversation_message(repo, msg_id)
        if said is not None:
            return MessageState(_bus_view(repo, agent, said), None)
        found = threads.message_status(repo, msg_id)
        return MessageState(_bus_view(repo, agent, found.message), found.task_state)
    if not repo.has_task(task_id):
        raise fail("message_not_found", msg_id=msg_id)
    task = load_task(repo, task_id)
    opened = opening(repo, task)
    return MessageState(as_received(agent, [opened])[0] if agent else opened, task.state)


def conversation_history(
    repo: Repository,
    agent: str,
    peer: str,
    *,
    session: str | None = None,
    limit: int | None = None,
) -> list[Entry]:
    """The messages between `agent` and `peer` about any task, and the tasks either opened
    for the other, oldest first; with `limit`, only the latest `limit` of them (newest last,
    as interlink shows them)."""
    if limit is not None and limit < 0:
        raise fail("invalid_value", field="limit", reason="use a number of messages, 0 or more")
    found: list[Entry] = list(threads.conversation(repo, agent, peer, session=session))
    pair = {agent, peer}
    for task in load_all(repo).values():
        opened = opening(repo, task)
        if {opened.sender, opened.recipient} == pair:
            found.append(opened)
    ordered = sorted(_unshadowed(found), key=lambda e: (parse_time(_at(e)), e_id(e)))
    ordered = as_received(agent, routing.on_the_bus(repo, agent, ordered))
    if limit is None:
        return ordered
    return ordered[max(0, len(ordered) - limit) :] if limit else []


def _bus_view(repo: Repository, agent: str | None, entry: CheckedMessage) -> CheckedMessage:
    return as_received(agent, routing.on_the_bus(repo, agent, [entry]))[0] if agent else entry


E = TypeVar("E", CheckedMessage, Opening, Entry)


def as_received(agent: str, entries: Sequence[E]) -> list[E]:
    """`entries` as `agent` sees them in interlink's log: a message (or an opening) someone
    else addressed to it, committed, is `received` (interlink's word for every message it took
    in); read stays read."""
    out: list[E] = []
    for entry in entries:
        if isinstance(entry, Opening):
            inbound = entry.recipient == agent and entry.sender != agent
        else:
            inbound = entry.record.recipient == agent and entry.record.sender != agent
        out.append(
            replace(entry, delivery="received") if inbound and entry.delivery == "sent" else entry
        )
    return out


def e_id(entry: Entry) -> str:
    return entry.msg_id if isinstance(entry, Opening) else entry.record.msg_id


def _at(entry: Entry) -> str:
    return entry.at if isinstance(entry, Opening) else entry.record.at


def _task_of(entry: Entry) -> str:
    return entry.task.id if isinstance(entry, Opening) else entry.record.task_id or ""


def _usable(entry: Entry) -> bool:
    return isinstance(entry, Opening) or entry.ok


# -- list_pending ----------------------------------------------------------------------


@dataclass(frozen=True)
class Outbox:
    """What `agent` wrote that has not reached its addressee: message files not committed;
    messages to peers that no bus accepted yet (interlink's pending), with why the bridge holds
    each back, when it said; and messages and openings for this ledger's agents committed but
    held by no remote-tracking branch yet (none when the branch has no upstream to push to)."""

    uncommitted: tuple[CheckedMessage, ...]
    unpushed: tuple[Entry, ...]
    upstream: str | None
    unbridged: tuple[CheckedMessage, ...] = ()
    held: dict[str, str] | None = None


def list_pending(repo: Repository, agent: str) -> Outbox:
    said = [
        c
        for c in threads.read_conversations(repo).messages
        if c.delivery == "pending" and c.record.sender == agent
    ]
    uncommitted = tuple(
        sorted(
            [*threads.pending(repo, sender=agent), *said],
            key=lambda c: (c.record.at, c.record.msg_id),
        )
    )
    unbridged = [
        e
        for e in routing.on_the_bus(repo, agent, _written_by(repo, agent))
        if e.delivery == "pending" and e.stored.committed
    ]
    bridged = {e.record.msg_id for e in unbridged}
    unpushed, upstream = _unpushed(repo, agent)
    unpushed = [e for e in unpushed if e_id(e) not in bridged]
    return Outbox(
        uncommitted, tuple(unpushed), upstream, tuple(unbridged), routing.held(repo, agent)
    )


def _written_by(repo: Repository, agent: str) -> list[CheckedMessage]:
    """Every committed message `agent` wrote, about a task or none, oldest first."""
    trusted, waiting = threads.trust(repo), pending_paths(repo)
    found = [
        c
        for task_id in repo.task_ids()
        for c in threads.read_thread(repo, task_id, trusted=trusted, pending=waiting).messages
        if c.record.sender == agent
    ]
    found += [c for c in threads.read_conversations(repo).messages if c.record.sender == agent]
    return sorted(
        (c for c in found if c.stored.committed), key=lambda c: (c.record.at, c.record.msg_id)
    )


def _unpushed(repo: Repository, agent: str) -> tuple[list[Entry], str | None]:
    from taskfs.api.sync.remote import find_upstream

    try:
        upstream = find_upstream(repo)
    except TaskfsError:
        return [], None
    head = repo.git.head()
    if head is None:
        return [], upstream.name
    files: dict[str, set[str]] = {}
    for rel in repo.git.unpublished_additions(head, repo.tasks_rel):
        parts = rel[len(repo.tasks_rel) + 1 :].split("/")
        if (len(parts) == 3 and parts[1] == MESSAGES) or parts[1:] == [ENVELOPE]:
            files.setdefault(parts[0], set()).add(rel)
    found: list[Entry] = []
    said = set(repo.git.unpublished_additions(head, CONVERSATIONS))
    if said:
        found += [
            c
            for c in threads.read_conversations(repo).messages
            if c.stored.rel in said and c.record.sender == agent
        ]
    for task_id, rels in sorted(files.items()):
        if not repo.has_task(task_id):
            continue
        if repo.task_rel(task_id, ENVELOPE) in rels:
            opened = opening(repo, load_task(repo, task_id))
            if opened.sender == agent:
                found.append(opened)
        thread = threads.read_thread(repo, task_id, pending=set())
        found += [c for c in thread.messages if c.stored.rel in rels and c.record.sender == agent]
    return sorted(_unshadowed(found), key=lambda e: (parse_time(_at(e)), e_id(e))), upstream.name


def _unshadowed(found: list[Entry]) -> list[Entry]:
    """`found` without the openings a task keeps as its first message file (the same id):
    the stored, signed one is the opening, shown once."""
    stored = {(e.record.task_id, e.record.msg_id) for e in found if not isinstance(e, Opening)}
    return [e for e in found if not (isinstance(e, Opening) and (e.task.id, e.msg_id) in stored)]
