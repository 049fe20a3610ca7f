"""Between the ledger and A2A's types: tasks, events, envelopes and refusals.

taskfs's eight states are A2A's eight task states. A transition becomes a status update, a
message a status update carrying the message, an evidence file an artifact; a completion
sends its declared artifacts before the `completed` update, so a client that stops reading at
the final state has them. Every event carries the ledger's id as `metadata.eventId`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from a2a.types import a2a_pb2 as pb
from a2a.utils import errors as a2a_errors
from google.protobuf import json_format, struct_pb2
from google.protobuf.timestamp_pb2 import Timestamp

from taskfs.api.messages.threads import submitter
from taskfs.api.sync.events import LedgerEvent, TaskEvents
from taskfs.api.tasks.visible import intake_context
from taskfs.core import lifecycle
from taskfs.core.intake import Intake
from taskfs.errors import Problem, problem

STATES: dict[str, int] = {
    "submitted": pb.TASK_STATE_SUBMITTED,
    "working": pb.TASK_STATE_WORKING,
    "input_required": pb.TASK_STATE_INPUT_REQUIRED,
    "auth_required": pb.TASK_STATE_AUTH_REQUIRED,
    "completed": pb.TASK_STATE_COMPLETED,
    "failed": pb.TASK_STATE_FAILED,
    "canceled": pb.TASK_STATE_CANCELED,
    "rejected": pb.TASK_STATE_REJECTED,
}
FROM_A2A = {value: name for name, value in STATES.items()}
TERMINAL = lifecycle.TERMINAL  # the states with no way out of the lifecycle table
INTERRUPTED = frozenset({"input_required", "auth_required"})
ENVELOPE_MEDIA_TYPE = "application/vnd.taskfs.envelope+json"
EVIDENCE_ARTIFACT = "acceptance-evidence"

Event = pb.Task | pb.TaskStatusUpdateEvent | pb.TaskArtifactUpdateEvent


# -- envelopes in -----------------------------------------------------------------------


def envelope_document(message: pb.Message) -> dict[str, Any] | str:
    """The envelope a message carries: its first data part that is a mapping, else the text
    of its text parts (YAML); `yaml_invalid` when it carries neither."""
    for part in message.parts:
        if part.HasField("data"):
            value = json_format.MessageToDict(part.data)
            if isinstance(value, dict):
                return {k: _whole(v) for k, v in value.items()}
    text = "\n".join(part.text for part in message.parts if part.HasField("text"))
    if text.strip():
        return text
    from taskfs.errors import fail

    raise fail("yaml_invalid", reason="the message carries no envelope: send it as a data part")


def _whole(value: Any) -> Any:
    """Numbers come through protobuf as doubles: 30.0 seconds is the integer 30 again."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return value


def message_text(message: pb.Message) -> str:
    return "\n".join(part.text for part in message.parts if part.HasField("text"))


# -- the ledger out ---------------------------------------------------------------------


def _timestamp(at: str | None) -> Timestamp | None:
    if not at:
        return None
    stamp = Timestamp()
    try:
        stamp.FromJsonString(at)
    except ValueError:
        return None
    return stamp


