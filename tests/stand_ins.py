"""Stand-ins for commands being built on other branches: `taskfs check` (evidence files),
`taskfs complete` with evidence, and `taskfs send` (message files).

They write the files the contract describes (section 1 and 6) and commit them the way an agent
would, so that review, show, log and board can be driven end to end now. When those commands
merge, the tests and the board script should call them instead of these.
"""

from __future__ import annotations

import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from taskfs.core import yamlio
from taskfs.core.records import format_time, stamped_name, status_name


def _commit(repo: Path, rels: list[str], message: str, agent: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": agent,
        "GIT_AUTHOR_EMAIL": f"{agent}@taskfs",
        "GIT_COMMITTER_NAME": agent,
        "GIT_COMMITTER_EMAIL": f"{agent}@taskfs",
    }
    for args in (["add", "--", *rels], ["commit", "-q", "--no-verify", "-m", message, "--", *rels]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True)
    return out.stdout.decode().strip()


def _write(repo: Path, rel: str, document: dict[str, Any]) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8") as handle:
        handle.write(yamlio.dump(document))


def _envelope(repo: Path, task: str) -> dict[str, Any]:
    value = yamlio.load((repo / "tasks" / task / "envelope.yaml").read_bytes())
    assert isinstance(value, dict)
    return value


def write_evidence(
    repo: Path,
    task: str,
    *,
    passed: bool,
    command: str | None = None,
    exit_code: int | None = None,
    stdout: str = "",
    stderr: str = "",
    source: str = "script",
    agent: str = "runner",
    started: datetime | None = None,
    duration: float = 0.25,
) -> str:
    """Record one acceptance run as an evidence file, committed; returns its path."""
    started = started or datetime.now(timezone.utc)
    rel = f"tasks/{task}/evidence/{stamped_name(started)}"
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, check=True)
    _write(
        repo,
        rel,
        {
            "command": command or _envelope(repo, task)["acceptanceCheck"]["passFailCommand"],
            "exitCode": (0 if passed else 1) if exit_code is None else exit_code,
            "verdict": "pass" if passed else "fail",
            "verdictSource": source,
            "startedAt": format_time(started),
            "durationSeconds": duration,
            "stdout": stdout,
            "stderr": stderr,
            "commit": head.stdout.decode().strip(),
        },
    )
    _commit(repo, [rel], f"taskfs: evidence for {task} ({'pass' if passed else 'fail'})", agent)
    return rel


def run_check(repo: Path, task: str, *, agent: str = "runner") -> str:
    """Run the task's acceptance command with taskfs's runner and record what happened."""
    from taskfs.runner.process import run_command

    command = _envelope(repo, task)["acceptanceCheck"]["passFailCommand"]
    result = run_command(command, cwd=repo, timeout=60)
    return write_evidence(
        repo,
        task,
        passed=result.exit_code == 0,
        command=command,
        exit_code=result.exit_code,
        stdout=result.stdout.text,
        stderr=result.stderr.text,
        agent=agent,
        started=result.started_at,
        duration=round(result.duration_seconds, 3),
    )


def complete(
    repo: Path, task: str, agent: str, evidence: str, artifacts: dict[str, str] | None = None
) -> str:
    """working -> completed resting on `evidence`, as `taskfs complete` will write it."""
    folder = repo / "tasks" / task / "status"
    names = sorted(p.name for p in folder.iterdir())
    rel = f"tasks/{task}/status/{status_name(len(names) + 1, 'completed')}"
    document: dict[str, Any] = {
        "task": task,
        "state": "completed",
        "by": agent,
        "at": format_time(datetime.now(timezone.utc)),
        "prev": names[-1],
        "evidence": evidence,
    }
    if artifacts:
        document["artifacts"] = [{"name": k, "location": v} for k, v in artifacts.items()]
    _write(repo, rel, document)
    _commit(repo, [rel], f"taskfs: {task} working -> completed by {agent}", agent)
    return rel


def send(
    repo: Path, task: str, sender: str, to: str, text: str, *, status: str | None = None
) -> str:
    """A message about a task, as `taskfs send` will write it (unsigned)."""
    now = datetime.now(timezone.utc)
    rel = f"tasks/{task}/messages/{stamped_name(now)}"
    document: dict[str, Any] = {"task_id": task, "from": sender, "to": to, "text": text}
    if status:
        document["status"] = status
    document["at"] = format_time(now)
    _write(repo, rel, document)
    _commit(repo, [rel], f"taskfs: message about {task} from {sender}", sender)
    return rel
