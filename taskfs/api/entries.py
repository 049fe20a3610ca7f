"""A task's evidence and messages as rows for people to look at (show, log, review, board).

This is the one place where the views read `tasks/<id>/evidence/` and `tasks/<id>/messages/`.
It reads the fields contract section 1 and 6 fix (`command`, `exitCode`, `verdict`, ...;
`from`, `to`, `status`, `text`, ...) from any mapping and ignores the rest, so it shows files
written by any version of the writers. When the evidence and message models land, `evidence_row`
and `message_row` are where they plug in; nothing else in the views needs to change.
A file that cannot be read is shown as such (verdict `invalid`), never skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from taskfs.core import yamlio
from taskfs.core.records import STAMPED_NAME_RE
from taskfs.store.repository import EVIDENCE, MESSAGES, Repository


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

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

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


def task_evidence(repo: Repository, task_id: str) -> list[EvidenceRow]:
    """The task's evidence files, oldest first."""
    rows = []
    for name in repo.list_dir(task_id, EVIDENCE):
        rel = repo.task_rel(task_id, EVIDENCE, name)
        rows.append(evidence_row(task_id, rel, _read(repo, rel)))
    return rows


def task_messages(repo: Repository, task_id: str) -> list[MessageRow]:
    """The task's message files, oldest first."""
    rows = []
    for name in repo.list_dir(task_id, MESSAGES):
        rel = repo.task_rel(task_id, MESSAGES, name)
        rows.append(message_row(task_id, rel, _read(repo, rel)))
    return rows


def _read(repo: Repository, rel: str) -> bytes | None:
    try:
        return (repo.root / rel).read_bytes()
    except OSError:
        return None


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


def evidence_row(task_id: str, rel: str, data: bytes | None) -> EvidenceRow:
    """One evidence file (its bytes, from the tree or from git) as a row."""
    value, reason = parse(data)
    if value is None:
        return EvidenceRow(rel, task_id, "invalid", at=_stamp(rel), problem=reason)
    verdict = value.get("verdict")
    return EvidenceRow(
        path=rel,
        task=task_id,
        verdict=verdict if verdict in ("pass", "fail") else "invalid",
        command=_text(value.get("command")),
        exit_code=value.get("exitCode") if isinstance(value.get("exitCode"), int) else None,
        source=_text(value.get("verdictSource")),
        at=_text(value.get("startedAt")) or _stamp(rel),
        duration_seconds=_number(value.get("durationSeconds")),
        stdout=_text(value.get("stdout")),
        stderr=_text(value.get("stderr")),
        commit=_text(value.get("commit")),
        problem="" if verdict in ("pass", "fail") else "it records no verdict of pass or fail",
    )


def message_row(task_id: str, rel: str, data: bytes | None) -> MessageRow:
    """One message file (its bytes, from the tree or from git) as a row."""
    value, reason = parse(data)
    if value is None:
        return MessageRow(rel, task_id, at=_stamp(rel), problem=reason)
    return MessageRow(
        path=rel,
        task=task_id,
        sender=_text(value.get("from")),
        to=_text(value.get("to")),
        status=_text(value.get("status")),
        text=_text(value.get("text")),
        at=_text(value.get("at") or value.get("sentAt") or value.get("timestamp")) or _stamp(rel),
        in_reply_to=_text(value.get("in_reply_to") or value.get("inReplyTo")),
    )


def _text(value: object) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _stamp(rel: str) -> str:
    """The time a stamped file name records (`20260101T120000.000000Z-xxxxxxxx.yaml`)."""
    match = STAMPED_NAME_RE.fullmatch(rel.rsplit("/", 1)[-1])
    if not match:
        return ""
    s = match.group("stamp")
    return f"{s[0:4]}-{s[4:6]}-{s[6:8]}T{s[9:11]}:{s[11:13]}:{s[13:]}"
