"""Evidence: running the acceptance check, recording judgements, and what completion rests on.

`check` is the one way an acceptance run becomes evidence; the CLI and the watcher both call
it. Anyone may run a check (it changes no state; the evidence says who ran it and where). The
command runs outside the checkout's lock, since it may take minutes; only writing its evidence
file takes the lock, and one commit holds exactly that file.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from taskfs.api.evidence.acceptance import Acceptance, acceptance
from taskfs.api.evidence.gate import owned_fingerprint_now, trust_root
from taskfs.api.tasks.envelope_rules import ledger_folders
from taskfs.api.tasks.filing import record_bytes
from taskfs.core import layout, signing, yamlio
from taskfs.core.evidence import EVIDENCE_OUTPUT_CAP, EvidenceFile, RunnerTrust, sign_document
from taskfs.core.evidence_order import ordered_check
from taskfs.core.layout import EVIDENCE, format_time, stamped_name
from taskfs.errors import Problem, TaskfsError, fail, problem
from taskfs.runner.process import RunResult, StreamCapture, run_command
from taskfs.runner.sandbox import Sandbox
from taskfs.store import keys
from taskfs.store.git import Git
from taskfs.store.git.planted import Changed, Snapshot
from taskfs.store.owned_fingerprint import owned_now
from taskfs.store.repository import Repository

if TYPE_CHECKING:
    from taskfs.api.evidence.sandboxing import Placement
    from taskfs.core.evidence_records import CheckEvidence, Verdict
    from taskfs.store.task_reader import Task

RUNNER_ENV = "TASKFS_RUNNER"
MAX_TIMEOUT_SECONDS = 24 * 60 * 60
# Evidence files must stay below the 1 MiB limit of a ledger file; past this size the captured
# output is left out (its size and digest stay) before the file is signed and written.
_FIT_BYTES = 768 * 1024
UNCOMMITTED_SHOWN = 20  # owned files named in evidence from a dirty tree
_OMITTED = "[output left out: the evidence file would exceed the 1 MiB limit; see streams]"


# Asked while a check's command runs: why to stop it now, or None to let it go on.
Stop = Callable[[], str | None]


class Progress(Protocol):
    """What a caller sees of a check while it runs (a terminal display, say)."""

    def started(self, what: str, command: str, timeout: float) -> None: ...

    def output(self, stream: str, chunk: bytes) -> None: ...


@dataclass(frozen=True)
class CheckRun:
    id: str
    evidence: str
    document: dict[str, Any]  # the evidence file's content, as written
    commit: str
    # Set when the check ran without the sandbox it would have had (`auto` fell back): why.
    sandbox_fallback: str | None = None
    state: str = ""  # the task's state when the check ran (a closed task cannot complete)
    # What the task's holder must hear beside the verdict (`amendment_pending`).
    notices: tuple[Problem, ...] = ()

    @property
    def verdict(self) -> Verdict:
        return "pass" if self.document["verdict"] == "pass" else "fail"

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    @property
    def warnings(self) -> tuple[Problem, ...]:
        """What the answer says beside the verdict: each file of git's settings the command
        changed, and taskfs put back (`git_settings_changed`); an amendment waiting for the
        holder's answer (`amendment_pending`)."""
        return (
            *(
                problem("git_settings_changed", path=c["path"], change=c["change"])
                for c in self.document.get("gitChanges") or ()
            ),
            *self.notices,
        )

    @property
    def record(self) -> CheckEvidence:
        """The evidence as its model reads it (loads the model: a caller that needs it)."""
        from taskfs.core.evidence_records import CheckEvidence, parse_evidence

        record = parse_evidence(self.document)
        assert isinstance(record, CheckEvidence)
        return record


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
    from taskfs.store.task_reader import load_evidence  # the models: only where shown

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
    stop: Stop | None = None,
    before_write: Callable[[], object] | None = None,
) -> CheckRun:
    """Run the task's acceptance check (in a fresh worktree of HEAD with `fresh`), write its
    evidence and commit it. A failing check is an answer, not an error: the task stays as it
    was either way. `sandbox` (auto, on, off) and `network` say where the command runs
    (`taskfs.api.evidence.sandboxing`; None: the operator's or the repository's default). The
    command is the one HEAD holds: a task folder holding a file no commit holds is refused
    before anything runs (`ledger_file_uncommitted`). `stop()`, asked while the command runs,
    says why to stop it (None: go on): its process group is then killed and nothing is
    written (`check_stopped`). `before_write()` is called once the run is over and its
    evidence is about to be written (committed after what it writes); what it raises is
    raised, and nothing is written then either."""
    from taskfs.api.evidence.sandboxing import place
    from taskfs.store import head_ledger

    if timeout is not None and not (0 < timeout <= MAX_TIMEOUT_SECONDS):  # NaN fails too
        reason = f"{timeout!r} is not more than 0 and at most {MAX_TIMEOUT_SECONDS} seconds"
        raise fail("invalid_value", field="timeout", reason=reason)
    # git's objects read through one process, before the run and after it
    with repo.git.one_reader():
        # Under the writers' lock: a file another taskfs process has written and is committing
        # right now (a `result` message the watcher reacts to) is in flight, not loose.
        with repo.writing():
            head_ledger.refuse_loose(repo, task_id)
        task = acceptance(repo, task_id)
        placement = place(repo, repo.git, mode=sandbox, network=network, environ=dict(os.environ))
        limit = float(timeout or task.timeout_seconds or repo.check_settings()[0])
        trust = trust_root(repo)
        signer = runner_key(repo, trust)
        head = repo.git.head_guess()  # from git's files (git itself when they say nothing clear)
        if head is None:
            raise fail(
                "git_failed", command="rev-parse", reason="there is no commit to check against"
            )
        run = _Run(limit, progress, stop)
        if fresh:
            document = _fresh_run(repo, task, head, run, placement=placement)
        else:
            document = _run(repo, repo.git, task=task, head=head, run=run, where=placement)
        document.update(_who(agent, fresh))
        document["sandbox"] = placement.record()
        # The record's keys in reading order, as its model writes them (no model is loaded: a
        # test holds the two to each other).
        document = ordered_check(_fit(document))
        if signer is not None:
            document = sign_document(document, signer[0], signer[1])
        author = agent or (signer[0] if signer is not None else "taskfs")
        if before_write is not None:
            before_write()
        rel, commit = _write_check(repo, task_id, document, author, trust)
        fallback = placement.reason if placement.fell_back else None
        return CheckRun(task_id, rel, document, commit, fallback, task.state, _notices(repo, task))


