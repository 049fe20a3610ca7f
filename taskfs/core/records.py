"""The append-only ledger files beside an envelope: their models and their names.

A status file records one lifecycle transition. Its name is `<seq>-<state>-<nonce>.yaml`:
`seq` is its position in the task's chain (so names sort in the order entries were made),
the state makes a listing readable, and the random nonce keeps two clones that append to
the same task offline from ever writing the same name (so git merges them without conflict).

A message file (`messages/`) and a read mark (`reads/`) are named `stamped_name(at)`: the UTC
time it was made, then a nonce. A message's id is `<task>/<file stem>`, so it is unique across
clones, never changes, and names the one file that holds it.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, model_validator

from taskfs.core import ids
from taskfs.core.lifecycle import State

STATUS_NAME_RE = re.compile(r"(?P<seq>[0-9]{4,})-(?P<state>[a-z_]+)-(?P<nonce>[0-9a-z]{8})\.yaml")
STAMPED_NAME_RE = re.compile(
    r"(?P<stamp>[0-9]{8}T[0-9]{6}\.[0-9]{6}Z)-(?P<nonce>[0-9a-z]{8})\.yaml"
)
NONCE_LENGTH = 8
MESSAGE_STATUSES = ("update", "needs_input", "result", "failed", "canceled")
MessageStatus = Literal["update", "needs_input", "result", "failed", "canceled"]
MSG_ID_RE = re.compile(
    r"(?P<task>[a-z0-9][a-z0-9._-]{0,63})/(?P<stem>[0-9]{8}T[0-9]{6}\.[0-9]{6}Z-[0-9a-z]{8})"
)
KEY_ID_RE = re.compile(r"[0-9a-f]{16}")
MAX_SESSION_LENGTH = 200


def status_name(seq: int, state: str) -> str:
    return f"{seq:04d}-{state}-{ids.nonce(NONCE_LENGTH)}.yaml"


def stamped_name(moment: datetime) -> str:
    """A name that sorts by the time it was made and is unique across clones."""
    stamp = moment.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    return f"{stamp}-{ids.nonce(NONCE_LENGTH)}.yaml"


def message_id(task_id: str, file_name: str) -> str:
    """The id of the message stored in `file_name` under the task's messages folder."""
    return f"{task_id}/{file_name.removesuffix('.yaml')}"


def message_location(msg_id: str) -> tuple[str, str] | None:
    """(task id, file name) of the message `msg_id` names, or None when it is no message id."""
    match = MSG_ID_RE.fullmatch(msg_id)
    if match is None:
        return None
    return match.group("task"), match.group("stem") + ".yaml"


def parse_time(value: str) -> datetime:
    """A time written by `format_time` (any ISO 8601 time with an offset) as an aware datetime."""
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def format_time(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _utc_text(value: str) -> str:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError("not an ISO 8601 time") from None
    if parsed.utcoffset() is None:
        raise ValueError("the time has no UTC offset")
    return value


def _task_id(value: str) -> str:
    if not ids.is_task_id(value):
        raise ValueError("not a task id")
    return value


def _agent(value: str) -> str:
    if not ids.is_agent_name(value):
        raise ValueError("not an agent name")
    return value


def _msg_id(value: str) -> str:
    if not MSG_ID_RE.fullmatch(value):
        raise ValueError("not a message id (<task>/<time>-<nonce>)")
    return value


def _key_id(value: str) -> str:
    if not KEY_ID_RE.fullmatch(value):
        raise ValueError("not a key id (16 lower-case hex digits)")
    return value


def _status_name(value: str) -> str:
    if not STATUS_NAME_RE.fullmatch(value):
        raise ValueError("not a status file name")
    return value


UtcTime = Annotated[str, Strict(), AfterValidator(_utc_text)]
TaskIdText = Annotated[str, Strict(), AfterValidator(_task_id)]
AgentText = Annotated[str, Strict(), AfterValidator(_agent)]
StatusFileName = Annotated[str, Strict(), AfterValidator(_status_name)]
MsgIdText = Annotated[str, Strict(), AfterValidator(_msg_id)]
KeyIdText = Annotated[str, Strict(), AfterValidator(_key_id)]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    def to_document(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class Artifact(_Record):
    name: Annotated[str, Strict()] = Field(min_length=1)
    location: Annotated[str, Strict()] = Field(min_length=1)


class StatusRecord(_Record):
    """One lifecycle transition of one task."""

    task: TaskIdText
    state: State
    by: AgentText
    at: UtcTime
    prev: StatusFileName | None = None
    reason: Annotated[str, Strict()] | None = None
    evidence: Annotated[str, Strict()] | None = Field(
        default=None, description="The evidence file a completion rests on."
    )
    artifacts: tuple[Artifact, ...] | None = None
    message: MsgIdText | None = Field(
        default=None, description="The message that made this transition (contract section 6)."
    )


class MessageRecord(_Record):
    """One message about a task (contract section 6), signed by its sender when it has a key.

    The signature covers text, task_id, status, in_reply_to, from, to, at and msg_id under the
    domain `interlink-v2` (see `taskfs.core.messages`); `session` is an unsigned routing hint.
    """

    msg_id: MsgIdText = Field(description="<task>/<file stem>: unique, stable, locatable.")
    task_id: TaskIdText
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

    @model_validator(mode="after")
    def _signed_whole(self) -> MessageRecord:
        if (self.key_id is None) != (self.signature is None):
            raise ValueError("key_id and signature come together or not at all")
        if not self.msg_id.startswith(self.task_id + "/"):
            raise ValueError("msg_id does not name the message's task")
        return self


class ReadRecord(_Record):
    """A recipient's mark that it has read messages of one task."""

    task_id: TaskIdText
    by: AgentText
    at: UtcTime
    msg_ids: tuple[MsgIdText, ...] = Field(min_length=1)
