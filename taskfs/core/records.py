"""The append-only ledger files beside an envelope: their models and their names.

A status file records one lifecycle transition. Its name is `<seq>-<state>-<nonce>.yaml`:
`seq` is its position in the task's chain (so names sort in the order entries were made),
the state makes a listing readable, and the random nonce keeps two clones that append to
the same task offline from ever writing the same name (so git merges them without conflict).

A message file (`messages/`) and a read mark (`reads/`) are named `stamped_name(at)`: the UTC
time it was made, then a nonce. A message's id is `<task>/<file stem>`, so it is unique across
clones, never changes, and names the one file that holds it.

The models of evidence files (`evidence/`) are in `taskfs.core.evidence_records`, which builds
on `_Record` and the field types here: creating their classes costs milliseconds that commands
which never read evidence (`new`, `send`) should not pay for importing this module.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, model_validator

from taskfs.core import layout, wire
from taskfs.core.layout import (
    KEY_ID_RE,
    MAX_SESSION_LENGTH,
    MSG_ID_RE,
    STATUS_NAME_RE,
    format_time,
)
from taskfs.core.lifecycle import State

MessageStatus = Literal["update", "needs_input", "result", "failed", "canceled"]


def _utc_text(value: str) -> str:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError("not an ISO 8601 time") from None
    if parsed.utcoffset() is None:
        raise ValueError("the time has no UTC offset")
    return value


def _task_id(value: str) -> str:
    if not layout.is_task_id(value):
        raise ValueError("not a task id")
    return value


def _agent(value: str) -> str:
    if not layout.is_agent_name(value):
        raise ValueError("not an agent name")
    return value


def _msg_id(value: str) -> str:
    # Opaque, as interlink has it (its own are 32 hex digits); taskfs's older ids are
    # <task>/<time>-<nonce>. Printable ASCII without blanks keeps ids safe in commit trailers.
    if not (MSG_ID_RE.fullmatch(value) or OPAQUE_MSG_ID_RE.fullmatch(value)):
        raise ValueError("not a message id (1-128 printable ASCII characters, no blanks)")
    return value


def _interlink_id(value: str) -> str:
    try:
        wire.parse_id(value)
    except wire.WireError as exc:
        raise ValueError(str(exc)) from None
    return value


def matching(pattern: re.Pattern[str], reason: str) -> AfterValidator:
    """The check that a text is `pattern`, whole; `reason` says what it is not, otherwise."""

    def check(value: str) -> str:
        if not pattern.fullmatch(value):
            raise ValueError(reason)
        return value

    return AfterValidator(check)


OPAQUE_MSG_ID_RE = re.compile(r"[\x21-\x7e]{1,128}")
WIRE_SIG_RE = re.compile(r"[A-Za-z0-9_-]{86}")
UtcTime = Annotated[str, Strict(), AfterValidator(_utc_text)]
TaskIdText = Annotated[str, Strict(), AfterValidator(_task_id)]
AgentText = Annotated[str, Strict(), AfterValidator(_agent)]
StatusFileName = Annotated[str, Strict(), matching(STATUS_NAME_RE, "not a status file name")]
MsgIdText = Annotated[str, Strict(), AfterValidator(_msg_id)]
KeyIdText = Annotated[str, Strict(), matching(KEY_ID_RE, "not a key id (16 lower-case hex digits)")]
InterlinkIdText = Annotated[str, Strict(), AfterValidator(_interlink_id)]
WireSigText = Annotated[
    str,
    Strict(),
    matching(WIRE_SIG_RE, "not an interlink signature (86 characters of URL-safe base64)"),
]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    def to_document(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class Artifact(_Record):
    name: Annotated[str, Strict()] = Field(min_length=1)
    location: Annotated[str, Strict()] = Field(min_length=1)


EnvelopeDigest = Annotated[
    str, Strict(), matching(re.compile(r"sha256:[0-9a-f]{64}"), "not sha256:<64 hex digits>")
]


class StatusRecord(_Record):
    """One lifecycle transition of one task."""

    task: TaskIdText
    state: State
    by: AgentText
    at: UtcTime
    prev: StatusFileName | None = None
    reason: Annotated[str, Strict()] | None = None
    evidence: Annotated[str, Strict()] | None = Field(
        default=None,
        description="The evidence file (in the task's evidence folder) a completion rests on.",
    )
    artifacts: tuple[Artifact, ...] | None = None
    message: MsgIdText | None = Field(
        default=None, description="The message that made this transition (contract section 6)."
    )
    amendment: Annotated[str, Strict()] | None = Field(
        default=None,
        description="A claim: the amendment of the envelope in force when the task was claimed "
        "(its file in the task's amendments folder; none: the envelope as submitted).",
    )
    envelope: EnvelopeDigest | None = Field(
        default=None,
        description="A `submitted`: the SHA-256 of the envelope file it submitted "
        "(`sha256:<hex>`), so that its signature covers the contract too.",
    )
    sig: Annotated[str, Strict()] | None = Field(
        default=None,
        description="The Ed25519 signature of `by` over the other fields "
        "(taskfs.core.transition_signing), where `by` has a key.",
    )


class MessageRecord(_Record):
    """One message (contract section 6), about a task or, without `task_id`, conversation.

    A message signed today carries interlink's signature (`sig`) over interlink's fields as
    signed: `from_id`/`to_id` (the interlink ids of `from`/`to`, which are local names), `ts`,
    `kind`, `msg_id`, `text`, `status`, `task_id`, `in_reply_to` (see `taskfs.core.wire`), so
    it can be exported and verified by any interlink implementation without re-signing. Older
    messages carry `key_id` and `signature` over taskfs's first encoding (see
    `taskfs.core.messages`). `session` is an unsigned routing hint.
    """

    msg_id: MsgIdText = Field(description="Opaque; unique per sender (older ids: <task>/<stem>).")
    task_id: TaskIdText | None = Field(default=None, description="Absent for conversation.")
    sender: AgentText = Field(alias="from")
    recipient: AgentText = Field(alias="to")
    status: MessageStatus | None = Field(default=None, description="Absent for plain conversation.")
    in_reply_to: MsgIdText | None = None
    at: UtcTime
    text: Annotated[str, Strict()] = Field(max_length=64 * 1024)
    session: Annotated[str, Strict()] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_SESSION_LENGTH,
        description="Unsigned routing hint: one of several sessions under one agent name.",
    )
    key_id: KeyIdText | None = None
    signature: Annotated[str, Strict()] | None = None
    from_id: InterlinkIdText | None = Field(default=None, description="The sender's key, signed.")
    to_id: InterlinkIdText | None = Field(default=None, description="The recipient's key, signed.")
    ts: Annotated[int, Strict(), Field(ge=0, le=wire.MAX_TS)] | None = Field(
        default=None, description="Unix milliseconds, signed; `at` is the same moment."
    )
    kind: Literal["message"] | None = None
    sig: WireSigText | None = Field(default=None, description="interlink's signature.")

    @model_validator(mode="after")
    def _signed_whole(self) -> MessageRecord:
        if (self.key_id is None) != (self.signature is None):
            raise ValueError("key_id and signature come together or not at all")
        wired = (self.from_id, self.to_id, self.sig, self.ts, self.kind)
        if self.sig is not None and None in wired:
            raise ValueError("sig comes with from_id, to_id, ts and kind")
        if self.sig is None and (self.from_id, self.to_id) != (None, None):
            raise ValueError("from_id and to_id come with sig")
        if self.sig is not None and self.signature is not None:
            raise ValueError("a message carries one signature: sig or signature")
        if MSG_ID_RE.fullmatch(self.msg_id) and (
            self.task_id is None or not self.msg_id.startswith(self.task_id + "/")
        ):
            raise ValueError("msg_id does not name the message's task")
        if self.ts is not None and self.at != ms_time(self.ts):
            raise ValueError("at is not the moment ts names")
        return self


def ms_time(ts: int) -> str:
    """`at` text of unix milliseconds; `ValueError` outside the calendar's range."""
    try:
        moment = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=ts)
    except OverflowError:
        raise ValueError("ts is beyond the calendar") from None
    return format_time(moment)


class ReadRecord(_Record):
    """A recipient's mark that it has read messages of one task."""

    task_id: TaskIdText
    by: AgentText
    at: UtcTime
    msg_ids: tuple[MsgIdText, ...] = Field(min_length=1)
    sig: Annotated[str, Strict()] | None = Field(
        default=None,
        description="The Ed25519 signature of `by` over the other fields "
        "(taskfs.core.act_signing, taskfs-read-v1), where `by` has a key.",
    )