def _notices(repo: Repository, task: Acceptance) -> tuple[Problem, ...]:
    """An amendment its holder has not answered, said while the holder can still accept it
    (its row counts them: nothing is read when none waits)."""
    if not task.pending:
        return ()
    from taskfs.api.tasks.amend import waiting
    from taskfs.core.lifecycle import HELD

    return tuple(waiting(repo, task.task_id)) if task.state in HELD else ()


def _fresh_run(
    repo: Repository, task: Acceptance, head: str, run: _Run, *, placement: Placement
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
        return _run(repo, git, task=task, head=head, run=run, where=where)
    finally:
        repo.git.remove_worktree(checkout)
        _remove(base)


def _remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def _run(
    repo: Repository,
    git: Git,
    *,
    task: Acceptance,
    head: str,
    run: _Run,
    where: Placement,
) -> dict[str, Any]:
    from taskfs.api.evidence.sandboxing import with_interpreters

    limit = run.limit
    entries = task.entries
    before, dirty = owned_now(git, entries, ledger_folders(repo.tasks_rel))
    commands = [task.command, task.end_to_end_command or ""]
    box = with_interpreters(where, commands, str(git.root)).sandbox
    changed: list[Changed] = []
    result = _execute("check", task.command, git, run, box=box, changed=changed)
    after = owned_fingerprint_now(repo, git, entries)
    end_to_end: dict[str, Any] = {"description": task.verification}
    passed = result.passed
    if task.end_to_end_command is not None:
        end_to_end["command"] = task.end_to_end_command
        if passed:
            e2e = _execute(
                "end-to-end", task.end_to_end_command, git, run, box=box, changed=changed
            )
            end_to_end["run"] = {"verdict": _verdict(e2e.passed), **_run_fields(e2e, limit)}
            passed = e2e.passed
        else:
            end_to_end["skipped"] = "the acceptance check failed"
    owned: dict[str, Any] = {"digest": {"sha256": before.sha256}, "count": before.count}
    if after != before:
        owned["changedDuringRun"] = True
    return {
        "task": task.task_id,
        "kind": "check",
        "verdict": _verdict(passed),
        "verdictSource": task.verdict_source or "script",
        **_run_fields(result, limit),
        "startedAt": format_time(result.started_at),
        "commit": head,
        "ownedFiles": owned,
        **_work_tree(dirty),
        **_git_changes(changed),
        "endToEnd": end_to_end,
    }


def _git_changes(changed: list[Changed]) -> dict[str, Any]:
    if not changed:
        return {}
    return {"gitChanges": [{"path": c.path, "change": c.change} for c in changed]}


def _work_tree(dirty: list[str]) -> dict[str, Any]:
    """Whether the owned files were committed when the check started: only then can its
    evidence complete the task (`work_uncommitted`)."""
    if not dirty:
        return {"workTree": "clean"}
    shown = dirty[:UNCOMMITTED_SHOWN]
    return {"workTree": "dirty", "uncommitted": {"count": len(dirty), "paths": shown}}


@dataclass(frozen=True)
class _Run:
    """How each command of a check runs: its time limit, who watches, who may stop it."""

    limit: float
    progress: Progress | None = None
    stop: Stop | None = None


def _execute(
    what: str, command: str, git: Git, run: _Run, *, box: Sandbox | None, changed: list[Changed]
) -> RunResult:
    """Run `command` in the worktree of `git`; what it changed of git's own settings (which
    git would run later, outside any sandbox) is put back before taskfs runs git again, and
    added to `changed`. A run stopped by `run.stop` is refused (`check_stopped`): a command
    killed half-way is no evidence either way, so none is written."""
    progress = run.progress
    if progress is not None:
        progress.started(what, command, run.limit)
    on_output = progress.output if progress is not None else None
    snapshot = Snapshot.take(git)
    try:
        result = run_command(
            command,
            cwd=git.root,
            timeout=run.limit,
            output_cap=EVIDENCE_OUTPUT_CAP,
            on_output=on_output,
            sandbox=box,
            stop=run.stop,
        )
    finally:
        changed += [c for c in snapshot.undo() if c not in changed]
    if result.stopped:
        why = (run.stop() if run.stop is not None else None) or "asked to stop"
        raise fail("check_stopped", command=command, reason=why)
    return result


def _verdict(passed: bool) -> Verdict:
    return "pass" if passed else "fail"


def _run_fields(result: RunResult, limit: float) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "command": result.command,
        "exitCode": result.exit_code,
        "durationSeconds": round(result.duration_seconds, 6),
        "stdout": result.stdout.text,
        "stderr": result.stderr.text,
        "streams": {"stdout": stream_fields(result.stdout), "stderr": stream_fields(result.stderr)},
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


def stream_fields(capture: StreamCapture) -> dict[str, Any]:
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
    # The name `socket.gethostname` answers, without importing socket for it.
    host = os.uname().nodename
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


def _check_message(task_id: str, document: dict[str, Any], who: str) -> str:
    verdict = document["verdict"]
    fresh = " (fresh checkout)" if document.get("fresh") else ""
    return (
        f"taskfs: {task_id} check {verdict}ed{fresh} by {who}\n\n"
        f"Taskfs-Task: {task_id}\n"
        f"Taskfs-Evidence: {verdict} ({document['verdictSource']})\n"
        f"Taskfs-Agent: {who}\n"
    )


def _write_check(
    repo: Repository, task_id: str, document: dict[str, Any], author: str, trust: RunnerTrust
) -> tuple[str, str]:
    """Write and commit a check's evidence, and keep what the completion gate reads of it
    (`evidence_gates.remember`), so that `complete` reads no evidence model either."""
    from taskfs.core.evidence import GateFacts, signature_state
    from taskfs.store import evidence_gates

    started = datetime.fromisoformat(document["startedAt"].replace("Z", "+00:00"))
    rel = repo.task_rel(task_id, EVIDENCE, stamped_name(started))
    data = record_bytes(document)
    message = _check_message(task_id, document, author)
    commit = commit_evidence(repo, task_id, rel, data, message=message, author=author)
    with contextlib.suppress(TaskfsError, OSError):  # a speed-up: `complete` reads what is not
        evidence_gates.remember(
            repo,
            task_id,
            rel.rsplit("/", 1)[-1],
            data,
            facts=GateFacts.of_document(document),
            signature=signature_state(document, trust)[0],
            trust=trust,
        )
    return rel, commit


def commit_evidence(
    repo: Repository, task_id: str, rel: str, data: bytes, *, message: str, author: str
) -> str:
    from taskfs.store import head_ledger

    with repo.writing() as writer:
        if not repo.has_task(task_id):
            raise fail("task_not_found", id=task_id)
        head_ledger.refuse_loose(repo, task_id)  # evidence never builds on a loose file either
        writer.add(rel, data)
        return writer.commit(message, author)
