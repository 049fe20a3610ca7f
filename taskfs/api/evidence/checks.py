"""Evidence: running the acceptance check, recording judgements, and what completion rests on.

`check` is the one way an acceptance run becomes evidence; the CLI and the watcher both call
it. Anyone may run a check (it changes no state; the evidence says who ran it and where). The
command runs outside the checkout's lock, since it may take minutes; only writing its evidence
file takes the lock, and one commit holds exactly that file.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import socket
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

from taskfs.api.evidence.gate import owned_fingerprint_now, trust_root
from taskfs.api.tasks.envelope_rules import ledger_folders
from taskfs.api.tasks.filing import record_bytes
from taskfs.core import layout, signing, yamlio
from taskfs.core.evidence import EvidenceFile, RunnerTrust, sign_document
from taskfs.core.evidence_records import (
    EVIDENCE_OUTPUT_CAP,
    CheckEvidence,
    JudgementEvidence,
    Verdict,
    parse_evidence,
)
from taskfs.core.layout import EVIDENCE, format_time, stamped_name
from taskfs.errors import Problem, TaskfsError, fail, problem
from taskfs.runner.process import RunResult, StreamCapture, capture_stream, run_command
from taskfs.runner.sandbox import Sandbox
from taskfs.store import keys
from taskfs.store.evidence_gates import gates
from taskfs.store.git import Git
from taskfs.store.owned_fingerprint import owned_now
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task, load_evidence, load_task

if TYPE_CHECKING:
    from taskfs.api.evidence.sandboxing import Placement

RUNNER_ENV = "TASKFS_RUNNER"
MAX_TIMEOUT_SECONDS = 24 * 60 * 60
# Evidence files must stay below the 1 MiB limit of a ledger file; past this size the captured
# output is left out (its size and digest stay) before the file is signed and written.
_FIT_BYTES = 768 * 1024
UNCOMMITTED_SHOWN = 20  # owned files named in evidence from a dirty tree
_OMITTED = "[output left out: the evidence file would exceed the 1 MiB limit; see streams]"


class Progress(Protocol):
    """What a caller sees of a check while it runs (a terminal display, say)."""

    def started(self, what: str, command: str, timeout: float) -> None: ...

    def output(self, stream: str, chunk: bytes) -> None: ...


@dataclass(frozen=True)
class CheckRun:
    id: str
    evidence: str
    record: CheckEvidence
    commit: str
    # Set when the check ran without the sandbox it would have had (`auto` fell back): why.
    sandbox_fallback: str | None = None

    @property
    def passed(self) -> bool:
        return self.record.verdict == "pass"


@dataclass(frozen=True)
class Recorded:
    id: str
    evidence: str
    record: JudgementEvidence
    commit: str


# -- trust ------------------------------------------------------------------------------------


def runner_key(repo: Repository, trust: RunnerTrust) -> tuple[str, signing.KeyPair] | None:
    """The runner key this machine signs with: $TASKFS_RUNNER, else the first trusted runner
    whose private key is here; None when there is none (the evidence is then unsigned)."""
    named = os.environ.get(RUNNER_ENV)
    if named:
        if not layout.is_agent_name(named):
            raise fail("invalid_agent", value=named)
        pair = keys.load_private("runner", named)
        if pair is None:
            path = str(keys.private_path("runner", named))
            reason = f"{RUNNER_ENV} names runner {named!r}, whose private key is not here"
            raise fail("key_invalid", path=path, reason=reason)
        return named, pair
    for name in sorted(trust.keys):
        pair = keys.load_private("runner", name)
        if pair is not None and pair.public == trust.keys[name]:
            return name, pair
    return None


def task_evidence(repo: Repository, task_id: str) -> tuple[list[EvidenceFile], list[Problem]]:
    return load_evidence(repo, task_id, trust_root(repo))


def with_evidence(repo: Repository, task: Task) -> Task:
    """`task` carrying its readable evidence files (for show and log)."""
    found, problems = task_evidence(repo, task.id)
    return task._replace(evidence=tuple(found), problems=task.problems + tuple(problems))


# -- check ------------------------------------------------------------------------------------


def check(
    repo: Repository,
    task_id: str,
    *,
    timeout: float | None = None,
    fresh: bool = False,
    agent: str | None = None,
    progress: Progress | None = None,
    sandbox: str | None = None,
    network: bool | None = None,
) -> CheckRun:
    """Run the task's acceptance check (in a fresh worktree of HEAD with `fresh`), write its
    evidence and commit it. A failing check is an answer, not an error: the task stays as it
    was either way. `sandbox` (auto, on, off) and `network` say where the command runs
    (`taskfs.api.evidence.sandboxing`; None: the operator's or the repository's default). The
    command is the one HEAD holds: a task folder holding a file no commit holds is refused
    before anything runs (`ledger_file_uncommitted`)."""
    from taskfs.api.evidence.sandboxing import place
    from taskfs.store import head_ledger

    if timeout is not None and not (0 < timeout <= MAX_TIMEOUT_SECONDS):  # NaN fails too
        reason = f"{timeout!r} is not more than 0 and at most {MAX_TIMEOUT_SECONDS} seconds"
        raise fail("invalid_value", field="timeout", reason=reason)
    # Under the writers' lock: a file another taskfs process has written and is committing
    # right now (a `result` message the watcher reacts to) is in flight, not loose.
    with repo.writing():
        head_ledger.refuse_loose(repo, task_id)
    task = load_task(repo, task_id)
    placement = place(repo, repo.git, mode=sandbox, network=network, environ=dict(os.environ))
    acceptance = task.envelope.acceptance_check
    limit = float(timeout or acceptance.timeout_seconds or repo.config.check_timeout_seconds)
    trust = trust_root(repo)
    signer = runner_key(repo, trust)
    head = repo.git.head()
    if head is None:
        raise fail("git_failed", command="rev-parse", reason="there is no commit to check against")
    if fresh:
        document = _fresh_run(repo, task, head, limit, progress, placement=placement)
    else:
        document = _run(
            repo, repo.git, task=task, head=head, limit=limit, progress=progress, where=placement
        )
    document.update(_who(agent, fresh))
    document["sandbox"] = placement.record()
    # Through the model: it checks the record and puts its keys in reading order.
    document = parse_evidence(_fit(document)).to_document()
    if signer is not None:
        document = sign_document(document, signer[0], signer[1])
    record = parse_evidence(document)
    assert isinstance(record, CheckEvidence)
    rel, commit = _write(repo, task_id, document, record, _check_message(task_id, record, agent))
    fallback = placement.reason if placement.fell_back else None
    return CheckRun(task_id, rel, record, commit, fallback)


def _fresh_run(
    repo: Repository,
    task: Task,
    head: str,
    limit: float,
    progress: Progress | None,
    *,
    placement: Placement,
) -> dict[str, Any]:
    from taskfs.api.evidence.sandboxing import place

    base = Path(tempfile.mkdtemp(prefix="taskfs-fresh-"))
    checkout = base / "checkout"
    try:
        git = repo.git.add_worktree(checkout, head)
        where = placement
        if placement.sandbox is not None:
            # The same sandbox, around the temporary checkout instead of the user's.
            where = place(
                repo, git, mode=placement.mode, network=placement.network, environ=dict(os.environ)
            )
        return _run(repo, git, task=task, head=head, limit=limit, progress=progress, where=where)
    finally:
        repo.git.remove_worktree(checkout)
        _remove(base)


def _remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def _run(
    repo: Repository,
    git: Git,
    *,
    task: Task,
    head: str,
    limit: float,
    progress: Progress | None,
    where: Placement,
) -> dict[str, Any]:
    acceptance = task.envelope.acceptance_check
    entries = task.envelope.files_and_interfaces
    before, dirty = owned_now(git, entries, ledger_folders(repo.tasks_rel))
    box = where.sandbox
    result = _execute("check", acceptance.pass_fail_command, git.root, limit, progress, box=box)
    after = owned_fingerprint_now(repo, git, entries)
    end_to_end: dict[str, Any] = {"description": acceptance.end_to_end_verification}
    passed = result.passed
    if acceptance.end_to_end_command is not None:
        end_to_end["command"] = acceptance.end_to_end_command
        if passed:
            e2e = _execute(
                "end-to-end", acceptance.end_to_end_command, git.root, limit, progress, box=box
            )
            end_to_end["run"] = {"verdict": _verdict(e2e.passed), **_run_fields(e2e, limit)}
            passed = e2e.passed
        else:
            end_to_end["skipped"] = "the acceptance check failed"
    owned: dict[str, Any] = {"digest": {"sha256": before.sha256}, "count": before.count}
    if after != before:
        owned["changedDuringRun"] = True
    return {
        "task": task.id,
        "kind": "check",
        "verdict": _verdict(passed),
        "verdictSource": acceptance.verdict_source or "script",
        **_run_fields(result, limit),
        "startedAt": format_time(result.started_at),
        "commit": head,
        "ownedFiles": owned,
        **_work_tree(dirty),
        "endToEnd": end_to_end,
    }


def _work_tree(dirty: list[str]) -> dict[str, Any]:
    """Whether the owned files were committed when the check started: only then can its
    evidence complete the task (`work_uncommitted`)."""
    if not dirty:
        return {"workTree": "clean"}
    shown = dirty[:UNCOMMITTED_SHOWN]
    return {"workTree": "dirty", "uncommitted": {"count": len(dirty), "paths": shown}}


def _execute(
    what: str,
    command: str,
    cwd: Path,
    limit: float,
    progress: Progress | None,
    *,
    box: Sandbox | None,
) -> RunResult:
    if progress is not None:
        progress.started(what, command, limit)
    on_output = progress.output if progress is not None else None
    return run_command(
        command,
        cwd=cwd,
        timeout=limit,
        output_cap=EVIDENCE_OUTPUT_CAP,
        on_output=on_output,
        sandbox=box,
    )


def _verdict(passed: bool) -> Verdict:
    return "pass" if passed else "fail"


def _run_fields(result: RunResult, limit: float) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "command": result.command,
        "exitCode": result.exit_code,
        "durationSeconds": round(result.duration_seconds, 6),
        "stdout": result.stdout.text,
        "stderr": result.stderr.text,
        "streams": {"stdout": _stream(result.stdout), "stderr": _stream(result.stderr)},
        "limits": {
            "timeoutSeconds": limit,
            "outputCapBytes": EVIDENCE_OUTPUT_CAP,
            "timedOut": result.timed_out,
            "leftoverKilled": result.leftover_killed,
            "outputCapped": result.stdout.truncated or result.stderr.truncated,
        },
    }
    if result.signal is not None:
        fields["signal"] = result.signal
    if result.spawn_error is not None:
        fields["spawnError"] = result.spawn_error
    return fields


def _stream(capture: StreamCapture) -> dict[str, Any]:
    return {
        "totalBytes": capture.total_bytes,
        "digest": {"sha256": capture.sha256},
        "truncated": capture.truncated,
    }


def _who(agent: str | None, fresh: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if fresh:
        out["fresh"] = True
    if agent:
        out["by"] = agent
    host = socket.gethostname()
    if host:
        out["host"] = host
    return out


def _fit(document: dict[str, Any]) -> dict[str, Any]:
    """`document`, with its captured output left out if the file would grow too large."""
    if len(yamlio.dump(document).encode()) <= _FIT_BYTES:
        return document
    out = {**document, "stdout": _OMITTED, "stderr": _OMITTED}
    out["limits"] = {**document["limits"], "outputCapped": True}
    run = document["endToEnd"].get("run")
    if run is not None:
        limits = {**run["limits"], "outputCapped": True}
        run = {**run, "stdout": _OMITTED, "stderr": _OMITTED, "limits": limits}
        out["endToEnd"] = {**document["endToEnd"], "run": run}
    return out


def _check_message(task_id: str, record: CheckEvidence, agent: str | None) -> str:
    who = agent or (record.runner.name if record.runner else "taskfs")
    fresh = " (fresh checkout)" if record.fresh else ""
    return (
        f"taskfs: {task_id} check {record.verdict}ed{fresh} by {who}\n\n"
        f"Taskfs-Task: {task_id}\n"
        f"Taskfs-Evidence: {record.verdict} ({record.verdict_source})\n"
        f"Taskfs-Agent: {who}\n"
    )


def _write(
    repo: Repository,
    task_id: str,
    document: dict[str, Any],
    record: CheckEvidence | JudgementEvidence,
    message: str,
) -> tuple[str, str]:
    started = datetime.fromisoformat(record.started_at.replace("Z", "+00:00"))
    rel = repo.task_rel(task_id, EVIDENCE, stamped_name(started))
    author = record.by or (
        record.runner.name if isinstance(record, CheckEvidence) and record.runner else "taskfs"
    )
    from taskfs.store import head_ledger

    with repo.writing() as writer:
        if not repo.has_task(task_id):
            raise fail("task_not_found", id=task_id)
        head_ledger.refuse_loose(repo, task_id)  # evidence never builds on a loose file either
        writer.add(rel, record_bytes(document))
        commit = writer.commit(message, author)
        # What the completion gate reads of the task's evidence, read now (the models are
        # loaded here anyway), so that `complete` need not load them. Only a speed-up: what
        # cannot be read now is read by `complete`.
        with contextlib.suppress(TaskfsError, OSError):
            gates(repo, task_id, trust_root(repo))
    return rel, commit


# -- recorded judgements ----------------------------------------------------------------------


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
        document["noteFile"] = {"path": note_file, **_stream(kept)}
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
    read in chunks under the output cap of a check: never held whole in memory."""
    if stream is not None:
        try:
            fd = stream.fileno()
        except (OSError, ValueError):  # io.UnsupportedOperation: an in-memory stream
            return capture_stream(stream.read, EVIDENCE_OUTPUT_CAP)
        # Raw reads: a terminal gives one empty read at Ctrl-D, which a buffered read passes over.
        return _read_capped(label, fd, lambda size: os.read(fd, size))
    try:
        # Non-blocking, so that opening a FIFO with no writer cannot hang; what was opened is
        # then looked at (fstat), so it cannot be swapped between the look and the read.
        fd = os.open(label, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise fail("file_unreadable", path=label, reason=exc.strerror or str(exc)) from None
    try:
        _refuse_unless_plain(label, fd)
    except TaskfsError:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb", buffering=0) as handle:
        return _read_capped(label, fd, handle.read)


def _read_capped(label: str, fd: int, read: Callable[[int], bytes | None]) -> StreamCapture:
    _refuse_unless_plain(label, fd)
    try:
        return capture_stream(lambda size: read(size) or b"", EVIDENCE_OUTPUT_CAP)
    except OSError as exc:
        raise fail("file_unreadable", path=label, reason=exc.strerror or str(exc)) from None


def _refuse_unless_plain(label: str, fd: int) -> None:
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        raise fail("file_unreadable", path=label, reason=exc.strerror or str(exc)) from None
    # A named file must be a regular one (a FIFO, /dev/zero or a directory would hang, never
    # end, or make no sense); stdin may also be a pipe, or a terminal someone types into.
    piped = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)
    allowed = stat.S_ISREG(mode) or (label == "-" and piped)
    if not allowed:
        reason = f"not a regular file ({_file_kind(mode)}); give a file or pipe the text to -"
        raise fail("file_unreadable", path=label, reason=reason)


def _file_kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a plain file")