def _struct(value: Mapping[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(json.loads(json.dumps(value, default=str)))
    return out


def _data_part(value: Any) -> pb.Part:
    data = struct_pb2.Value()
    json_format.ParseDict(json.loads(json.dumps(value, default=str)), data)
    return pb.Part(data=data, media_type="application/json")


def a2a_message(tasks: TaskEvents, event: LedgerEvent) -> pb.Message:
    assert event.message is not None
    record = event.message.record
    user = record.sender == submitter(tasks.task)
    meta: dict[str, Any] = {
        "eventId": event.id,
        "from": record.sender,
        "to": record.recipient,
        "status": record.status,
        "inReplyTo": record.in_reply_to,
        "at": record.at,
        "file": event.rel,
    }
    if event.message.problems:
        meta["notActedOn"] = [p.code for p in event.message.problems]
    return pb.Message(
        message_id=record.msg_id,
        context_id=tasks.task.envelope.context_id,
        task_id=tasks.task.id,
        role=pb.ROLE_USER if user else pb.ROLE_AGENT,
        parts=[pb.Part(text=record.text)],
        metadata=_struct({k: v for k, v in meta.items() if v is not None}),
    )


def evidence_artifact(event: LedgerEvent) -> pb.Artifact:
    assert event.evidence is not None
    record = event.evidence.document
    summary = {
        key: record.get(key)
        for key in (
            "kind",
            "verdict",
            "verdictSource",
            "command",
            "exitCode",
            "startedAt",
            "durationSeconds",
            "commit",
            "by",
            "stdout",
            "stderr",
            "note",
        )
        if record.get(key) is not None
    }
    summary["file"] = event.rel
    summary["signature"] = event.evidence.signature
    return pb.Artifact(
        artifact_id=event.id,
        name=EVIDENCE_ARTIFACT,
        description=f"acceptance check: {summary.get('verdict')}",
        parts=[_data_part(summary)],
        metadata=_struct({"eventId": event.id, "verdict": summary.get("verdict")}),
    )


def declared_artifacts(
    event: LedgerEvent, contents: Mapping[str, bytes | None]
) -> list[pb.Artifact]:
    """The artifacts a completion declared: a reference (name, location) and, for a file the
    completion's commit holds, its bytes."""
    assert event.status is not None
    out = []
    for item in event.status.record.artifacts or ():
        parts = [_data_part({"name": item.name, "location": item.location})]
        content = contents.get(item.location)
        if content is not None:
            parts.append(pb.Part(raw=content, filename=item.location))
        elif "://" in item.location:
            parts.append(pb.Part(url=item.location))
        artifact_id = f"{event.id}#{item.name}"
        out.append(
            pb.Artifact(
                artifact_id=artifact_id,
                name=item.name,
                parts=parts,
                metadata=_struct({"eventId": artifact_id, "location": item.location}),
            )
        )
    return out


def stream_events(
    tasks: TaskEvents, event: LedgerEvent, contents: Mapping[str, bytes | None]
) -> list[Event]:
    """What one ledger event sends on a stream, each with its own event id."""
    task = tasks.task
    context = task.envelope.context_id
    if event.kind == "evidence":
        return [
            pb.TaskArtifactUpdateEvent(
                task_id=task.id,
                context_id=context,
                artifact=evidence_artifact(event),
                last_chunk=True,
                metadata=_struct({"eventId": event.id, "file": event.rel}),
            )
        ]
    if event.kind == "message":
        assert event.message is not None
        status = pb.TaskStatus(
            state=STATES[event.state],  # type: ignore[arg-type]
            message=a2a_message(tasks, event),
            timestamp=_timestamp(event.message.record.at),
        )
        said = {"eventId": event.id, "kind": "message", "file": event.rel}
        return [
            pb.TaskStatusUpdateEvent(
                task_id=task.id, context_id=context, status=status, metadata=_struct(said)
            )
        ]
    assert event.status is not None
    record = event.status.record
    out: list[Event] = [
        pb.TaskArtifactUpdateEvent(
            task_id=task.id,
            context_id=context,
            artifact=artifact,
            last_chunk=True,
            metadata=artifact.metadata,
        )
        for artifact in declared_artifacts(event, contents)
    ]
    meta: dict[str, Any] = {
        "eventId": event.id,
        "kind": "transition",
        "state": record.state,
        "by": record.by,
        "reason": record.reason,
        "evidence": record.evidence,
        "message": record.message,
        "file": event.rel,
    }
    status = pb.TaskStatus(
        state=STATES[record.state],  # type: ignore[arg-type]
        timestamp=_timestamp(record.at),
    )
    if record.reason:
        status.message.CopyFrom(
            pb.Message(
                message_id=event.id,
                context_id=context,
                task_id=task.id,
                role=pb.ROLE_AGENT if record.by != submitter(task) else pb.ROLE_USER,
                parts=[pb.Part(text=record.reason)],
            )
        )
    out.append(
        pb.TaskStatusUpdateEvent(
            task_id=task.id,
            context_id=context,
            status=status,
            metadata=_struct({k: v for k, v in meta.items() if v is not None}),
        )
    )
    return out


def open_question(tasks: TaskEvents) -> str | None:
    head = tasks.task.chain.head
    if head is None or tasks.task.state != "input_required":
        return None
    return head.record.message


def to_task(
    tasks: TaskEvents,
    contents: Mapping[str, bytes | None],
    history_length: int | None = None,
    *,
    opening: Sequence[pb.Message] = (),
) -> pb.Task:
    """The task as A2A shows it: its state (with the open question), its messages as history
    (after `opening`, the request it was opened from), its evidence and, once completed, its
    declared artifacts."""
    task = tasks.task
    question = open_question(tasks)
    messages = [e for e in tasks.events if e.kind == "message"]
    history = [*opening, *(a2a_message(tasks, e) for e in messages)]
    if history_length is not None and history_length >= 0:
        history = history[len(history) - history_length :] if history_length else []
    status = pb.TaskStatus(state=STATES[task.state])  # type: ignore[arg-type]
    head = task.chain.head
    if head is not None:
        stamp = _timestamp(head.record.at)
        if stamp is not None:
            status.timestamp.CopyFrom(stamp)
    for event in messages:
        if question is not None and event.id == question:
            status.message.CopyFrom(a2a_message(tasks, event))
    artifacts = [evidence_artifact(e) for e in tasks.events if e.kind == "evidence"]
    for event in tasks.events:
        if event.kind == "status" and event.state == "completed":
            artifacts += declared_artifacts(event, contents)
    meta = {
        "taskfs": {
            "state": task.state,
            "from": submitter(task),
            "to": task.envelope.recipient,
            "holder": task.holder,
            "lastEventId": tasks.last_id,
            "openQuestion": question,
            "envelope": task.envelope.to_document(),
        }
    }
    return pb.Task(
        id=task.id,
        context_id=task.envelope.context_id,
        status=status,
        artifacts=artifacts,
        history=history,
        metadata=_struct(meta),
    )


def completion_contents(tasks: TaskEvents, read: Any) -> dict[str, bytes | None]:
    """The bytes of the declared artifacts of every completion (`read(commit, location)`)."""
    out: dict[str, bytes | None] = {}
    for event in tasks.events:
        if event.kind == "status" and event.status is not None:
            for item in event.status.record.artifacts or ():
                out[item.location] = read(event.commit, item.location)
    return out


# -- refusals -----------------------------------------------------------------------------

_NOT_FOUND = {"task_not_found", "not_a_repository"}
# A rule of the lifecycle, or of A2A's: the request is understood, but not in this state.
_PRECONDITION = {
    "transition_not_allowed",
    "agent_not_allowed",
    "reason_required",
    "dependencies_unresolved",
    "completion_requires_evidence",
    "evidence_stale",
    "work_uncommitted",
    "message_not_found",
    "message_misaddressed",
    "message_unsigned",
    "intake_open",
    "intake_closed",
    "proposal_not_found",
    "task_finished",
}
_NOT_CANCELABLE = {"transition_not_allowed", "intake_closed", "task_finished"}
_AUTH = {"token_invalid", "invalid_agent", "origin_refused"}
# What the caller cannot mend: the server's repository, its git, its own files.
_INTERNAL = {
    "internal_error",
    "git_failed",
    "file_unwritable",
    "config_invalid",
    "file_invalid",
    "chain_broken",
    "ledger_file_uncommitted",
    "task_id_collision",
}
_KINDS: dict[str, type[a2a_errors.A2AError]] = {
    "a2a_version_unsupported": a2a_errors.VersionNotSupportedError,
    "a2a_method_not_found": a2a_errors.MethodNotFoundError,
    "media_type_unsupported": a2a_errors.ContentTypeNotSupportedError,
    **dict.fromkeys(_NOT_FOUND, a2a_errors.TaskNotFoundError),
    **dict.fromkeys(_AUTH, a2a_errors.InvalidRequestError),
    **dict.fromkeys(_PRECONDITION, a2a_errors.UnsupportedOperationError),
    **dict.fromkeys(_INTERNAL, a2a_errors.InternalError),
}


def a2a_error(
    problems: Sequence[Problem],
    *,
    cancel: bool = False,
    kind: type[a2a_errors.A2AError] | None = None,
) -> a2a_errors.A2AError:
    """The A2A error for a refusal (A2A 1.0 section 5.4's codes): `TaskNotFound` (-32001),
    `TaskNotCancelable` (-32002) when canceling, `UnsupportedOperation` (-32004) for a rule
    of the lifecycle, `ContentTypeNotSupported` (-32005), `VersionNotSupported` (-32009),
    `InvalidRequest` (-32600) for who is calling, `Internal` (-32603) for what the caller
    cannot mend, else `InvalidParams` (-32602). Its data (the `google.rpc.ErrorInfo` metadata
    on the wire) names taskfs's codes: `taskfsCode` (the first), `taskfsCodes` (all, comma
    separated) and `taskfsErrors` (the refusal's errors as JSON text)."""
    first = problems[0]
    data = {
        "taskfsCode": first.code,
        "taskfsCodes": ",".join(p.code for p in problems),
        "taskfsErrors": json.dumps([p.to_json() for p in problems], default=str),
    }
    kind = kind or _KINDS.get(first.code, a2a_errors.InvalidParamsError)
    if cancel and first.code in _NOT_CANCELABLE:
        kind = a2a_errors.TaskNotCancelableError
    said = "; ".join(f"{p.code}: {p.english}" for p in problems)
    return kind(f"{_SAID[kind]}: {said}", data=data)


# Each error's message opens with what A2A calls it, then taskfs's own words.
_SAID: dict[type[a2a_errors.A2AError], str] = {
    a2a_errors.TaskNotFoundError: "Task not found",
    a2a_errors.TaskNotCancelableError: "Task not cancelable",
    a2a_errors.UnsupportedOperationError: "Operation not supported",
    a2a_errors.ContentTypeNotSupportedError: "Content type not supported",
    a2a_errors.VersionNotSupportedError: "Version not supported",
    a2a_errors.InvalidRequestError: "Invalid request",
    a2a_errors.InvalidParamsError: "Invalid params",
    a2a_errors.InternalError: "Internal error",
    a2a_errors.MethodNotFoundError: "Method not found",
}


def not_yours(task_id: str, agent: str) -> a2a_errors.A2AError:
    """A task the caller is no party to: A2A's `TaskNotFound` (no client may act on it),
    naming taskfs's `agent_not_allowed`."""
    found = problem(
        "agent_not_allowed",
        agent=agent,
        action="read",
        action_text=f"follow task {task_id!r}",
        reason="only a party to the task may",
    )
    return a2a_error([found], kind=a2a_errors.TaskNotFoundError)


# -- requests that are not yet tasks (contract section 12) ---------------------------------


def intake_task(
    intake: Intake, problems: Sequence[Problem], history_length: int | None = None
) -> pb.Task:
    """An intake as A2A shows it: `input-required` while open, its status message naming what
    the envelope lacks and how to send it (text, and the same as data), the requester's words
    as history; `canceled` once closed."""
    from taskfs.api.views import intake as views

    state = pb.TASK_STATE_INPUT_REQUIRED if intake.is_open else pb.TASK_STATE_CANCELED
    document = views.document(intake, problems)
    answer = views.text(intake, problems, "a2a")
    status = pb.TaskStatus(
        state=state,
        message=pb.Message(
            message_id=f"{intake.id}/answer/{len(intake.entries)}",
            context_id=intake_context_of(intake),
            task_id=intake.id,
            role=pb.ROLE_AGENT,
            parts=[pb.Part(text=answer), _data_part(document)],
        ),
    )
    latest = _timestamp(intake.entries[-1].record.at)
    if latest is not None:
        status.timestamp.CopyFrom(latest)
    history = intake_history(intake)
    if history_length is not None and history_length >= 0:
        history = history[len(history) - history_length :] if history_length else []
    meta = {"taskfs": {"state": intake.state, "intake": document}}
    return pb.Task(
        id=intake.id,
        context_id=intake_context_of(intake),
        status=status,
        history=history,
        metadata=_struct(meta),
    )


def intake_history(intake: Intake) -> list[pb.Message]:
    """An intake's entries as A2A messages: the requester's words (role user), the answers
    and proposals made to it (role agent)."""
    return [
        pb.Message(
            message_id=f"{intake.id}/{entry.name.removesuffix('.yaml')}",
            context_id=intake_context_of(intake),
            task_id=intake.id,
            role=pb.ROLE_USER if entry.record.by == intake.requester else pb.ROLE_AGENT,
            parts=[pb.Part(text=entry.record.text or entry.record.reason or entry.record.kind)],
        )
        for entry in intake.entries
    ]


def intake_context_of(intake: Intake) -> str:
    """The context an intake is shown in (its draft's contextID, else one made from its id)."""
    return intake_context(intake.draft().get("contextID"), intake.id)


def request_text(message: pb.Message) -> str:
    """A message's words as an intake keeps them: its first data part that is a mapping, as
    YAML, else the text of its text parts."""
    from taskfs.core import yamlio

    for part in message.parts:
        if part.HasField("data"):
            value = json_format.MessageToDict(part.data)
            if isinstance(value, dict):
                return yamlio.dump({k: _whole(v) for k, v in value.items()})
    return message_text(message)
