"""examples/ci: CI runners as the check fleet. The generic script (the GitHub workflow's step
that runs taskfs) against a bare remote: three tasks' check requests pushed at once, three CI
jobs running at the same time, then a rerun; a pytest check in the documented envelope style
under the documented policy; a refusal by policy, reported as one, that runs once the policy
allows it; and a protected branch, which stops the job with git's reason."""

from __future__ import annotations

import os
import re
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
    steps = {s.get("name", s.get("uses")): s for s in workflow["jobs"]["checks"]["steps"]}
    step = workflow["jobs"]["checks"]["steps"][-1]
    assert "taskfs-checks.sh" in step["run"]
    assert step["env"]["TASKFS_RUNNER_KEY"] == "${{ secrets.TASKFS_RUNNER_KEY }}"
    assert {"TASKFS_POLICY_TEXT", "TASKFS_RUNNER", "TASKFS_CI_BRANCH"} <= set(step["env"])
    # What the checks need on the runner: bubblewrap for the sandbox, the project's own test
    # dependencies for its tests.
    assert (
        "apt-get install -y -q bubblewrap"
        in steps["Install bubblewrap (the checks run in its sandbox)"]["run"]
    )
    assert (
        'pip install -e ".[test]"'
        in steps["Install the project's test dependencies (the checks run its tests)"]["run"]
    )


@pytest.mark.parametrize(
    "workflow", [WORKFLOW, ROOT / "examples" / "github-actions" / "taskfs.yml"]
)
def test_taskfs_is_installed_from_its_repository_pinned_never_by_name(
    workflow: Path, tmp_path: Path
) -> None:
    jobs = yamlio.load(workflow.read_bytes())["jobs"]
    install = next(
        s for job in jobs.values() for s in job["steps"] if s.get("name") == "Install taskfs"
    )
    assert install["env"]["TASKFS_SOURCE"] == "${{ vars.TASKFS_SOURCE }}"
    assert "pip install taskfs" not in workflow.read_text()  # another project may own the name
    # Without a pinned source the step fails, saying what to set, and installs nothing.
    unset = subprocess.run(
        ["bash", "-e", "-c", install["run"]],
        env={**os.environ, "TASKFS_SOURCE": ""},
        capture_output=True,
        text=True,
        check=False,
    )
    assert unset.returncode == 1
    assert "::error::set the repository variable TASKFS_SOURCE" in unset.stdout


def remote_with_runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A bare remote whose ledger trusts runner `ci`, and that runner's private key (what the
    CI's secret holds)."""
    remote = make_remote(tmp_path)
    seed = tmp_path / "seed"
    # The operator's runner key: the public part committed, the private part a CI secret.
    keys = tmp_path / "operator-keys"
    with monkeypatch.context() as patch:
        patch.setenv("TASKFS_KEY_DIR", str(keys))
        made = taskfs("keys", "new", "--runner", "ci", cwd=seed)
        assert made.code == 0, made.stderr
    git(seed, "push", "-q", "origin", "main")
    return remote, (keys / "runner-ci.pem").read_text()


def run_script(where: Path, key: str, home: Path, policy: str = POLICY) -> subprocess.Popen[str]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("TASKFS_")},
        **IDENTITY,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "TASKFS_RUNNER_KEY": key,
        "TASKFS_RUNNER": "ci",
        "TASKFS_POLICY_TEXT": policy,
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
    remote, secret = remote_with_runner(tmp_path, monkeypatch)

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


def documented_policy() -> str:
    """The runner policy docs/ci.md shows for envelopes written as docs/envelope.md shows."""
    page = (ROOT / "docs" / "ci.md").read_text()
    found = re.search(r"^( *)```yaml\n(.*?)^\1```", page, re.M | re.S)
    assert found, "docs/ci.md shows no policy"
    indent = len(found.group(1))
    return "".join(line[indent:] + "\n" for line in found.group(2).splitlines())


def documented_check() -> str:
    envelope = (ROOT / "docs" / "envelope.md").read_text()
    found = re.search(r"passFailCommand: (.+?)\s+#", envelope)
    assert found
    return found.group(1)


def job(where: Path, key: str, home: Path, policy: str) -> tuple[int, str]:
    code, out = finish(run_script(where, key, home, policy))
    return code, out


