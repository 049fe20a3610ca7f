"""The models of evidence files: one acceptance run, or one judgement recorded from elsewhere.

An evidence file (`tasks/<id>/evidence/<stamp>-<nonce>.yaml`) is named by `stamped_name`: the
UTC time the run started (or the judgement was recorded), then a random nonce. It holds a
`CheckEvidence` (`kind: check`: one run of the envelope's acceptance check by `taskfs check`,
with its captured output, the owned-files fingerprint it ran on, its limits and sandbox, and the
runner's signature) or a `JudgementEvidence` (`kind: judgement`: a verdict from an LLM judge or a
person, which never counts as the passing check). Stream metadata borrows in-toto's names: a
`digest` is a DigestSet (`{sha256: <hex>}`) and the captured streams are the run's byproducts.

`parse_evidence` validates a file's document into one of the two, `evidence_json_schema` is
their JSON Schema (`schemas/`); what completion rests on is decided in `taskfs.core.evidence`.
They share `_Record` and the field types of the other ledger files in `taskfs.core.records`,
and live apart from them so that commands which never read evidence (`new`, `send`) do not pay
for creating their classes.
"""

from __future__ import annotations

import functools
import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, Strict, TypeAdapter

from taskfs.core import layout
from taskfs.core.evidence_order import CHECK_ORDER
from taskfs.core.records import AgentText, TaskIdText, UtcTime, _Record, matching

Verdict = Literal["pass", "fail"]
CHECK_SOURCES = ("script", "llm_judge")
_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_SHA256 = re.compile(r"[0-9a-f]{64}")


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


CommitId = Annotated[
    str, Strict(), matching(_HEX, "not a commit id (40 or 64 lower-case hex digits)")
]
Sha256Hex = Annotated[str, Strict(), matching(_SHA256, "not a SHA-256 (64 lower-case hex digits)")]
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


class GitChange(_Record):
    """A file of git's settings the command changed, which taskfs put back as it was."""

    path: Text = Field(description="Relative to the checkout when inside it (.git/config).")
    change: Literal["added", "changed", "removed"]


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
    git_changes: tuple[GitChange, ...] | None = Field(
        default=None,
        alias="gitChanges",
        description="Files git reads commands to run from (its configuration, hooks, info/) "
        "that the command changed: git would have run them later with the operator's "
        "environment; taskfs put each back as it was before the run.",
    )
    signature: Text | None = Field(
        default=None,
        description="Ed25519 under the domain taskfs-evidence-v1 over the rest of the file.",
    )

    def to_document(self) -> dict[str, Any]:
        # The verdict and what it rests on first, the long captured output last.
        doc = super().to_document()
        return {**{k: doc[k] for k in CHECK_ORDER if k in doc}, **doc}


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
