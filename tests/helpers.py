"""Driving taskfs the way a user does: its command line, in real git repositories."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskfs.cli import run as cli_run

IDENTITY = {
    "GIT_AUTHOR_NAME": "Test User",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test User",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}

ENVELOPE: dict[str, Any] = {
    "objective": "Fix the login bug where empty passwords are accepted.",
    "outputFormat": "A commit changing src/auth/login.py with a regression test.",
    "toolAndSourceGuidance": "Use pytest; read src/auth for the current flow.",
    "boundaries": "Do not change the database schema or other modules.",
    "filesAndInterfaces": ["src/auth/login.py", "tests/test_login.py"],
    "acceptanceCheck": {
        "passFailCommand": "test -f src/auth/login.py",
        "endToEndVerification": "Log in with an empty password and see it refused.",
    },
    "contextID": "auth-hardening",
    "from": "planner",
    "to": "builder",
}


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)

    @property
    def codes(self) -> list[str]:
        return [e["code"] for e in self.json.get("errors", [])]


def taskfs(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> Result:
    """Run the taskfs command line in this process (fast), as a user would type it: the same
    dispatch as the `taskfs` command, the paths that skip click included."""
    out, err = io.StringIO(), io.StringIO()
    fake_stdin = io.TextIOWrapper(io.BytesIO(stdin or b""), encoding="utf-8")
    old_cwd = Path.cwd()
    old_stdin = sys.stdin
    try:
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin = fake_stdin
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli_run(list(args))
    finally:
        sys.stdin = old_stdin
        os.chdir(old_cwd)
    return Result(code, out.getvalue(), err.getvalue())


def taskfs_process(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 120
) -> Result:
    """Run taskfs as a separate process (for concurrency, signals and start-up)."""
    proc = subprocess.run(
        [sys.executable, "-m", "taskfs", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return proc.stdout.rstrip("\n")


def configure(repo: Path, commit: str | None = None, **settings: object) -> None:
    """Set top-level keys of the repository's `.taskfs/config.yaml`; with `commit`, commit the
    change under that message (the settings a command reads are HEAD's)."""
    from taskfs.core import yamlio

    config = repo / ".taskfs" / "config.yaml"
    data = yamlio.load(config.read_bytes())
    assert isinstance(data, dict)
    config.write_text(yamlio.dump({**data, **settings}))
    if commit is not None:
        git(repo, "commit", "-q", "-am", commit)


def write_envelope(path: Path, **changes: Any) -> Path:
    """Write an envelope file (the valid default, with keys changed or removed by None)."""
    from taskfs.core import yamlio

    data = {**ENVELOPE}
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(yamlio.dump(data))
    return path


def submit(repo: Path, **changes: Any) -> str:
    path = write_envelope(repo / "envelope-input.yaml", **changes)
    result = taskfs("new", str(path), "--json")
    path.unlink()
    assert result.code == 0, result.stdout + result.stderr
    return str(result.json["id"])


def check(task: str, agent: str = "builder", cwd: Path | None = None) -> str:
    """Run the task's acceptance check through the CLI; return the evidence file's path."""
    result = taskfs("check", task, "--agent", agent, "--json", cwd=cwd)
    assert "evidence" in result.json, result.stdout + result.stderr
    return str(result.json["evidence"])


def send(
    task: str,
    sender: str,
    to: str,
    text: str,
    *,
    status: str | None = None,
    cwd: Path | None = None,
) -> str:
    """A message about a task through `taskfs send`; returns its msg_id."""
    args = ["send", task, text, "--agent", sender, "--to", to, "--json"]
    if status:
        args += ["--status", status]
    result = taskfs(*args, cwd=cwd)
    assert result.code == 0, result.stdout + result.stderr
    return str(result.json["msg_id"])


def commit_as(repo: Path, agent: str, message: str, *paths: str, email: str | None = None) -> str:
    """Commit `paths` (everything when none) with plain git, authored as taskfs authors an
    agent's commits (`NAME <NAME@taskfs>`, or `email`): what a forger who knows the convention
    does."""
    email = email or f"{agent}@taskfs"
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": agent,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": agent,
        "GIT_COMMITTER_EMAIL": email,
    }
    add = ["git", "add", "--", *paths] if paths else ["git", "add", "-A"]
    subprocess.run(add, cwd=repo, env=env, check=True, capture_output=True)
    subprocess.run(
        ["git", "commit", "-q", "-m", message], cwd=repo, env=env, check=True, capture_output=True
    )
    return git(repo, "rev-parse", "HEAD")
