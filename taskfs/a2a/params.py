"""What A2A 1.0 asks of a request's parameters, checked before the ledger is touched.

protobuf reads a missing field as its default, so a message without `messageId`, `role` or
`parts` arrives looking whole: the fields the proto marks REQUIRED are checked here, as are the
media types a message's parts may have (the card's input modes), `historyLength` (never
negative) and `ListTasks`' filters and page. Each refusal is a named taskfs error; the handler
turns it into the A2A error (`mapping.a2a_error`).
"""

from __future__ import annotations

from datetime import timezone
from typing import NamedTuple

from a2a.types import a2a_pb2 as pb

from taskfs.a2a import mapping
from taskfs.api.tasks.visible import DEFAULT_PAGE_SIZE
from taskfs.core.layout import format_time
from taskfs.errors import fail

# What a message part may carry, as the card says (`defaultInputModes`): the envelope as JSON
# (a data part), or YAML or prose (a text part). A part that names no media type is read by
# its kind: text or data.
INPUT_MODES = (
    mapping.ENVELOPE_MEDIA_TYPE,
    "application/json",
    "application/yaml",
    "text/plain",
    "text/markdown",
)


def check_message(message: pb.Message) -> None:
    """A client's message: its id, the user's role, and parts this agent can read."""
    if not message.message_id.strip():
        raise fail("invalid_value", field="message.messageId", reason="a message needs an id")
    if message.role != pb.ROLE_USER:
        shown = pb.Role.Name(message.role) if message.role in pb.Role.values() else message.role
        raise fail(
            "invalid_value",
            field="message.role",
            reason=f"a client's message has the role ROLE_USER, not {shown}",
        )
    if not message.parts:
        raise fail("invalid_value", field="message.parts", reason="a message needs a part")
    for part in message.parts:
        check_part(part)


def check_part(part: pb.Part) -> None:
    kind = part.WhichOneof("content")
    if kind is None:
        raise fail(
            "invalid_value",
            field="message.parts",
            reason="a part carries text, data, raw bytes or a url: this one carries none",
        )
    media_type = part.media_type.strip().lower()
    if kind in ("text", "data") and (not media_type or media_type in INPUT_MODES):
        return
    raise fail(
        "media_type_unsupported",
        field="message.parts",
        media_type=media_type or ("a file" if kind == "raw" else "a url"),
        accepted=", ".join(INPUT_MODES),
    )


def history_length(value: int | None) -> int | None:
    """`historyLength` as A2A reads it: none for the default (all of it), else the most recent
    that many messages; `invalid_value` when negative."""
    if value is not None and value < 0:
        raise fail(
            "invalid_value", field="historyLength", reason="0 or more messages, or leave it out"
        )
    return value


def sent_history(params: pb.SendMessageRequest) -> int | None:
    configuration = params.configuration
    wanted = configuration.history_length if configuration.HasField("history_length") else None
    return history_length(wanted)


class Listing(NamedTuple):
    """A `ListTasks` request as `taskfs.api.tasks.visible.page` takes it."""

    context: str | None
    states: frozenset[str] | None
    since: str | None
    size: int
    token: str
    history: int | None


def listing(params: pb.ListTasksRequest) -> Listing:
    states: frozenset[str] | None = None
    if params.status != pb.TASK_STATE_UNSPECIFIED:
        state = mapping.FROM_A2A.get(params.status)
        if state is None:
            raise fail("invalid_value", field="status", reason="not a task state")
        # A request not yet a task is shown waiting for input (`mapping.intake_task`).
        states = frozenset({state, "intake"} if state == "input_required" else {state})
    since = None
    if params.HasField("status_timestamp_after"):
        moment = params.status_timestamp_after.ToDatetime(tzinfo=timezone.utc)
        since = format_time(moment)
    size = params.page_size if params.HasField("page_size") else DEFAULT_PAGE_SIZE
    history = history_length(params.history_length if params.HasField("history_length") else None)
    return Listing(params.context_id or None, states, since, size, params.page_token, history)
