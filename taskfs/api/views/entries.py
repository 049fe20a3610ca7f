"""A task's evidence and messages as rows for people to look at (show, log, review, board).

This is the one place where the views read `tasks/<id>/evidence/` and `tasks/<id>/messages/`.
Files are read through the same models that write them (`parse_evidence`, `MessageRecord`).
A file that cannot be read is shown as such (verdict `invalid`, with the problem), never
skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from taskfs.core import yamlio
from taskfs.core.evidence import RunnerTrust, signature_state
from taskfs.core.evidence_records import CheckEvidence, parse_evidence
from taskfs.core.layout import EVIDENCE, MESSAGES, STAMPED_NAME_RE
from taskfs.core.records import MessageRecord
from taskfs.store.repository import Repository
from taskfs.store.task_reader import first_error


@dataclass(frozen=True)
class EvidenceRow:
    path: str
    task: str
    verdict: str  # pass, fail, or invalid (the file could not be read)
    command: str = ""
    exit_code: int | None = None
    source: str = ""
    at: str = ""
    duration_seconds: float | None = None
    stdout: str = ""
    stderr: str = ""
    commit: str = ""
    problem: str = ""
    # Owned files not committed when the check ran: such evidence completes nothing.
    uncommitted: tuple[str, ...] = ()
    fresh: bool = False  # run in a fresh checkout of `commit` (`check --fresh`)
    kind: str = "check"  # or judgement: a verdict recorded from elsewhere
    by: str = ""  # the agent that ran the check or recorded the judgement
    # How its signature stands against the runner keys trusted here (`signature_state`):
    # valid, invalid, unsigned or unverified; empty when nobody asked.
    signature: str = ""
    runner: str = ""  # the runner key it names, when signed
    signature_note: str = ""
    # A failing run's last lines, stream by stream (`checks.output`): why it failed.
    output: Mapping[str, str] | None = None

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    @property
    def self_reported(self) -> bool:
        """No runner vouches for it: whoever committed it says it ran so."""
        return self.signature == "unsigned"

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "task": self.task,
            "verdict": self.verdict,
            "command": self.command,
            "exitCode": self.exit_code,
            "verdictSource": self.source,
            "startedAt": self.at,
            "durationSeconds": self.duration_seconds,
            "commit": self.commit,
            **({"problem": self.problem} if self.problem else {}),
            **({"signature": self.signature} if self.signature else {}),
            **({"runner": self.runner} if self.runner else {}),
        }


@dataclass(frozen=True)
class MessageRow:
    path: str
    task: str
    sender: str = ""
    to: str = ""
    status: str = ""
    text: str = ""
    at: str = ""
    in_reply_to: str = ""
    problem: str = ""
    msg_id: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "task": self.task,
            "from": self.sender,
            "to": self.to,
            "status": self.status or None,
            "text": self.text,
            "at": self.at,
            "inReplyTo": self.in_reply_to or None,
            **({"problem": self.problem} if self.problem else {}),
        }


def task_evidence(
    repo: Repository, task_id: str, trust: RunnerTrust | None = None
) -> list[EvidenceRow]:
    """The task's evidence files, oldest first (with how each signature stands against
    `trust`, when given)."""
    return [
        evidence_row(task_id, rel, data, trust) for rel, data in _files(repo, task_id, EVIDENCE)
    ]


def task_messages(repo: Repository, task_id: str) -> list[MessageRow]:
    """The task's message files, oldest first."""
    return [message_row(task_id, rel, data) for rel, data in _files(repo, task_id, MESSAGES)]


def _files(repo: Repository, task_id: str, kind: str) -> list[tuple[str, bytes | None]]:
    """The YAML files of one of a task's folders, oldest first, with their bytes (None when
    a file cannot be read)."""
    out: list[tuple[str, bytes | None]] = []
    for name in repo.list_dir(task_id, kind):
        rel = repo.task_rel(task_id, kind, name)
        try:
            out.append((rel, repo.read_bytes(rel)))
        except OSError:
            out.append((rel, None))
    return out


