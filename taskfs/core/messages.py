"""Task messages as values: what a signature covers, and why a message may not be acted on.

Pure: keys, the clock and what the ledger already holds are passed in; nothing here reads a
file.

What is signed
--------------
Every message signed today carries interlink's signature (`sig`), over interlink's canonical
bytes (`taskfs.core.wire`): the sender's and recipient's keys (`from_id`, `to_id`), `ts`, `kind`,
`msg_id`, `text`, `status`, `task_id`, `in_reply_to`, each the exact value in the file. Exporting
it never re-signs it, and any interlink implementation verifies it.

Messages signed before interlink's encoding (they carry `key_id` and `signature`) keep verifying
under taskfs's first encoding: their signature is
`signing.sign(private, "interlink-v2", fields)` (see `taskfs.core.signing` for the byte
layout) over these eight fields, in this order:

    text, task_id, status, in_reply_to, from, to, at, msg_id

each the exact text stored in the message file; `status` and `in_reply_to` are None (the
encoding's None marker, distinct from "") when absent. `session` is a routing hint and is not
signed. `key_id` names the key (first 16 hex digits of the SHA-256 of the raw public key) so a
reader can tell a rotated key from a forgery.

When a message is checked
-------------------------
* Always (shown, listed, counted, acted on): the signature verifies under the sender's
  registered public key (`signature_invalid`); an unsigned message is accepted only when the
  sender has no registered key and the repository does not require signatures
  (`message_unsigned`: a registered key means unsigned text claiming that sender is a forgery);
  its id names its own file and was not seen before in the task (`message_replayed`: a copy
  under another name or in another task).
* When an agent acts on it (answers it, marks it read, reviews it): it is addressed to that
  agent (`message_misaddressed`).
* When it enters the ledger (the commit that brings it in): its `at` lies within 24 hours
  behind and 60 seconds ahead of the acting command's clock (`message_expired`). A message in
  git history is old forever, so freshness is decided once, by the commit that delivered it;
  showing history, or answering a question asked two days ago, never calls it expired.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from taskfs.core import signing, wire
from taskfs.core.layout import MSG_ID_RE, parse_time
from taskfs.core.lifecycle import State
from taskfs.core.records import MessageRecord
from taskfs.errors import Problem, problem

MAX_AGE = timedelta(hours=24)
MAX_AHEAD = timedelta(seconds=60)
SIGNED_FIELDS = ("text", "task_id", "status", "in_reply_to", "from", "to", "at", "msg_id")


def signed_fields(record: MessageRecord) -> list[tuple[str, str | None]]:
    values: dict[str, str | None] = {
        "text": record.text,
        "task_id": record.task_id,
        "status": record.status,
        "in_reply_to": record.in_reply_to,
        "from": record.sender,
        "to": record.recipient,
        "at": record.at,
        "msg_id": record.msg_id,
    }
    return [(name, values[name]) for name in SIGNED_FIELDS]


def signed(record: MessageRecord, pair: signing.KeyPair, to_public: bytes) -> MessageRecord:
    """`record` carrying its sender's interlink signature, addressed to the key `to_public`
    (built through validation, never copied). Its `ts` and `kind` must be set."""
    data = record.to_document()
    for name in ("key_id", "signature", "sig"):
        data.pop(name, None)
    data["from_id"] = wire.b64(pair.public)
    data["to_id"] = wire.b64(to_public)
    unsigned = MessageRecord.model_validate({**data, "sig": "A" * wire.SIG_LENGTH})
    data["sig"] = wire.sign(pair.private, wire_message(unsigned)).sig
    return MessageRecord.model_validate(data)


def legacy_signed(record: MessageRecord, pair: signing.KeyPair) -> MessageRecord:
    """`record` signed under taskfs's first encoding: what older messages carry. Nothing new is
    signed so; this is here to make such messages (in tests, and to describe them)."""
    data = record.to_document()
    data["key_id"] = signing.key_id(pair.public)
    data["signature"] = signing.sign(pair.private, signing.MESSAGE_DOMAIN, signed_fields(record))
    return MessageRecord.model_validate(data)


def wire_message(record: MessageRecord) -> wire.Message:
    """The interlink `SignedMessage` a message signed with `sig` is, exactly as signed."""
    if record.sig is None or record.from_id is None or record.to_id is None or record.ts is None:
        raise ValueError("only a message with an interlink signature has a wire form")
    return wire.Message(
        sender=record.from_id,
        recipient=record.to_id,
        text=record.text,
        ts=record.ts,
        msg_id=record.msg_id,
        kind=record.kind or "message",
        task_id=record.task_id,
        status=record.status,
        in_reply_to=record.in_reply_to,
        reply_to=None,
        sig=record.sig,
    )


@dataclass(frozen=True)
class SenderTrust:
    """What a reader knows when it checks signatures."""

    public_keys: Mapping[str, bytes]
    require_signed: bool


def authenticity(record: MessageRecord, trust: SenderTrust) -> list[Problem]:
    """Whether the message is what its sender signed: `signature_invalid`, `message_unsigned`."""
    key = trust.public_keys.get(record.sender)
    if record.signature is None and record.sig is None:
        if key is not None:
            return [
                problem(
                    "message_unsigned",
                    msg_id=record.msg_id,
                    reason=f"{record.sender!r} has a registered key but the message is unsigned",
                )
            ]
        if trust.require_signed:
            return [
                problem(
                    "message_unsigned",
                    msg_id=record.msg_id,
                    reason="this repository requires signatures (requireSignedMessages)",
                )
            ]
        return []
    if key is None:
        return [_bad_signature(record, f"{record.sender!r} has no registered public key")]
    if record.sig is not None:
        return _wire_authenticity(record, key, trust)
    if record.key_id != signing.key_id(key):
        return [_bad_signature(record, f"it names key {record.key_id}, not {record.sender}'s")]
    signature = record.signature or ""
    if not signing.verify(key, signing.MESSAGE_DOMAIN, signed_fields(record), signature):
        return [_bad_signature(record, "the signature does not match the message")]
    return []


def _wire_authenticity(record: MessageRecord, key: bytes, trust: SenderTrust) -> list[Problem]:
    if record.from_id != wire.b64(key):
        return [_bad_signature(record, f"it was signed by another key than {record.sender}'s")]
    to_key = trust.public_keys.get(record.recipient)
    if to_key is not None and record.to_id != wire.b64(to_key):
        return [_bad_signature(record, f"it is addressed to another key than {record.recipient}'s")]
    if not wire_message(record).verified():
        return [_bad_signature(record, "the signature does not match the message")]
    return []


def _bad_signature(record: MessageRecord, reason: str) -> Problem:
    return problem("signature_invalid", msg_id=record.msg_id, reason=reason)


def replay_key(record: MessageRecord) -> tuple[str, str]:
    """What replay protection keys on: the sender (its key when signed so) and the msg_id."""
    return (record.from_id or record.sender, record.msg_id)


def placement(
    record: MessageRecord, task_id: str | None, own_id: str, seen: set[tuple[str, str]]
) -> list[Problem]:
    """`message_replayed` when the message is not in its task's place, repeats a (sender,
    msg_id) already seen, or (an older id, which names its file) lies under another name: a
    signed message copied elsewhere keeps its old id."""
    moved = MSG_ID_RE.fullmatch(record.msg_id) is not None and record.msg_id != own_id
    if record.task_id != task_id or moved or replay_key(record) in seen:
        return [problem("message_replayed", msg_id=record.msg_id, file_id=own_id)]
    return []


def addressed(record: MessageRecord, agent: str) -> list[Problem]:
    if record.recipient == agent:
        return []
    return [
        problem(
            "message_misaddressed",
            msg_id=record.msg_id,
            msg_text=f" {record.msg_id!r}",
            to=record.recipient,
            agent=agent,
        )
    ]


def freshness(record: MessageRecord, now: datetime) -> list[Problem]:
    at = parse_time(record.at)
    if now - MAX_AGE <= at <= now + MAX_AHEAD:
        return []
    return [problem("message_expired", msg_id=record.msg_id, at=record.at, now=now.isoformat())]


def effect(
    record: MessageRecord,
    state: State,
    open_question: str | None,
    recipient: str | None = None,
) -> State | None:
    """The transition a message asks for, given the task's state, its open question and the
    recipient its envelope names.

    `needs_input` asks for `input_required`; a reply to the open question (the message that
    put the task in `input_required`) moves it back to `working`; `failed` and `canceled` are
    those transitions; an `update` from the named recipient of a `submitted` task accepts it
    (a claim: interlink's agents report `working` that way); otherwise `result`, `update` and
    plain messages move nothing.
    """
    if record.status == "update" and state == "submitted":
        return "working" if recipient is not None and record.sender == recipient else None
    if record.status == "needs_input":
        return "input_required"
    if record.status == "failed":
        return "failed"
    if record.status == "canceled":
        return "canceled"
    if (
        record.status in (None, "update")
        and state == "input_required"
        and record.in_reply_to is not None
        and record.in_reply_to == open_question
    ):
        return "working"
    return None
