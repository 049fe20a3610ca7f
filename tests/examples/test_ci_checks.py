"""examples/ci: CI runners as the check fleet. The generic script (the GitHub workflow's only
step that runs taskfs) against a bare remote: three tasks' check requests pushed at once,
three CI jobs running at the same time, then a rerun."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from taskfs.core import yamlio
from tests.helpers import IDENTITY, git, taskfs
from tests.remotes import clone, make_remote, new_task

ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "examples" / "ci" / "taskfs-checks.sh"
WORKFLOW = ROOT / "examples" / "ci" / "taskfs-checks.yml"
BIN = Path(sys.executable).parent
# The fleet completes what passes: the policy says so (without it, the holder completes).
POLICY = "allow:\n  commands:\n    - test -f *\ncomplete: true\n"


def test_the_workflow_runs_the_script_with_the_secrets_it_needs() -> None:
    workflow = yamlio.load(WORKFLOW.read_bytes())
    assert "tasks/**" in workflow["on"]["push"]["paths"]
    assert workflow["permissions"]["contents"] == "write"
    step = workflow["jobs"]["checks"]["steps"][-1]
    assert "taskfs-checks.sh" in step["run"]
    assert step["env"]["TASKFS_RUNNER_KEY"] == "${{ secrets.TASKFS_RUNNER_KEY }}"
    assert {"TASKFS_POLICY_TEXT", "TASKFS_RUNNER", "TASKFS_CI_BRANCH"} <= set(step["env"])


def run_script(where: Path, key: str, home: Path) -> subprocess.Popen[str]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("TASKFS_")},
        **IDENTITY,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "TASKFS_RUNNER_KEY": key,
        "TASKFS_RUNNER": "ci",
        "TASKFS_POLICY_TEXT": POLICY,
    }
    return subprocess.Popen(
        ["bash", str(SCRIPT)],
        cwd=where,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out + err


def test_three_ci_jobs_answer_three_requests_once_each_and_a_rerun_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = make_remote(tmp_path)
    seed = tmp_path / "seed"

    # The operator's runner key: the public part committed, the private part a CI secret.
    keys = tmp_path / "operator-keys"
    with monkeypatch.context() as patch:
        patch.setenv("TASKFS_KEY_DIR", str(keys))
        made = taskfs("keys", "new", "--runner", "ci", cwd=seed)
        assert made.code == 0, made.stderr
    secret = (keys / "runner-ci.pem").read_text()
    git(seed, "push", "-q", "origin", "main")

    # A builder finishes three tasks and asks for their checks: one push carries all three.
    worker = clone(str(remote), tmp_path / "worker")
    tasks = []
    for n in range(3):
        task = new_task(
            worker,
            id=f"task-{n}",
            filesAndInterfaces=[f"src/t{n}.py"],
            acceptanceCheck={
                "passFailCommand": f"test -f src/t{n}.py",
                "endToEndVerification": "the file is there",
            },
        )
        assert taskfs("claim", task, "--agent", "builder", cwd=worker).code == 0
        (worker / "src").mkdir(exist_ok=True)
        (worker / "src" / f"t{n}.py").write_text(f"answer = {n}\n")
        git(worker, "add", f"src/t{n}.py")
        git(worker, "commit", "-q", "-m", f"task {n}")
        asked = taskfs("check", task, "--request", "--agent", "builder", cwd=worker)
        assert asked.code == 0, asked.stderr
        tasks.append(task)
    git(worker, "push", "-q", "origin", "main")

    # Three jobs, each in the CI's own clone, at the same time.
    jobs = [clone(str(remote), tmp_path / f"ci-{n}") for n in range(3)]
    homes = [tmp_path / f"home-{n}" for n in range(3)]
    running = [run_script(job, secret, home) for job, home in zip(jobs, homes, strict=True)]
    results = [finish(proc) for proc in running]
    assert all(code == 0 for code, _out in results), results

    check = clone(str(remote), tmp_path / "after")
    for task in tasks:
        shown = taskfs("show", task, "--json", cwd=check).json
        assert shown["state"] == "completed", shown
        evidence = shown["evidence"]
        assert len(evidence) == 1, evidence  # each request answered once, by one job
        assert evidence[0]["verdict"] == "pass"
        assert evidence[0]["signature"] == "valid"
        assert evidence[0]["runner"] == "ci"
        history = taskfs("log", task, "--json", cwd=check).json["history"]
        assert not any(row.get("superseded") for row in history)
    head = git(check, "rev-parse", "HEAD")

    # A rerun (the CI's "re-run job") finds nothing pending: no check, no commit, no push.
    code, out = finish(run_script(jobs[0], secret, homes[0]))
    assert code == 0, out
    assert "nothing to push" in out
    assert git(remote, "rev-parse", "main") == head
