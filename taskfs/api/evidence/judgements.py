"""Recorded judgements (`taskfs evidence add`): a verdict that did not come from running the
check here (an LLM judge, a person), read through the evidence models, which a check itself
does not load (`taskfs.api.evidence.checks`)."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, BinaryIO

from taskfs.api.evidence.checks import commit_evidence, stream_fields
from taskfs.api.evidence.gate import trust_root
from taskfs.api.tasks.filing import record_bytes
from taskfs.core.evidence import EVIDENCE_OUTPUT_CAP
from taskfs.core.evidence_records import JudgementEvidence, Verdict, parse_evidence
from taskfs.core.layout import EVIDENCE, format_time, stamped_name
from taskfs.errors import TaskfsError, fail, problem
from taskfs.runner.process import StreamCapture, capture_stream
from taskfs.store import inputs
from taskfs.store.evidence_gates import gates
from taskfs.store.repository import Repository
from taskfs.store.task_reader import load_task


@dataclass(frozen=True)
class Recorded:
    id: str
    evidence: str
    record: JudgementEvidence
    commit: str


def add_judgement(
    repo: Repository,
    task_id: str,
    *,
    verdict: Verdict,
    source: str,
    note: str | None = None,
    note_file: str | None = None,
    data: bytes | None = None,
    agent: str | None = None,
    stream: BinaryIO | None = None,
) -> Recorded:
    """Record a verdict that did not come from running the check here. It is shown beside the
    runs, and never counts as the passing acceptance check."""
    load_task(repo, task_id)
    now = datetime.now(timezone.utc)
    document: dict[str, Any] = {
        "task": task_id,
        "kind": "judgement",
        "verdict": verdict,
        "verdictSource": source,
        "startedAt": format_time(now),
    }
    head = repo.git.head()
    if head is not None:
        document["commit"] = head
    if agent:
        document["by"] = agent
    if note_file is not None:
        if data is not None:
            kept = capture_stream(io.BytesIO(data).read, EVIDENCE_OUTPUT_CAP)
        else:
            kept = _read_note(note_file, stream)
        document["note"] = kept.text
        document["noteFile"] = {"path": note_file, **stream_fields(kept)}
    else:
        document["note"] = note or ""
    record = _judgement(document)
    message = (
        f"taskfs: {task_id} judgement {verdict} from {source}\n\n"
        f"Taskfs-Task: {task_id}\n"
        f"Taskfs-Evidence: {verdict} ({source}, recorded)\n"
        f"Taskfs-Agent: {agent or source}\n"
    )
    rel, commit = _write(repo, task_id, document, record, message)
    return Recorded(task_id, rel, record, commit)


def _judgement(document: dict[str, Any]) -> JudgementEvidence:
    from pydantic import ValidationError

    try:
        record = parse_evidence(document)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False, include_input=False):
            where = ".".join(str(p) for p in error["loc"][1:]) or "evidence"
            problems.append(problem("invalid_value", field=where, reason=error["msg"]))
        raise TaskfsError(problems) from None
    assert isinstance(record, JudgementEvidence)
    return record


def _read_note(label: str, stream: BinaryIO | None) -> StreamCapture:
    """What is kept of the judgement file `label` (or of `stream`, standing for stdin),
    read in chunks under the output cap of a check: never held whole in memory. What cannot be
    a file (a FIFO, a device) is refused as every input is (`taskfs.store.inputs`)."""
    if stream is not None:
        try:
            fd = stream.fileno()
        except (OSError, ValueError):  # io.UnsupportedOperation: an in-memory stream
            return capture_stream(stream.read, EVIDENCE_OUTPUT_CAP)
        # Raw reads: a terminal gives one empty read at Ctrl-D, which a buffered read passes over.
        inputs.refuse_unless_plain("-", fd)
        return _read_capped(label, lambda size: os.read(fd, size))
    fd = inputs.open_plain(label)
    with os.fdopen(fd, "rb", buffering=0) as handle:
        return _read_capped(label, handle.read)


def _read_capped(label: str, read: Callable[[int], bytes | None]) -> StreamCapture:
    try:
        return capture_stream(lambda size: read(size) or b"", EVIDENCE_OUTPUT_CAP)
    except OSError as exc:
        raise fail("file_unreadable", path=label, reason=exc.strerror or str(exc)) from None


def _write(
    repo: Repository,
    task_id: str,
    document: dict[str, Any],
    record: JudgementEvidence,
    message: str,
) -> tuple[str, str]:
    started = datetime.fromisoformat(record.started_at.replace("Z", "+00:00"))
    rel = repo.task_rel(task_id, EVIDENCE, stamped_name(started))
    author = record.by or "taskfs"
    data = record_bytes(document)
    commit = commit_evidence(repo, task_id, rel, data, message=message, author=author)
    # What the completion gate reads of the task's evidence, read now (the models are loaded
    # here anyway), so that `complete` need not load them. Only a speed-up: what cannot be
    # read now is read by `complete`.
    with contextlib.suppress(TaskfsError, OSError):
        gates(repo, task_id, trust_root(repo))
    return rel, commit
