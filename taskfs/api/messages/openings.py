"""A task's opening as interlink has it: the signed message carrying the envelope from the
task's sender to its recipient (`<task>/envelope`), signed at submission when the keys are here
or on demand from committed files; and interlink's clock (unix milliseconds).

Kept below `taskfs.api.tasks.submit` (which signs openings) and `taskfs.api.messages.wire` (which
exports and imports them), so that neither imports the other.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta, timezone

from pydantic import ValidationError

from taskfs.api.messages.threads import submitter
from taskfs.core import signing, wire
from taskfs.core.interlink import opening_id
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


def opening(repo: Repository, task_id: str, known: Keys | None = None) -> wire.Message | None:
    """A task's opening as interlink's requester sends it: a plain message from the task's
    sender to its recipient carrying the new `task_id`, the envelope as its text, `msg_id`
    `<task>/envelope` and `ts` the submission's moment. Every field comes from committed files,
    and Ed25519 is deterministic, so the sender's machine signs the very same message each time;
    None where that cannot be done (no sender or recipient key, or the sender's private key is
    not on this machine)."""
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
    message = wire.Message(
        sender=wire.b64(pair.public),
        recipient=wire.b64(public[recipient]),
        text=repo.read_bytes(repo.task_rel(task_id, ENVELOPE)).decode("utf-8"),
        ts=wire_ms(moment),
        msg_id=opening_id(task_id),
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
        """The opening `actor` sends `recipient`: `text` (the envelope file's bytes) with the
        task's id, `ts` the submission's moment `at`; None when it cannot be signed here (no
        key for either end, or an envelope that is not UTF-8). A sender whose recipient has no
        key still submits: only the signed opening is left out."""
        public = self.known.public
        pair = self.known.private(self.actor)
        if pair is None or recipient is None or recipient not in public:
            return None
        if public.get(self.actor) != pair.public:
            return None
        try:
            body = text.decode("utf-8")
        except UnicodeDecodeError:
            return None
        message = wire.Message(
            sender=wire.b64(pair.public),
            recipient=wire.b64(public[recipient]),
            text=body,
            ts=wire_ms(parse_time(at)),
            msg_id=opening_id(task_id),
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
