"""Evidence through the command line, in real repositories: `check`, `evidence add`,
`keys new`, and completion resting on a passing check."""

from __future__ import annotations

import hashlib
import os
import pty
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from taskfs.core import yamlio
from taskfs.core.layout import stamped_name
from tests.helpers import Result, commit_as, git, submit, taskfs

VERIFY = "Open the app and see it work."


# Long enough to be killed, never to end: its length names this test process alone.
LONG_SLEEP = f"sleep {100_000 + os.getpid()}"


def make_task(repo: Path, command: str, *, claim: bool = True, **changes: Any) -> str:
    acceptance = {"passFailCommand": command, "endToEndVerification": VERIFY}
    acceptance.update(changes.pop("acceptance", {}))
    changes.setdefault("filesAndInterfaces", ["src/**"])
    task = submit(repo, acceptanceCheck=acceptance, **changes)
    if claim:
        assert taskfs("claim", task, "--agent", "builder").code == 0
    return task


def check(task: str, *args: str) -> Result:
    return taskfs("check", task, "--json", *args)


def evidence_of(repo: Path, result: Result) -> dict[str, Any]:
    value = yamlio.load((repo / result.json["evidence"]).read_bytes())
    assert isinstance(value, dict)
    return value


def state(task: str) -> str:
    return str(taskfs("show", task, "--json").json["state"])


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def running(pid: int) -> bool:
    out = subprocess.run(
        ["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True, check=False
    ).stdout.strip()
    return bool(out) and not out.startswith("Z")


def forge(repo: Path, task: str, **changes: Any) -> Path:
    """A hand-written evidence file claiming a pass, plausible in every field (its fingerprint
    is the owned files' real one), committed by hand."""
    from taskfs.api.evidence.gate import owned_fingerprint_now
    from taskfs.store.repository import Repository
    from taskfs.store.task_reader import load_task

    opened = Repository.open(repo)
    loaded = load_task(opened, task)
    now = datetime.now(timezone.utc)
    empty = {"totalBytes": 0, "digest": {"sha256": hashlib.sha256().hexdigest()}}
    doc: dict[str, Any] = {
        "task": task,
        "kind": "check",
        "verdict": "pass",
        "verdictSource": "script",
        "command": loaded.envelope.acceptance_check.pass_fail_command,
        "exitCode": 0,
        "startedAt": now.isoformat().replace("+00:00", "Z"),
        "durationSeconds": 0.1,
        "commit": git(repo, "rev-parse", "HEAD"),
        "ownedFiles": {
            "digest": {
                "sha256": owned_fingerprint_now(
                    opened, opened.git, loaded.envelope.files_and_interfaces
                ).sha256
            },
            "count": 1,
        },
        "limits": {
            "timeoutSeconds": 600.0,
            "outputCapBytes": 32768,
            "timedOut": False,
            "leftoverKilled": False,
            "outputCapped": False,
        },
        "endToEnd": {"description": VERIFY},
        "streams": {
            "stdout": {**empty, "truncated": False},
            "stderr": {**empty, "truncated": False},
        },
        "stdout": "",
        "stderr": "",
    }
    doc.update(changes)
    path = repo / "tasks" / task / "evidence" / stamped_name(now)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yamlio.dump(doc))
    git(repo, "add", str(path))
    git(repo, "commit", "-q", "-m", "add evidence")
    return path


# -- the "done when" ------------------------------------------------------------------


