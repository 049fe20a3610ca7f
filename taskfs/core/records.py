"""The append-only ledger files beside an envelope: their models and their names.

An evidence file records one acceptance run or one recorded judgement; its name is
`stamped_name` (the time it started, then a random nonce). A status file records one lifecycle
transition. Its name is `<seq>-<state>-<nonce>.yaml`:
`seq` is its position in the task's chain (so names sort in the order entries were made),
the state makes a listing readable, and the random nonce keeps two clones that append to
the same task offline from ever writing the same name (so git merges them without conflict).

A message file (`messages/`) and a read mark (`reads/`) are named `stamped_name(at)`: the UTC
time it was made, then a nonce. A message's id is `<task>/<file stem>`, so it is unique across
clones, never changes, and names the one file that holds it.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    TypeAdapter,
    model_validator,
)

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


def _wire_sig(value: str) -> str:
    if not WIRE_SIG_RE.fullmatch(value):
        raise ValueError("not an interlink signature (86 characters of URL-safe base64)")
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
InterlinkIdText = Annotated[str, Strict(), AfterValidator(_interlink_id)]
WireSigText = Annotated[str, Strict(), AfterValidator(_wire_sig)]
OPAQUE_MSG_ID_RE = re.compile(r"[\x21-\x7e]{1,128}")
WIRE_SIG_RE = re.compile(r"[A-Za-z0-9_-]{86}")


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

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
        default=None,
        description="The evidence file (in the task's evidence folder) a completion rests on.",
    )
    artifacts: tuple[Artifact, ...] | None = None
    message: MsgIdText | None = Field(
        default=None, description="The message that made this transition (contract section 6)."
    )
    sig: Annotated[str, Strict()] | None = Field(
        default=None,
        description="The Ed25519 signature of `by` over the other fields "
        "(taskfs.core.transition_signing), where `by` has a key.",
    )


# -- evidence ---------------------------------------------------------------------------------
#
# An evidence file (`tasks/<id>/evidence/<stamp>-<nonce>.yaml`, named by `stamped_name`) records
# one acceptance run (`kind: check`) or one judgement recorded from elsewhere (`kind:
# judgement`). Stream metadata borrows in-toto's names: a `digest` is a DigestSet
# (`{sha256: <hex>}`) and the captured streams are the run's byproducts.

EVIDENCE_OUTPUT_CAP = 32 * 1024
"""Bytes kept of each captured stream (first and last half); evidence files stay far below the
1 MiB limit of a ledger file even when every kept byte has to be escaped in YAML."""

Verdict = Literal["pass", "fail"]
CHECK_SOURCES = ("script", "llm_judge")
_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _commit_id(value: str) -> str:
    if not _HEX.fullmatch(value):
        raise ValueError("not a commit id (40 or 64 lower-case hex digits)")
    return value


def _sha256_hex(value: str) -> str:
    if not _SHA256.fullmatch(value):
        raise ValueError("not a SHA-256 (64 lower-case hex digits)")
    return value


def _seconds(value: Any) -> Any:
    # YAML may hold 3 or 3.0; anything else (text, booleans) is not a duration.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("expected a number of seconds")
    return float(value)


def _judgement_source(value: str) -> str:
    if not layout.is_agent_name(value):
        raise ValueError("a source is a name: 1-64 characters of letters, digits, . _ @ -")
    if value == "script":
        raise ValueError("'script' is the source of a check run by taskfs, not of a judgement")
    return value


CommitId = Annotated[str, Strict(), AfterValidator(_commit_id)]
Sha256Hex = Annotated[str, Strict(), AfterValidator(_sha256_hex)]
Seconds = Annotated[float, BeforeValidator(_seconds), Field(ge=0)]
Count = Annotated[int, Strict(), Field(ge=0)]
Flag = Annotated[bool, Strict()]
Text = Annotated[str, Strict()]


class Digest(_Record):
    """An in-toto DigestSet, restricted to the one algorithm taskfs writes."""

    sha256: Sha256Hex


class StreamInfo(_Record):
    """What a captured stream was in full, when only its head and tail are kept."""

    total_bytes: Count = Field(alias="totalBytes", description="Bytes the stream held in all.")
    digest: Digest = Field(description="The digest of the whole stream, not of the kept text.")
    truncated: Flag = Field(description="True when the middle of the stream was left out.")


class Streams(_Record):
    stdout: StreamInfo
    stderr: StreamInfo


class Limits(_Record):
    """The bounds the run had, and which of them cut it short."""

    timeout_seconds: Seconds = Field(alias="timeoutSeconds")
    output_cap_bytes: Count = Field(alias="outputCapBytes")
    timed_out: Flag = Field(alias="timedOut", description="Killed (with its group) at the limit.")
    leftover_killed: Flag = Field(
        alias="leftoverKilled",
        description="Processes it left running after it exited were killed.",
    )
    output_capped: Flag = Field(alias="outputCapped", description="Some output was left out.")


class _RunFields(_Record):
    command: Text = Field(description="The shell command, exactly as the envelope gives it.")
    exit_code: Annotated[int, Strict()] = Field(
        alias="exitCode", description="128 + N when signal N ended it; 127 when it never started."
    )
    signal: Annotated[int, Strict()] | None = Field(
        default=None, description="The signal that ended the shell, if one did."
    )
    duration_seconds: Seconds = Field(alias="durationSeconds")
    stdout: Text = Field(description="The output, capped: head and tail when it was longer.")
    stderr: Text
    streams: Streams
    limits: Limits
    spawn_error: Text | None = Field(
        default=None, alias="spawnError", description="Why the shell could not be started."
    )


class EndToEndRun(_RunFields):
    """The end-to-end verification, run because the envelope gives it as a command."""

    verdict: Verdict


class EndToEnd(_Record):
    description: Text = Field(
        description="acceptanceCheck.endToEndVerification: the step the recipient attests to."
    )
    command: Text | None = Field(
        default=None, description="acceptanceCheck.endToEndCommand, when the envelope gives one."
    )
    run: EndToEndRun | None = Field(
        default=None, description="The command's run; absent when it was not run."
    )
    skipped: Text | None = Field(default=None, description="Why the command was not run.")


class SandboxRecord(_Record):
    """Where the command ran: in a bubblewrap sandbox, or unconfined (and why)."""

    kind: Literal["bubblewrap", "none"]
    mode: Literal["auto", "on", "off"]
    network: Flag = Field(description="Whether the command could reach the network.")
    reason: Text | None = Field(default=None, description="Why it ran without the sandbox.")


class OwnedFiles(_Record):
    """The fingerprint of the files the task owns, as they were when the check started."""

    digest: Digest
    count: Count = Field(description="How many files the fingerprint covers.")
    changed_during_run: Flag | None = Field(
        default=None,
        alias="changedDuringRun",
        description="True when the owned files differed after the run (the check changed them).",
    )


class UncommittedFiles(_Record):
    """Owned files whose working-tree content HEAD did not hold when the check started."""

    count: Count = Field(description="How many owned files were not committed.")
    paths: tuple[Text, ...] = Field(description="The first of them (at most 20), sorted.")


class RunnerId(_Record):
    name: AgentText = Field(description="The runner key's name (.taskfs/keys/runner/<name>.pub).")
    key_id: Annotated[str, Strict(), Field(pattern=r"^[0-9a-f]{16}$")] = Field(alias="keyId")


_CHECK_ORDER = (
    "task",
    "kind",
    "verdict",
    "verdictSource",
    "command",
    "exitCode",
    "signal",
    "spawnError",
    "startedAt",
    "durationSeconds",
    "commit",
    "fresh",
    "by",
    "host",
    "ownedFiles",
    "workTree",
    "uncommitted",
    "limits",
    "endToEnd",
    "streams",
    "stdout",
    "stderr",
)


class CheckEvidence(_RunFields):
    """One run of the acceptance check by `taskfs check`."""

    task: TaskIdText
    kind: Literal["check"]
    verdict: Verdict = Field(description="pass: the command and any endToEndCommand passed.")
    verdict_source: Literal["script", "llm_judge"] = Field(alias="verdictSource")
    started_at: UtcTime = Field(alias="startedAt")
    commit: CommitId = Field(description="HEAD when the check started.")
    owned_files: OwnedFiles = Field(alias="ownedFiles")
    work_tree: Literal["clean", "dirty"] | None = Field(
        default=None,
        alias="workTree",
        description="Whether the owned files were all committed (HEAD held them as they were) "
        "when the check started; evidence from a dirty tree never completes a task. Absent "
        "from evidence recorded before taskfs recorded it.",
    )
    uncommitted: UncommittedFiles | None = Field(
        default=None, description="With workTree dirty: the owned files HEAD did not hold."
    )
    end_to_end: EndToEnd = Field(alias="endToEnd")
    fresh: Literal[True] | None = Field(
        default=None, description="Run in a fresh checkout of `commit` (a temporary worktree)."
    )
    by: AgentText | None = Field(default=None, description="The agent that ran the check.")
    host: Text | None = Field(default=None, description="The machine it ran on.")
    runner: RunnerId | None = None
    sandbox: SandboxRecord | None = Field(
        default=None,
        description="Where the command ran (absent in evidence made before sandboxing).",
    )
    signature: Text | None = Field(
        default=None,
        description="Ed25519 under the domain taskfs-evidence-v1 over the rest of the file.",
    )

    def to_document(self) -> dict[str, Any]:
        # The verdict and what it rests on first, the long captured output last.
        doc = super().to_document()
        return {**{k: doc[k] for k in _CHECK_ORDER if k in doc}, **doc}


class NoteFile(_Record):
    path: Text
    total_bytes: Count = Field(alias="totalBytes")
    digest: Digest
    truncated: Flag


class JudgementEvidence(_Record):
    """A verdict that did not come from running the check here: an LLM judge, a person.

    It never counts as the passing acceptance check."""

    task: TaskIdText
    kind: Literal["judgement"]
    verdict: Verdict
    verdict_source: Annotated[str, Strict(), AfterValidator(_judgement_source)] = Field(
        alias="verdictSource", description="Who or what judged (not `script`)."
    )
    started_at: UtcTime = Field(alias="startedAt", description="When it was recorded.")
    commit: CommitId | None = Field(default=None, description="HEAD when it was recorded.")
    by: AgentText | None = None
    note: Text = Field(description="The judgement's text (capped like check output).")
    note_file: NoteFile | None = Field(default=None, alias="noteFile")


EvidenceRecord = Annotated[CheckEvidence | JudgementEvidence, Field(discriminator="kind")]


@functools.cache
def _evidence_adapter() -> TypeAdapter[CheckEvidence | JudgementEvidence]:
    # Built on first use, not at import: building its validator costs tens of milliseconds,
    # which every command importing the records (`new`, `send`) paid without reading evidence.
    return TypeAdapter(EvidenceRecord)


def parse_evidence(data: Any) -> CheckEvidence | JudgementEvidence:
    """The evidence record `data` holds; raises pydantic's ValidationError when it is none."""
    return _evidence_adapter().validate_python(data)


def evidence_json_schema() -> dict[str, Any]:
    schema: dict[str, Any] = _evidence_adapter().json_schema(by_alias=True, mode="validation")
    return schema


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