def test_a_pytest_check_a_refusal_and_a_protected_branch_are_each_reported_truthfully(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote, secret = remote_with_runner(tmp_path, monkeypatch)
    policy = documented_policy()
    command = documented_check()
    assert command == "pytest tests/test_login.py"

    # builder does two tasks: one checked by pytest as the docs write it, one whose command the
    # operator's policy does not allow. It asks for the second's check first.
    worker = clone(str(remote), tmp_path / "worker")
    login = new_task(
        worker,
        id="login",
        filesAndInterfaces=["src/login.py", "tests/test_login.py"],
        acceptanceCheck={"passFailCommand": command, "endToEndVerification": "log in"},
    )
    build = new_task(
        worker,
        id="build",
        filesAndInterfaces=["src/build.txt"],
        acceptanceCheck={"passFailCommand": "test -f src/build.txt", "endToEndVerification": "-"},
    )
    for task in (login, build):
        assert taskfs("claim", task, "--agent", "builder", cwd=worker).code == 0
    (worker / "src").mkdir()
    (worker / "tests").mkdir()
    (worker / "src" / "login.py").write_text("def login(password):\n    return bool(password)\n")
    (worker / "tests" / "test_login.py").write_text(
        "import sys\nsys.path.insert(0, 'src')\nfrom login import login\n\n\n"
        "def test_an_empty_password_is_refused():\n    assert not login('')\n"
    )
    (worker / "src" / "build.txt").write_text("built\n")
    git(worker, "add", "src", "tests")
    git(worker, "commit", "-q", "-m", "the work")
    assert taskfs("check", build, "--request", "--agent", "builder", cwd=worker).code == 0
    git(worker, "push", "-q", "origin", "main")

    ci = clone(str(remote), tmp_path / "ci")
    home = tmp_path / "home"
    # The policy refuses the command: one refusal pushed, and no evidence, said so.
    code, out = job(ci, secret, home, policy)
    assert code == 0, out
    assert "taskfs-checks: pushed 1 commit: 1 refusal, 0 evidence, 0 completions" in out
    # Run again under the same policy: its sender was told once, nothing more to push.
    code, out = job(ci, secret, home, policy)
    assert code == 0, out
    assert "taskfs-checks: nothing to push" in out

    # The pytest check, under the documented policy: evidence and a completion.
    git(worker, "pull", "-q", "--no-rebase", "origin", "main")
    assert taskfs("check", login, "--request", "--agent", "builder", cwd=worker).code == 0
    git(worker, "push", "-q", "origin", "main")
    code, out = job(ci, secret, home, policy)
    assert code == 0, out
    assert "taskfs-checks: pushed 2 commits: 0 refusals, 1 evidence, 1 completion" in out

    # The operator allows the refused command: the request it declined runs now.
    wider = policy.replace("  commands:\n", "  commands:\n    - test -f src/build.txt\n")
    code, out = job(ci, secret, home, wider)
    assert code == 0, out
    assert "taskfs-checks: pushed 2 commits: 0 refusals, 1 evidence, 1 completion" in out

    after = clone(str(remote), tmp_path / "after")
    for task in (login, build):
        shown = taskfs("show", task, "--json", cwd=after).json
        assert shown["state"] == "completed", shown
        assert [(e["verdict"], e["signature"], e["runner"]) for e in shown["evidence"]] == [
            ("pass", "valid", "ci")
        ]
        completion = shown["history"][-1]
        assert completion["by"] == "builder"  # the holder completes, in the ledger
        made = git(
            after,
            "log",
            "-1",
            "--format=%an%n%(trailers:key=Taskfs-On-Behalf-Of)",
            "--",
            f"tasks/{task}/status",
        )
        assert made.splitlines() == ["watcher", "Taskfs-On-Behalf-Of: builder"]
    thread = taskfs("messages", build, "--json", cwd=after).json["messages"]
    assert [m["from"] for m in thread] == ["builder", "watcher"]  # told once
    assert taskfs("audit", "--json", cwd=after).json["ok"] is True

    # A protected branch: the remote refuses every push to main. The job stops at once with
    # git's reason, and does not take it for a race.
    third = new_task(
        worker,
        id="docs",
        filesAndInterfaces=["docs/x.md"],
        acceptanceCheck={"passFailCommand": command, "endToEndVerification": "-"},
    )
    assert taskfs("claim", third, "--agent", "builder", cwd=worker).code == 0
    git(worker, "pull", "-q", "--no-rebase", "origin", "main")
    assert taskfs("check", third, "--request", "--agent", "builder", cwd=worker).code == 0
    git(worker, "push", "-q", "origin", "main")
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'main is protected: open a pull request' >&2\nexit 1\n")
    hook.chmod(0o755)
    before = git(remote, "rev-parse", "main")
    code, out = job(ci, secret, home, policy)
    assert code == 1, out
    refused = "the remote refused the push (0 refusals, 1 evidence, 1 completion not pushed)"
    assert f"taskfs-checks: {refused}; git said:" in out
    assert "main is protected: open a pull request" in out
    assert "pre-receive hook declined" in out
    assert "another job pushed first" not in out
    assert git(remote, "rev-parse", "main") == before
