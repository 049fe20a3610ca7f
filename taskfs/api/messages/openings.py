"""A task's opening as interlink has it: the signed message carrying the envelope from the
task's sender to its recipient, signed at submission when the keys are here (an opaque msg_id,
like every message) or on demand from committed files (an id derived from them, so that it is
the same message each time); and interlink's clock (unix milliseconds). Its text is the envelope
without the file's schema comment and without the local names of `from` and `to`
(`core.interlink.opening_text`).

Kept below `taskfs.api.tasks.submit` (which signs openings) and `taskfs.api.messages.wire` (which
exports and imports them), so that neither imports the other.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone

from pydantic import ValidationError

from taskfs.api.messages.threads import submitter
from taskfs.core import signing, wire, yamlio
from taskfs.core.interlink import opening_text
from taskfs.core.layout import ENVELOPE, parse_time
from taskfs.core.records import MessageRecord, ms_time
from taskfs.errors import TaskfsError
from taskfs.store import keys
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task, load_task

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def wire_ms(moment: datetime) -> int:
    """`moment` as unix milliseconds (interlink's `ts`)."""
    return (moment - _EPOCH) // timedelta(milliseconds=1)


def derived_opening_id(sender: str, task_id: str, ts: int) -> str:
    """The msg_id of an opening signed on demand: 32 hex digits, as interlink's, derived from
    its sender's key, its task and its moment, so that two ledgers never share one."""
    seed = f"taskfs-opening\0{sender}\0{task_id}\0{ts}".encode()
    return hashlib.sha256(seed).hexdigest()[:32]


def opening(repo: Repository, task_id: str, known: Keys | None = None) -> wire.Message | None:
    """A task's opening as interlink's requester sends it: a plain message from the task's
    sender to its recipient carrying the new `task_id`, the envelope as its text
    (`opening_text`), a derived `msg_id` and `ts` the submission's moment. Every field comes
    from committed files, and Ed25519 is deterministic, so the sender's machine signs the very
    same message each time; None where that cannot be done (no sender or recipient key, or the
    sender's private key is not on this machine)."""
    known = known or Keys(repo)
    task = load_task(repo, task_id)
    sender, recipient = submitter(task), task.envelope.recipient
    public = known.public
    pair = known.private(sender) if sender else None
    if pair is None or recipient not in public or not task.chain.links:
        return None
    if public.get(sender or "") != pair.public:
        return None
    moment = parse_time(task.chain.links[0].record.at)
    sender_id, ts = wire.b64(pair.public), wire_ms(moment)
    try:
        text = opening_text(repo.read_bytes(repo.task_rel(task_id, ENVELOPE)))
    except yamlio.YamlError:
        return None
    message = wire.Message(
        sender=sender_id,
        recipient=wire.b64(public[recipient]),
        text=text,
        ts=ts,
        msg_id=derived_opening_id(sender_id, task_id, ts),
        task_id=task_id,
    )
    return wire.sign(pair.private, message)


def stored_opening(task: Task) -> str | None:
    """The msg_id of the task's opening kept with it (the first status names it), or None for
    a task submitted without one (older tasks, or no keys): its opening is signed on demand."""
    links = task.chain.links
    if not links or links[0].record.state != "submitted":
        return None
    return links[0].record.message


class OpeningSigner:
    """Signs the openings of the tasks `actor` submits here, when its private key is on this
    machine and matches its committed key (keys read once per batch)."""

    def __init__(self, repo: Repository, actor: str) -> None:
        self.actor = actor
        self.known = Keys(repo)

    def sign(
        self, task_id: str, recipient: str | None, text: bytes, at: str
    ) -> MessageRecord | None:
        """The opening `actor` sends `recipient`: `opening_text` of `text` (the envelope file's
        bytes) with the task's id, a new msg_id, `ts` the submission's moment `at`; None when it
        cannot be signed here (no key for either end, or an envelope that is not UTF-8). A
        sender whose recipient has no key still submits: only the signed opening is left
        out."""
        public = self.known.public
        pair = self.known.private(self.actor)
        if pair is None or recipient is None or recipient not in public:
            return None
        if public.get(self.actor) != pair.public:
            return None
        try:
            body = opening_text(text)
        except yamlio.YamlError:
            return None
        message = wire.Message(
            sender=wire.b64(pair.public),
            recipient=wire.b64(public[recipient]),
            text=body,
            ts=wire_ms(parse_time(at)),
            msg_id=wire.new_msg_id(),
            task_id=task_id,
        )
        return record_of(wire.sign(pair.private, message), self.actor, recipient)


class Keys:
    """The committed agent keys and this machine's private ones, each read once."""

    def __init__(self, repo: Repository) -> None:
        self.public = keys.public_keys(repo.root, "agent")
        self._private: dict[str, signing.KeyPair | None] = {}

    def private(self, name: str) -> signing.KeyPair | None:
        if name not in self._private:
            self._private[name] = keys.load_private("agent", name)
        return self._private[name]


def unstored_openings(repo: Repository, task_ids: Iterable[str]) -> list[tuple[str, wire.Message]]:
    found: list[tuple[str, wire.Message]] = []
    known = Keys(repo)
    for task_id in task_ids:
        try:
            if stored_opening(load_task(repo, task_id)) is not None:
                continue  # exported as stored, with the task's other messages
            message = opening(repo, task_id, known)
        except (TaskfsError, OSError, UnicodeDecodeError):
            continue
        if message is not None:
            found.append((ms_time(message.ts), message))
    return found


def record_of(message: wire.Message, sender: str, agent: str) -> MessageRecord:
    """The ledger's record of an accepted message: its signed fields as signed, beside the
    local names of its sender and recipient. `ValueError` naming what taskfs cannot hold."""
    data = {
        "msg_id": message.msg_id,
        "task_id": message.task_id,
        "from": sender,
        "to": agent,
        "status": message.status,
        "in_reply_to": message.in_reply_to,
        "at": ms_time(message.ts),
        "text": message.text,
        "from_id": message.sender,
        "to_id": message.recipient,
        "ts": message.ts,
        "kind": message.kind,
        "sig": message.sig,
    }
    try:
        return MessageRecord.model_validate({k: v for k, v in data.items() if v is not None})
    except ValidationError as exc:
        error = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in error["loc"]) or "message"
        raise ValueError(f"{where}: {str(error['msg']).removeprefix('Value error, ')}") from None
