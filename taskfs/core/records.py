"""The append-only ledger files beside an envelope: their models and their names.

A status file records one lifecycle transition. Its name is `<seq>-<state>-<nonce>.yaml`:
`seq` is its position in the task's chain (so names sort in the order entries were made),
the state makes a listing readable, and the random nonce keeps two clones that append to
the same task offline from ever writing the same name (so git merges them without conflict).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict

from taskfs.core import ids
from taskfs.core.lifecycle import State

STATUS_NAME_RE = re.compile(r"(?P<seq>[0-9]{4,})-(?P<state>[a-z_]+)-(?P<nonce>[0-9a-z]{8})\.yaml")
STAMPED_NAME_RE = re.compile(
    r"(?P<stamp>[0-9]{8}T[0-9]{6}\.[0-9]{6}Z)-(?P<nonce>[0-9a-z]{8})\.yaml"
)
NONCE_LENGTH = 8


def status_name(seq: int, state: str) -> str:
    return f"{seq:04d}-{state}-{ids.nonce(NONCE_LENGTH)}.yaml"


def stamped_name(moment: datetime) -> str:
    """A name that sorts by the time it was made and is unique across clones."""
    stamp = moment.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    return f"{stamp}-{ids.nonce(NONCE_LENGTH)}.yaml"


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


def _status_name(value: str) -> str:
    if not STATUS_NAME_RE.fullmatch(value):
        raise ValueError("not a status file name")
    return value


UtcTime = Annotated[str, Strict(), AfterValidator(_utc_text)]
TaskIdText = Annotated[str, Strict(), AfterValidator(_task_id)]
AgentText = Annotated[str, Strict(), AfterValidator(_agent)]
StatusFileName = Annotated[str, Strict(), AfterValidator(_status_name)]


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