def test_complete_needs_a_fresh_passing_check(repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("broken\n")
    commit_all(repo, "app")
    task = make_task(repo, "grep -q fixed src/app.py")

    refused = taskfs("complete", task, "--agent", "builder", "--json")
    assert refused.code == 1
    assert refused.codes == ["completion_requires_evidence"]

    failed = check(task)
    assert failed.code == 1
    assert failed.json["ok"] is False
    assert failed.json["verdict"] == "fail"
    assert state(task) == "working"
    # One commit holds exactly the evidence file, and nothing is left uncommitted.
    assert git(repo, "show", "--name-only", "--format=", "HEAD") == failed.json["evidence"]
    assert git(repo, "status", "--porcelain") == ""
    doc = evidence_of(repo, failed)
    assert doc["verdict"] == "fail"
    assert doc["exitCode"] == 1
    assert doc["command"] == "grep -q fixed src/app.py"
    assert taskfs("complete", task, "--agent", "builder", "--json").codes == [
        "completion_requires_evidence"
    ]

    (repo / "src" / "app.py").write_text("fixed\n")
    commit_all(repo, "the fix")  # only committed work completes (issue 16)
    passed = check(task)
    assert passed.code == 0
    assert passed.json == {**passed.json, "ok": True, "verdict": "pass", "id": task}
    doc = evidence_of(repo, passed)
    assert doc["ownedFiles"]["count"] == 1
    assert doc["commit"] == git(repo, "rev-parse", "HEAD~1")
    assert doc["workTree"] == "clean"

    (repo / "src" / "app.py").write_text("fixed, then changed again\n")
    assert taskfs("complete", task, "--agent", "builder", "--json").codes == ["evidence_stale"]
    # A new owned file changes the fingerprint too.
    (repo / "src" / "app.py").write_text("fixed\n")
    (repo / "src" / "new.py").write_text("new\n")
    assert taskfs("complete", task, "--agent", "builder", "--json").codes == ["evidence_stale"]
    (repo / "src" / "new.py").unlink()

    done = taskfs(
        "complete",
        task,
        "--agent",
        "builder",
        "--artifact",
        "fix=src/app.py",
        "--artifact",
        "review=https://example.invalid/r/1",
        "--json",
    )
    assert done.code == 0, done.stdout
    assert done.json["state"] == "completed"
    status = sorted((repo / "tasks" / task / "status").iterdir())[-1]
    record = yamlio.load(status.read_bytes())
    assert record["evidence"] == Path(passed.json["evidence"]).name
    assert record["artifacts"] == [
        {"name": "fix", "location": "src/app.py"},
        {"name": "review", "location": "https://example.invalid/r/1"},
    ]
    assert taskfs("audit", "--json").json["ok"] is True


def test_fresh_catches_an_uncommitted_file_the_check_needs(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    task = make_task(repo, "test -f fixtures/data.txt")
    (repo / "fixtures").mkdir()
    (repo / "fixtures" / "data.txt").write_text("only here\n")

    assert check(task).code == 0
    fresh = check(task, "--fresh")
    assert fresh.code == 1
    assert fresh.json["fresh"] is True
    doc = evidence_of(repo, fresh)
    assert doc["fresh"] is True
    assert doc["verdict"] == "fail"
    # The temporary worktree is gone, from git's list and from the disk.
    assert len(git(repo, "worktree", "list", "--porcelain").split("\n\n")) == 1
    assert list(scratch.iterdir()) == []
    # The fresh failure ran on the same owned files as the earlier pass: it vetoes it.
    refused = taskfs("complete", task, "--agent", "builder", "--json")
    assert refused.codes == ["completion_requires_evidence"]

    commit_all(repo, "commit the fixture")
    assert check(task, "--fresh").code == 0
    assert list(scratch.iterdir()) == []
    assert taskfs("complete", task, "--agent", "builder", "--json").code == 0


def test_a_check_past_its_limit_is_killed_with_its_children(repo: Path, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    task = make_task(repo, f"{LONG_SLEEP} & echo $! > {pids}; {LONG_SLEEP}")
    result = check(task, "--timeout", "0.5")
    assert result.code == 1
    doc = evidence_of(repo, result)
    assert doc["limits"]["timedOut"] is True
    assert doc["limits"]["timeoutSeconds"] == 0.5
    assert doc["durationSeconds"] < 0.5 + 1.0
    assert doc["exitCode"] == 128 + signal.SIGTERM
    assert not running(int(pids.read_text()))
    assert state(task) == "working"


# -- bad input and faults -----------------------------------------------------------------------


def test_a_command_that_does_not_exist(repo: Path) -> None:
    task = make_task(repo, "no-such-command-anywhere --flag")
    result = check(task)
    assert result.code == 1
    doc = evidence_of(repo, result)
    assert doc["exitCode"] == 127
    assert "not found" in doc["stderr"]
    assert taskfs("validate", "--json").json["ok"] is True


def test_a_hundred_megabytes_of_output_is_capped_counted_and_hashed(repo: Path) -> None:
    size = 100_000_000
    task = make_task(repo, f"head -c {size} /dev/zero | tr '\\0' a")
    result = check(task)
    assert result.code == 0
    path = repo / result.json["evidence"]
    assert path.stat().st_size < 256 * 1024
    doc = evidence_of(repo, result)
    digest = hashlib.sha256()
    block = b"a" * 1_000_000
    for _ in range(size // len(block)):
        digest.update(block)
    assert doc["streams"]["stdout"] == {
        "totalBytes": size,
        "digest": {"sha256": digest.hexdigest()},
        "truncated": True,
    }
    assert doc["limits"]["outputCapped"] is True
    assert doc["stdout"].startswith("aaaa")
    assert doc["stdout"].endswith("aaaa")
    assert "bytes omitted" in doc["stdout"]


def test_a_huge_command_is_recorded_whole_under_the_file_limit(repo: Path) -> None:
    # Longer than one exec argument may be (128 KiB on Linux): it cannot start, and says so.
    command = "true # " + "x" * 800_000
    task = make_task(repo, command)
    result = check(task)
    assert result.code == 1
    assert (repo / result.json["evidence"]).stat().st_size < 1024 * 1024
    doc = evidence_of(repo, result)
    assert doc["command"] == command
    assert doc["exitCode"] == 127
    assert doc["spawnError"]
    assert doc["stdout"].startswith("[output left out")
    assert doc["limits"]["outputCapped"] is True


def test_a_child_that_outlives_the_command_is_killed(repo: Path, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    task = make_task(repo, f"{LONG_SLEEP} & echo $! > {pids}; exit 0")
    result = check(task)
    assert result.code == 0
    doc = evidence_of(repo, result)
    assert doc["limits"]["leftoverKilled"] is True
    assert doc["limits"]["timedOut"] is False
    assert not running(int(pids.read_text()))


def test_a_command_reading_stdin_gets_nothing(repo: Path) -> None:
    task = make_task(repo, "cat; echo done")
    # A real process whose own stdin stays open: the check must neither read nor wait on it.
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskfs", "check", task, "--json", "--timeout", "20"],
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write(b"caller input\n")
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    [path] = (repo / "tasks" / task / "evidence").iterdir()
    doc = yamlio.load(path.read_bytes())
    assert doc["stdout"] == "done\n"
    assert doc["limits"]["timedOut"] is False


def test_a_command_that_kills_its_own_process_group(repo: Path) -> None:
    task = make_task(repo, f"{LONG_SLEEP} & kill -9 0")
    result = check(task)
    assert result.code == 1
    doc = evidence_of(repo, result)
    assert doc["exitCode"] == 128 + 9
    assert doc["signal"] == 9
    assert state(task) == "working"


def test_quotes_pipes_and_variables_reach_the_shell_intact(repo: Path) -> None:
    command = "X='a b'; printf '%s|%s\\n' \"$X\" 'c$d' | tr a-z A-Z; echo \"$((2 + 3))\" >&2"
    task = make_task(repo, command)
    result = check(task)
    assert result.code == 0
    doc = evidence_of(repo, result)
    assert doc["command"] == command
    assert doc["stdout"] == "A B|C$D\n"
    assert doc["stderr"] == "5\n"


def test_output_that_is_not_utf8(repo: Path) -> None:
    task = make_task(repo, "printf '\\377\\376ok\\n'; printf '\\000nul\\n'")
    result = check(task)
    assert result.code == 0
    doc = evidence_of(repo, result)
    assert doc["stdout"] == "\ufffd\ufffdok\n\x00nul\n"
    assert doc["streams"]["stdout"]["totalBytes"] == 10
    expected = hashlib.sha256(b"\xff\xfeok\n\x00nul\n").hexdigest()
    assert doc["streams"]["stdout"]["digest"]["sha256"] == expected
    assert taskfs("validate", "--json").json["ok"] is True


def test_a_secret_in_the_callers_environment_does_not_reach_the_command(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t-value-1")
    monkeypatch.setenv("GITHUB_TOKEN", "s3cr3t-value-2")
    task = make_task(repo, 'env; echo "[$AWS_SECRET_ACCESS_KEY]"; echo "home=$HOME"')
    result = check(task)
    doc = evidence_of(repo, result)
    assert "s3cr3t-value" not in doc["stdout"]
    assert "[]" in doc["stdout"]
    assert f"home={os.environ['HOME']}\n" not in doc["stdout"]


def test_evidence_for_a_different_command_does_not_count(repo: Path) -> None:
    task = make_task(repo, "false")
    forge(repo, task, command="true")
    refused = taskfs("complete", task, "--agent", "builder", "--json")
    assert refused.codes == ["completion_requires_evidence"]
    # A real run of the envelope's command fails, of course: and it is the one that speaks.
    assert check(task).code == 1
    assert taskfs("complete", task, "--agent", "builder", "--json").codes == [
        "completion_requires_evidence"
    ]


def test_without_runner_keys_evidence_is_unsigned_and_said_to_be(repo: Path) -> None:
    task = make_task(repo, "true")
    assert check(task).code == 0
    shown = taskfs("show", task, "--json").json
    assert [row["signature"] for row in shown["evidence"]] == ["unsigned"]
    assert "[unsigned]" in taskfs("show", task).stdout
    audit = taskfs("audit", "--json").json
    assert audit["ok"] is True
    assert [note["code"] for note in audit["notes"]] == ["evidence_unsigned"]
    # As before runner keys existed: a hand-written file is taken as written (say so: audit).
    other = make_task(repo, "false", filesAndInterfaces=["lib/**"])
    forge(repo, other)
    assert taskfs("complete", other, "--agent", "builder", "--json").code == 0


# -- runner keys --------------------------------------------------------------------------------


def new_runner(name: str) -> Result:
    result = taskfs("keys", "new", "--runner", name, "--json")
    assert result.code == 0, result.stdout
    return result


def test_keys_new_keeps_the_private_key_outside_and_commits_the_public_one(repo: Path) -> None:
    result = new_runner("ci")
    doc = result.json
    assert doc["path"] == ".taskfs/keys/runner/ci.pub"
    private = Path(doc["privateKey"])
    assert private.is_file()
    assert repo not in private.parents
    assert private.stat().st_mode & 0o077 == 0
    assert git(repo, "show", "--name-only", "--format=", "HEAD") == ".taskfs/keys/runner/ci.pub"
    assert (repo / doc["path"]).read_text().strip() == doc["publicKey"]
    assert taskfs("keys", "new", "--runner", "ci", "--json").codes == ["key_exists"]
    assert taskfs("keys", "new", "--json").codes == ["agent_required"]
    assert taskfs("keys", "new", "--runner", "a", "--agent", "b", "--json").code == 2
    assert taskfs("keys", "new", "--runner", "bad name", "--json").codes == ["invalid_agent"]


def test_signed_evidence_counts_and_a_hand_edit_does_not(repo: Path) -> None:
    new_runner("ci")
    task = make_task(repo, "false")
    failed = check(task)
    assert failed.json["signed"] is True
    path = repo / failed.json["evidence"]
    doc = yamlio.load(path.read_bytes())
    assert doc["runner"]["name"] == "ci"
    # The recipient turns its failure into a pass by hand.
    doc.update(verdict="pass", exitCode=0)
    path.write_text(yamlio.dump(doc))
    commit_all(repo, "tidy up")
    refused = taskfs("complete", task, "--agent", "builder", "--json")
    assert refused.codes == ["completion_requires_evidence"]
    rows = taskfs("show", task, "--json").json["evidence"]
    assert [row["signature"] for row in rows] == ["invalid"]
    findings = {(f["code"], f["path"]) for f in taskfs("audit", "--json").json["findings"]}
    rel = failed.json["evidence"]
    assert ("ledger_file_edited", rel) in findings
    assert ("evidence_signature_invalid", rel) in findings


def test_hand_written_evidence_does_not_count_where_runner_keys_are_trusted(repo: Path) -> None:
    new_runner("ci")
    task = make_task(repo, "true")
    forged = forge(repo, task)
    refused = taskfs("complete", task, "--agent", "builder", "--json")
    assert refused.codes == ["completion_requires_evidence"]
    rel = forged.relative_to(repo).as_posix()
    findings = {(f["code"], f["path"]) for f in taskfs("audit", "--json").json["findings"]}
    assert ("evidence_unsigned", rel) in findings
    # A signature under a key the repository does not hold is no better.
    forge(
        repo,
        task,
        runner={"name": "ghost", "keyId": "0" * 16},
        signature="ed25519:" + "A" * 86 + "==",
    )
    assert taskfs("complete", task, "--agent", "builder", "--json").codes == [
        "completion_requires_evidence"
    ]
    assert check(task).code == 0
    assert taskfs("complete", task, "--agent", "builder", "--json").code == 0


def test_a_runner_key_the_recipient_adds_is_named_and_the_operator_list_decides(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ci = new_runner("ci").json
    task = make_task(repo, "true")
    # The recipient makes a runner key of its own and signs with it.
    new_runner("mallory")
    monkeypatch.setenv("TASKFS_RUNNER", "mallory")
    assert check(task).json["signed"] is True
    monkeypatch.delenv("TASKFS_RUNNER")
    notes = taskfs("audit", "--json").json["notes"]
    assert {(n["code"], n["path"]) for n in notes} >= {
        ("runner_key_added", ".taskfs/keys/runner/ci.pub"),
        ("runner_key_added", ".taskfs/keys/runner/mallory.pub"),
    }
    # The operator trusts ci alone, in a list no agent's repository holds.
    trusted = tmp_path / "trusted-runners.yaml"
    trusted.write_text(yamlio.dump({"runners": {"ci": ci["publicKey"]}}))
    monkeypatch.setenv("TASKFS_TRUSTED_RUNNERS", str(trusted))
    assert taskfs("complete", task, "--agent", "builder", "--json").codes == [
        "completion_requires_evidence"
    ]
    result = check(task)
    assert evidence_of(repo, result)["runner"]["name"] == "ci"
    assert taskfs("complete", task, "--agent", "builder", "--json").code == 0


def test_a_trust_list_inside_the_repository_is_refused(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = make_task(repo, "true")
    (repo / "trust.yaml").write_text("runners: {}\n")
    monkeypatch.setenv("TASKFS_TRUSTED_RUNNERS", str(repo / "trust.yaml"))
    assert check(task).codes == ["trust_list_unsafe"]


@pytest.mark.parametrize("kind", ["missing", "dangling link", "a folder", "unreadable"])
def test_a_named_trust_list_that_cannot_be_read_fails_closed(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Never "no list, so trust the keys the repository holds": anyone who can commit can add
    a runner key there and sign their own passing evidence."""
    new_runner("mallory")
    task = make_task(repo, "true")
    named = tmp_path / "operator" / "trusted-runners.yaml"
    named.parent.mkdir()
    if kind == "dangling link":
        named.symlink_to(tmp_path / "nowhere.yaml")
    elif kind == "a folder":
        named.mkdir()
    elif kind == "unreadable":
        if os.geteuid() == 0:
            pytest.skip("root reads any file")
        named.write_text("runners: {}\n")
        named.chmod(0)
    monkeypatch.setenv("TASKFS_TRUSTED_RUNNERS", str(named))
    head = git(repo, "rev-parse", "HEAD")
    assert check(task).codes == ["trust_list_unsafe"]
    assert git(repo, "rev-parse", "HEAD") == head
    assert taskfs("complete", task, "--agent", "builder", "--json").codes == ["trust_list_unsafe"]
    assert taskfs("audit", "--json").codes == ["trust_list_unsafe"]


def test_a_changed_runner_key_is_a_finding(repo: Path) -> None:
    new_runner("ci")
    new_runner("other")
    key = repo / ".taskfs" / "keys" / "runner" / "ci.pub"
    key.write_text((repo / ".taskfs" / "keys" / "runner" / "other.pub").read_text())
    commit_all(repo, "rotate")
    findings = taskfs("audit", "--json").json["findings"]
    assert [(f["code"], f["path"]) for f in findings] == [
        ("runner_key_changed", ".taskfs/keys/runner/ci.pub")
    ]


def test_a_named_runner_without_its_private_key(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = make_task(repo, "true")
    monkeypatch.setenv("TASKFS_RUNNER", "nowhere")
    assert check(task).codes == ["key_invalid"]
    assert not (repo / "tasks" / task / "evidence").exists()


# -- recorded judgements ------------------------------------------------------------------------


def test_a_recorded_judgement_never_completes_a_task(repo: Path, tmp_path: Path) -> None:
    task = make_task(repo, "false")
    added = taskfs(
        "evidence", "add", task, "--verdict", "pass", "--source", "llm_judge",
        "--note", "Looks right to me.", "--agent", "reviewer", "--json",
    )  # fmt: skip
    assert added.code == 0, added.stdout
    doc = evidence_of(repo, added)
    assert doc["kind"] == "judgement"
    assert doc["verdictSource"] == "llm_judge"
    assert doc["by"] == "reviewer"
    assert doc["note"] == "Looks right to me."
    refused = taskfs("complete", task, "--agent", "builder", "--json")
    assert refused.codes == ["completion_requires_evidence"]
    report = tmp_path / "review.md"
    report.write_bytes(b"# Review\n" + b"x" * 100_000)
    from_file = taskfs(
        "evidence", "add", task, "--verdict", "fail", "--source", "alice",
        "--file", str(report), "--json",
    )  # fmt: skip
    doc = evidence_of(repo, from_file)
    assert doc["noteFile"]["totalBytes"] == 100_009
    assert doc["noteFile"]["truncated"] is True
    assert doc["noteFile"]["digest"]["sha256"] == hashlib.sha256(report.read_bytes()).hexdigest()
    piped = taskfs(
        "evidence", "add", task, "--verdict", "pass", "--source", "bob", "--file", "-", "--json",
        stdin=b"fine by me\n",
    )  # fmt: skip
    assert evidence_of(repo, piped)["note"] == "fine by me\n"
    rows = taskfs("show", task, "--json").json["evidence"]
    assert [row["kind"] for row in rows] == ["judgement", "judgement", "judgement"]
    assert taskfs("complete", task, "--agent", "builder", "--json").codes == [
        "completion_requires_evidence"
    ]


def test_bad_judgements_are_refused(repo: Path, tmp_path: Path) -> None:
    task = make_task(repo, "true")
    base = ["evidence", "add", task, "--verdict", "pass"]
    assert taskfs(*base, "--source", "script", "--json").codes == ["invalid_value"]
    assert taskfs(*base, "--source", "two words", "--json").codes == ["invalid_value"]
    assert taskfs(*base, "--source", "s", "--note", "a", "--file", "f", "--json").code == 2
    missing = str(tmp_path / "missing.txt")
    assert taskfs(*base, "--source", "s", "--file", missing, "--json").codes == ["file_unreadable"]
    assert taskfs("evidence", "add", task, "--source", "s", "--json").code == 2
    assert taskfs(
        "evidence", "add", "nope", "--verdict", "pass", "--source", "s", "--json"
    ).codes == ["task_not_found"]
    assert not (repo / "tasks" / task / "evidence").exists()


# -- the check command --------------------------------------------------------------------------


def test_check_refuses_bad_input(repo: Path) -> None:
    assert check("nope").codes == ["task_not_found"]
    task = make_task(repo, "true")
    for bad in ("0", "-1", "abc", "100000"):
        assert check(task, "--timeout", bad).code == 2
    assert not (repo / "tasks" / task / "evidence").exists()


def test_the_time_limit_comes_from_the_flag_the_envelope_or_the_config(repo: Path) -> None:
    plain = make_task(repo, "true", filesAndInterfaces=["a/**"])
    limited = make_task(
        repo, "true", filesAndInterfaces=["b/**"], acceptance={"timeoutSeconds": 42}
    )
    assert evidence_of(repo, check(plain))["limits"]["timeoutSeconds"] == 600
    assert evidence_of(repo, check(limited))["limits"]["timeoutSeconds"] == 42
    assert evidence_of(repo, check(limited, "--timeout", "7"))["limits"]["timeoutSeconds"] == 7


def test_anyone_may_run_a_check_in_any_state_and_it_moves_nothing(repo: Path) -> None:
    task = make_task(repo, "true", claim=False)
    result = taskfs("check", task, "--agent", "stranger", "--json")
    assert result.code == 0
    doc = evidence_of(repo, result)
    assert doc["by"] == "stranger"
    assert doc["host"]
    assert state(task) == "submitted"
    assert git(repo, "log", "-1", "--format=%an") == "stranger"


def test_the_end_to_end_command_runs_after_a_pass_and_decides_too(repo: Path) -> None:
    task = make_task(repo, "true", acceptance={"endToEndCommand": "echo e2e; exit 3"})
    result = check(task)
    assert result.code == 1
    doc = evidence_of(repo, result)
    assert doc["exitCode"] == 0
    assert doc["verdict"] == "fail"
    assert doc["endToEnd"]["description"] == VERIFY
    assert doc["endToEnd"]["run"]["verdict"] == "fail"
    assert doc["endToEnd"]["run"]["stdout"] == "e2e\n"
    failing = make_task(
        repo, "false", filesAndInterfaces=["lib/**"], acceptance={"endToEndCommand": "true"}
    )
    doc = evidence_of(repo, check(failing))
    assert doc["endToEnd"]["skipped"]
    assert "run" not in doc["endToEnd"]


def test_a_judge_declared_check_is_recorded_as_such(repo: Path) -> None:
    task = make_task(repo, "true", acceptance={"verdictSource": "llm_judge"})
    result = check(task)
    assert result.json["verdictSource"] == "llm_judge"
    assert evidence_of(repo, result)["verdictSource"] == "llm_judge"
    assert taskfs("complete", task, "--agent", "builder", "--json").code == 0


def test_a_check_that_changes_its_own_owned_files_is_stale_at_once(repo: Path) -> None:
    task = make_task(repo, "mkdir -p src && echo more >> src/stamp")
    result = check(task)
    assert result.code == 0
    assert evidence_of(repo, result)["ownedFiles"]["changedDuringRun"] is True
    assert taskfs("complete", task, "--agent", "builder", "--json").codes == ["evidence_stale"]


def test_a_task_owning_everything_is_not_made_stale_by_its_own_evidence(repo: Path) -> None:
    task = make_task(repo, "true", filesAndInterfaces=["**"])
    assert check(task).code == 0
    assert taskfs("complete", task, "--agent", "builder", "--json").code == 0


def test_check_is_quiet_when_stderr_is_not_a_terminal(repo: Path) -> None:
    task = make_task(repo, "echo hello-from-check; echo to-stderr >&2")
    result = taskfs("check", task)
    assert result.code == 0
    assert result.stderr == ""
    assert "pass" in result.stdout
    assert "hello-from-check" not in result.stdout


def run_with_terminal_stderr(repo: Path, *args: str) -> tuple[int, str, str]:
    main, sub = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskfs", *args],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=sub,
    )
    os.close(sub)
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(main, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    proc.stdout.close()
    code = proc.wait(timeout=60)
    os.close(main)
    return code, out, b"".join(chunks).decode("utf-8", "replace")


def test_check_shows_progress_on_a_terminal_and_not_under_json(repo: Path) -> None:
    task = make_task(repo, "echo hello-from-check; sleep 1.5; echo done-now")
    code, out, err = run_with_terminal_stderr(repo, "check", task)
    assert code == 0
    assert "hello-from-check" in err
    assert "done-now" in err
    assert re.search(r"\[check: [1-9][0-9]* s of 600 s\]", err), err
    assert "hello-from-check" not in out
    code, out, err = run_with_terminal_stderr(repo, "check", task, "--json")
    assert code == 0
    assert err == ""
    assert '"verdict": "pass"' in out


# -- validate and audit read evidence -------------------------------------------------------------


def test_validate_names_malformed_evidence_files(repo: Path) -> None:
    task = make_task(repo, "true")
    good = repo / check(task).json["evidence"]
    folder = good.parent
    name = stamped_name(datetime.now(timezone.utc))
    (folder / name).write_bytes(b"\x00 not yaml")
    (folder / "notes.txt").write_text("hi\n")
    doc = yamlio.load(good.read_bytes())
    del doc["verdict"]
    (folder / stamped_name(datetime.now(timezone.utc))).write_text(yamlio.dump(doc))
    other = {**yamlio.load(good.read_bytes()), "task": "someone-else"}
    (folder / stamped_name(datetime.now(timezone.utc))).write_text(yamlio.dump(other))
    result = taskfs("validate", "--json")
    assert result.code == 1
    bad = sorted(f["path"].rsplit("/", 1)[-1] for f in result.json["files"] if not f["ok"])
    assert len(bad) == 4
    assert "notes.txt" in bad
    ok = [f["path"] for f in result.json["files"] if f["ok"]]
    assert good.relative_to(repo).as_posix() in ok
    # A task with a malformed evidence file still completes on its valid one (once a commit
    # holds them all: a file no commit holds is never built upon, issue 16).
    assert (
        taskfs("complete", task, "--agent", "builder", "--json").codes
        == ["ledger_file_uncommitted"] * 4
    )
    git(repo, "add", "tasks")
    git(repo, "commit", "-q", "-m", "malformed evidence")
    assert taskfs("complete", task, "--agent", "builder", "--json").code == 0


def test_audit_names_a_completion_without_evidence(repo: Path) -> None:
    task = make_task(repo, "true")
    folder = repo / "tasks" / task / "status"
    last = sorted(folder.iterdir())[-1]
    forged = folder / "0003-completed-zzzzzzzz.yaml"
    forged.write_text(
        f"task: {task}\nstate: completed\nby: builder\nat: '2026-01-01T00:00:00Z'\n"
        f"prev: {last.name}\n"
    )
    commit_as(repo, "builder", "sneak")
    assert state(task) == "completed"
    findings = taskfs("audit", "--json").json["findings"]
    assert [(f["code"], f["path"]) for f in findings] == [
        ("completion_requires_evidence", f"tasks/{task}/status/{forged.name}")
    ]


def test_log_interleaves_evidence_with_transitions(repo: Path) -> None:
    task = make_task(repo, "true")
    passed = check(task)
    assert taskfs("complete", task, "--agent", "builder").code == 0
    log = taskfs("log", task, "--json").json
    runs = [row for row in log["timeline"] if row["kind"] == "evidence"]
    assert [row["path"] for row in runs] == [passed.json["evidence"]]
    lines = taskfs("log", task).stdout.splitlines()
    assert [line.split()[1] for line in lines] == ["submitted", "working", "evidence", "completed"]


@pytest.fixture(autouse=True)
def _no_process_left() -> Iterator[None]:
    """Every check's process group is gone when its command returns: nothing may linger.
    (The tests' long sleeps are `LONG_SLEEP`, a length no other test, nor this file run by
    another process, uses: another pytest worker's checks may be sleeping meanwhile.)"""
    yield
    out = subprocess.run(
        ["ps", "-eo", "stat=,args="], capture_output=True, text=True, check=False
    ).stdout
    alive = [line for line in out.splitlines() if LONG_SLEEP in line and not line.startswith("Z")]
    assert alive == []


def test_owned_files_are_looked_for_below_their_entries_literal_folders(repo: Path) -> None:
    """The fingerprint asks git only for the files below each entry's literal prefix: the
    same files the entries match, wherever they are in that folder, and no others."""
    for rel in ("lib/core/a.py", "lib/core/deep/b.py", "docs/guide.md", "lib/other/c.py"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(f"{rel}\n")
    commit_all(repo, "the work")
    entries = ["lib/core/**/*.py", "docs/guide.md", "./lib/core/a.py"]
    task = make_task(repo, "true", filesAndInterfaces=entries)
    result = check(task)
    assert result.code == 0
    assert evidence_of(repo, result)["ownedFiles"]["count"] == 3
    for outside in ("lib/other/d.py", "docs/other.md", "lib/core.py"):
        (repo / outside).write_text("not owned\n")
    (repo / "lib" / "core" / "deep" / "new.py").write_text("owned, untracked\n")
    assert taskfs("complete", task, "--agent", "builder", "--json").codes == ["evidence_stale"]
    (repo / "lib" / "core" / "deep" / "new.py").unlink()
    assert taskfs("complete", task, "--agent", "builder", "--json").code == 0