def parse(data: bytes | None) -> tuple[Mapping[str, Any] | None, str]:
    if data is None:
        return None, "the file cannot be read"
    try:
        value = yamlio.load(data)
    except yamlio.YamlError as exc:
        return None, exc.reason
    if not isinstance(value, Mapping):
        return None, "it is not a mapping"
    return value, ""


def output(document: Mapping[str, Any]) -> Mapping[str, str] | None:
    from taskfs.api.views.checks import output as tail

    return tail(document)


def evidence_row(
    task_id: str, rel: str, data: bytes | None, trust: RunnerTrust | None = None
) -> EvidenceRow:
    """One evidence file (its bytes, from the tree or from git) as a row; with `trust`, how
    its signature stands against those runner keys."""
    value, reason = parse(data)
    if value is None:
        return EvidenceRow(rel, task_id, "invalid", at=_stamp(rel), problem=reason)
    try:
        record = parse_evidence(value)
    except ValidationError as exc:
        return EvidenceRow(rel, task_id, "invalid", at=_stamp(rel), problem=first_error(exc))
    signed = _signature(value, trust)
    if isinstance(record, CheckEvidence):
        return EvidenceRow(
            path=rel,
            task=task_id,
            verdict=record.verdict,
            command=record.command,
            exit_code=record.exit_code,
            source=record.verdict_source,
            at=record.started_at,
            duration_seconds=record.duration_seconds,
            stdout=record.stdout,
            stderr=record.stderr,
            commit=record.commit,
            uncommitted=_uncommitted(record),
            fresh=bool(record.fresh),
            by=record.by or "",
            signature=signed[0],
            runner=signed[1],
            signature_note=signed[2],
            output=output(value),
        )
    return EvidenceRow(
        path=rel,
        task=task_id,
        verdict=record.verdict,
        source=record.verdict_source,
        at=record.started_at,
        stdout=record.note,
        commit=record.commit or "",
        kind="judgement",
        by=record.by or "",
        signature=signed[0],
        runner=signed[1],
        signature_note=signed[2],
    )


def _signature(document: Mapping[str, Any], trust: RunnerTrust | None) -> tuple[str, str, str]:
    """(how the signature stands, the runner it names, why), or empty without `trust`."""
    if trust is None:
        return "", "", ""
    state, why = signature_state(document, trust)
    runner = document.get("runner")
    name = runner.get("name") if isinstance(runner, Mapping) else None
    return state, name if isinstance(name, str) else "", why


def _uncommitted(record: CheckEvidence) -> tuple[str, ...]:
    if record.work_tree != "dirty":
        return ()
    files = record.uncommitted
    return files.paths if files is not None and files.paths else ("(owned files)",)


def message_row(task_id: str, rel: str, data: bytes | None) -> MessageRow:
    """One message file (its bytes, from the tree or from git) as a row."""
    value, reason = parse(data)
    if value is None:
        return MessageRow(rel, task_id, at=_stamp(rel), problem=reason)
    try:
        record = MessageRecord.model_validate(value)
    except ValidationError as exc:
        return MessageRow(rel, task_id, at=_stamp(rel), problem=first_error(exc))
    return MessageRow(
        path=rel,
        task=task_id,
        sender=record.sender,
        to=record.recipient,
        status=record.status or "",
        text=record.text,
        at=record.at,
        in_reply_to=record.in_reply_to or "",
        msg_id=record.msg_id,
    )


def _stamp(rel: str) -> str:
    """The time a stamped file name records (`20260101T120000.000000Z-xxxxxxxx.yaml`)."""
    match = STAMPED_NAME_RE.fullmatch(rel.rsplit("/", 1)[-1])
    if not match:
        return ""
    s = match.group("stamp")
    return f"{s[0:4]}-{s[4:6]}-{s[6:8]}T{s[9:11]}:{s[11:13]}:{s[13:]}"
