"""Lifecycle transitions through the command line, in real repositories."""

from __future__ import annotations

import itertools
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from taskfs.core.lifecycle import STATES, TRANSITIONS
from tests.helpers import commit_as, git, submit, taskfs, taskfs_process

# How to bring a freshly submitted task into each state, as (command, args...) steps.
ROUTES: dict[str, list[list[str]]] = {
    "submitted": [],
    "working": [["claim", "--agent", "builder"]],
    "input_required": [
        ["claim", "--agent", "builder"],
        ["move", "input_required", "--agent", "builder"],
    ],
    "auth_required": [
        ["claim", "--agent", "builder"],
        ["move", "auth_required", "--agent", "builder"],
    ],
    "failed": [["move", "failed", "--agent", "planner", "--reason", "no longer needed"]],
    "canceled": [["move", "canceled", "--agent", "planner"]],
    "rejected": [["refuse", "--agent", "builder", "--reason", "out of scope"]],
    "completed": [["claim", "--agent", "builder"], ["check"], ["complete", "--agent", "builder"]],
}


def bring(task: str, state: str) -> None:
    for command, *args in ROUTES[state]:
        result = taskfs(command, task, *args, "--json")
        assert result.code == 0, result.stdout
    assert taskfs("show", task, "--json").json["state"] == state


def ledger_files(repo: Path, task: str) -> list[str]:
    return sorted(p.name for p in (repo / "tasks" / task / "status").iterdir())


@pytest.mark.parametrize(("source", "target"), list(itertools.product(sorted(ROUTES), STATES)))
def test_every_state_to_every_target(repo: Path, source: str, target: str) -> None:
    check = {"passFailCommand": "true", "endToEndVerification": "nothing to see"}
    task = submit(repo, filesAndInterfaces=[f"src/{source}-{target}.py"], acceptanceCheck=check)
    bring(task, source)
    head, files = git(repo, "rev-parse", "HEAD"), ledger_files(repo, task)
    result = taskfs("move", task, target, "--agent", "builder", "--reason", "why", "--json")
    allowed = target in TRANSITIONS[source]  # type: ignore[index]
    if allowed and target != "completed":
        assert result.code == 0, result.stdout
        assert result.json == {
            **result.json,
            "ok": True,
            "id": task,
            "state": target,
        }
        assert len(ledger_files(repo, task)) == len(files) + 1
        assert git(repo, "rev-list", "--count", f"{head}..HEAD") == "1"
        assert taskfs("audit", "--json").json["ok"] is True
        return
    expected = "completion_requires_evidence" if allowed else "transition_not_allowed"
    assert result.code == 1
    assert result.codes[0] == expected
    assert ledger_files(repo, task) == files
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""


def test_transition_commit_is_authored_by_the_agent_and_greppable(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    assert git(repo, "log", "-1", "--format=%an") == "builder"
    found = git(repo, "log", "--format=%s", f"--grep=Taskfs-Task: {task}")
    assert found.splitlines()[0] == f"taskfs: {task} submitted -> working by builder"
    trailers = git(repo, "log", "-1", "--format=%(trailers:key=Taskfs-Transition,valueonly)")
    assert trailers.strip() == "submitted -> working"


def test_status_files_chain_through_prev(repo: Path) -> None:
    task = submit(repo)
    bring(task, "input_required")
    history = taskfs("log", task, "--json").json["history"]
    assert [row["state"] for row in history] == ["submitted", "working", "input_required"]
    assert history[0].get("prev") is None
    assert history[1]["prev"] == history[0]["file"]
    assert history[2]["prev"] == history[1]["file"]
    assert all(row["at"].endswith("Z") for row in history)
    assert [row["file"][:4] for row in history] == ["0001", "0002", "0003"]


def test_claim_is_for_the_recipient(repo: Path) -> None:
    task = submit(repo)
    result = taskfs("claim", task, "--agent", "intruder", "--json")
    assert result.codes == ["agent_not_allowed"]


def test_anyone_may_claim_a_task_without_recipient(repo: Path) -> None:
    task = submit(repo, to=None)
    assert taskfs("claim", task, "--agent", "whoever", "--json").json["state"] == "working"


def test_only_a_party_may_move(repo: Path) -> None:
    task = submit(repo)
    bring(task, "working")
    result = taskfs("move", task, "canceled", "--agent", "stranger", "--json")
    assert result.codes == ["agent_not_allowed"]
    assert taskfs("move", task, "canceled", "--agent", "planner", "--json").code == 0


def test_completion_is_for_the_holder(repo: Path) -> None:
    task = submit(repo)
    bring(task, "working")
    result = taskfs("complete", task, "--agent", "planner", "--json")
    assert result.codes[0] == "agent_not_allowed"


@pytest.mark.parametrize("reason", [None, "", "   "])
@pytest.mark.parametrize("command", ["refuse", "fail"])
def test_reason_required(repo: Path, command: str, reason: str | None) -> None:
    task = submit(repo)
    args = ["refuse", task] if command == "refuse" else ["move", task, "failed"]
    args += ["--agent", "builder", "--json"]
    if reason is not None:
        args += ["--reason", reason]
    result = taskfs(*args)
    assert result.code == 1
    assert result.codes == ["reason_required"]


def test_unknown_task(repo: Path) -> None:
    assert taskfs("claim", "nope", "--agent", "builder", "--json").codes == ["task_not_found"]
    assert taskfs("show", "nope", "--json").codes == ["task_not_found"]
    assert taskfs("show", "../etc", "--json").codes == ["invalid_task_id"]  # no id at all


def test_unknown_state_is_a_command_line_error(repo: Path) -> None:
    task = submit(repo)
    result = taskfs("move", task, "done", "--agent", "builder", "--json")
    assert result.code == 2
    assert result.codes == ["usage"]


def test_missing_agent(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--json").codes == ["agent_required"]
    assert taskfs("claim", task, "--agent", "bad name", "--json").codes == ["invalid_agent"]


def test_agent_from_environment(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = submit(repo)
    monkeypatch.setenv("TASKFS_AGENT", "builder")
    assert taskfs("claim", task, "--json").json["state"] == "working"


def test_task_folder_without_envelope(repo: Path) -> None:
    (repo / "tasks" / "orphan" / "status").mkdir(parents=True)
    assert taskfs("claim", "orphan", "--agent", "a", "--json").codes == ["task_not_found"]
    result = taskfs("validate", "--json")
    assert result.code == 1
    assert [f["path"] for f in result.json["files"] if not f["ok"]] == ["tasks/orphan"]


def test_garbage_status_file_blocks_transitions_and_is_named(repo: Path) -> None:
    task = submit(repo)
    bring(task, "working")
    newest = sorted((repo / "tasks" / task / "status").iterdir())[-1]
    newest.write_bytes(b"\x00\x01 garbage")
    head = git(repo, "rev-parse", "HEAD")
    result = taskfs("move", task, "input_required", "--agent", "builder", "--json")
    assert result.code == 1
    # Those bytes are no commit's: nothing is built on them (issue 16).
    assert "ledger_file_uncommitted" in result.codes
    assert git(repo, "rev-parse", "HEAD") == head
    findings = taskfs("audit", "--json").json["findings"]
    assert {(f["code"], f["path"]) for f in findings} >= {
        ("file_invalid", f"tasks/{task}/status/{newest.name}"),
        ("ledger_file_edited", f"tasks/{task}/status/{newest.name}"),
    }


def test_audit_names_an_edit_committed_later(repo: Path) -> None:
    task = submit(repo)
    bring(task, "working")
    first = sorted((repo / "tasks" / task / "status").iterdir())[0]
    first.write_text(first.read_text().replace("by: planner", "by: mallory"))
    git(repo, "commit", "-q", "-am", "tidy up")
    result = taskfs("audit", "--json")
    assert result.code == 1
    # The edit is named; so is what it now claims: a submission by someone who did not send
    # the task, in a commit authored by planner.
    assert [(f["code"], f["path"]) for f in result.json["findings"]] == [
        ("author_mismatch", f"tasks/{task}/status/{first.name}"),
        ("ledger_file_edited", f"tasks/{task}/status/{first.name}"),
        ("transition_unauthorized", f"tasks/{task}/status/{first.name}"),
    ]


def test_audit_names_a_deleted_status_file(repo: Path) -> None:
    task = submit(repo)
    bring(task, "input_required")
    middle = sorted((repo / "tasks" / task / "status").iterdir())[1]
    git(repo, "rm", "-q", str(middle))
    git(repo, "commit", "-q", "-m", "remove")
    findings = taskfs("audit", "--json").json["findings"]
    codes = {(f["code"], f["path"]) for f in findings}
    assert ("ledger_file_deleted", f"tasks/{task}/status/{middle.name}") in codes
    assert any(code == "chain_broken" for code, _ in codes)


def test_audit_names_a_transition_the_table_does_not_allow(repo: Path) -> None:
    task = submit(repo)
    bring(task, "canceled")
    folder = repo / "tasks" / task / "status"
    last = sorted(folder.iterdir())[-1]
    forged = folder / "0003-working-zzzzzzzz.yaml"
    forged.write_text(
        f"task: {task}\nstate: working\nby: builder\nat: '2026-01-01T00:00:00Z'\n"
        f"prev: {last.name}\n"
    )
    commit_as(repo, "builder", "sneak", str(forged))
    findings = taskfs("audit", "--json").json["findings"]
    assert [(f["code"], f["path"]) for f in findings] == [
        ("transition_not_allowed", f"tasks/{task}/status/{forged.name}")
    ]
    assert taskfs("show", task, "--json").json["state"] == "working"


def test_user_work_is_never_swept_into_a_ledger_commit(repo: Path) -> None:
    task = submit(repo)
    (repo / "staged.txt").write_text("staged\n")
    git(repo, "add", "staged.txt")
    (repo / "README.md").write_text("changed, not staged\n")
    (repo / "untracked.txt").write_text("new\n")
    assert taskfs("claim", task, "--agent", "builder").code == 0
    assert len(git(repo, "show", "--name-only", "--format=", "HEAD").splitlines()) == 1
    assert sorted(git(repo, "status", "--porcelain").splitlines()) == [
        " M README.md",
        "?? untracked.txt",
        "A  staged.txt",
    ]
    assert git(repo, "diff", "--cached", "--name-only") == "staged.txt"


def test_detached_head(repo: Path) -> None:
    task = submit(repo)
    git(repo, "checkout", "-q", "--detach")
    assert taskfs("claim", task, "--agent", "builder").code == 0
    assert git(repo, "log", "-1", "--format=%an") == "builder"
    assert git(repo, "status", "--porcelain") == ""


def test_repository_without_commits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q")
    monkeypatch.chdir(root)
    task = submit(root)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    assert git(root, "rev-list", "--count", "HEAD") == "2"
    assert taskfs("audit", "--json").json["ok"] is True


def test_init_makes_a_repository_and_is_idempotent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    monkeypatch.chdir(root)
    first = taskfs("init", "--json")
    assert first.code == 0
    assert (root / ".git").is_dir()
    assert (root / ".taskfs" / "config.yaml").is_file()
    head = git(root, "rev-parse", "HEAD")
    second = taskfs("init", "--json")
    assert second.json["created"] == []
    assert git(root, "rev-parse", "HEAD") == head


def test_not_a_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert taskfs("ls", "--json").codes == ["not_a_repository"]


def test_dependencies_block_a_claim_until_completed(repo: Path) -> None:
    first = submit(repo, id="first", filesAndInterfaces=["a.py"])
    second = submit(repo, id="second", dependsOn=["first", "later"], filesAndInterfaces=["b.py"])
    result = taskfs("claim", second, "--agent", "builder", "--json")
    assert result.codes == ["dependencies_unresolved"]
    assert result.json["errors"][0]["pending"] == ["first", "later"]
    ready = [t["id"] for t in taskfs("ready", "--json").json["tasks"]]
    assert ready == [first]


def test_ready_lists_exactly_the_claimable(repo: Path) -> None:
    mine = submit(repo, id="mine", filesAndInterfaces=["m.py"])
    submit(repo, id="theirs", to="someone-else", filesAndInterfaces=["t.py"])
    anyone = submit(repo, id="anyone", to=None, filesAndInterfaces=["a.py"])
    taken = submit(repo, id="taken", filesAndInterfaces=["k.py"])
    bring(taken, "working")
    ready = taskfs("ready", "--agent", "builder", "--json").json["tasks"]
    assert sorted(t["id"] for t in ready) == sorted([mine, anyone])
    for task in ready:
        assert taskfs("claim", task["id"], "--agent", "builder").code == 0


def test_ls_filters(repo: Path) -> None:
    a = submit(repo, id="a1", filesAndInterfaces=["a.py"], contextID="alpha")
    submit(repo, id="b1", filesAndInterfaces=["b.py"], to="other")
    bring(a, "working")
    assert [t["id"] for t in taskfs("ls", "--state", "working", "--json").json["tasks"]] == ["a1"]
    assert [t["id"] for t in taskfs("ls", "--to", "other", "--json").json["tasks"]] == ["b1"]
    assert [t["id"] for t in taskfs("ls", "--context", "alpha", "--json").json["tasks"]] == ["a1"]
    row = taskfs("ls", "--json").json["tasks"][0]
    assert set(row) >= {"id", "state", "from", "to", "contextID"}


# -- many processes on one checkout ----------------------------------------------------

WORKER = """
import sys
from taskfs.cli.app import run
agent, count, *tasks = sys.argv[1:]
import io, contextlib
moves = 0
for task in tasks:
    with contextlib.redirect_stdout(io.StringIO()):
        code = run(["claim", task, "--agent", agent])
    assert code == 0, (task, code)
    moves += 1
    target = "input_required"
    while moves < int(count) * (tasks.index(task) + 1) // len(tasks):
        with contextlib.redirect_stdout(io.StringIO()):
            code = run(["move", task, target, "--agent", agent])
        assert code == 0, (task, target, code)
        moves += 1
        target = "working" if target == "input_required" else "input_required"
print(moves)
"""


def test_many_processes_never_lose_a_transition(repo: Path) -> None:
    processes, per_process = 6, 12
    plan = []
    for p in range(processes):
        tasks = [
            submit(repo, id=f"p{p}-t{i}", to=f"agent{p}", filesAndInterfaces=[f"p{p}/t{i}.py"])
            for i in range(2)
        ]
        plan.append((f"agent{p}", tasks))
    head = git(repo, "rev-parse", "HEAD")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, agent, str(per_process), *tasks],
            cwd=repo,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for agent, tasks in plan
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert out.strip() == str(per_process)
    total = processes * per_process
    assert git(repo, "rev-list", "--count", f"{head}..HEAD") == str(total)
    files = list((repo / "tasks").glob("*/status/*.yaml"))
    assert len(files) == total + 2 * processes  # plus each task's submitted status
    assert git(repo, "status", "--porcelain") == ""
    assert taskfs("audit", "--json").json["ok"] is True


def test_racing_claims_have_exactly_one_winner(repo: Path) -> None:
    for trial in range(4):
        task = submit(repo, id=f"race{trial}", to=None, filesAndInterfaces=[f"r{trial}.py"])
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "taskfs", "claim", task, "--agent", f"a{i}", "--json"],
                cwd=repo,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(6)
        ]
        results = [(p.communicate(timeout=120)[0], p.returncode) for p in procs]
        winners = [out for out, code in results if code == 0]
        assert len(winners) == 1, results
        losers = [out for out, code in results if code != 0]
        assert all('"transition_not_allowed"' in out for out in losers)
        assert len(list((repo / "tasks" / task / "status").iterdir())) == 2
    assert taskfs("audit", "--json").json["ok"] is True


KILLED_WORKER = """
import sys, io, contextlib
from taskfs.cli.app import run
task = sys.argv[1]
target = "input_required"
while True:
    with contextlib.redirect_stdout(io.StringIO()):
        run(["move", task, target, "--agent", "builder"])
    target = "working" if target == "input_required" else "input_required"
"""


def test_sigkill_mid_transition_leaves_nothing_half_done(repo: Path) -> None:
    task = submit(repo)
    bring(task, "working")
    rng = random.Random(7)
    for _ in range(8):
        proc = subprocess.Popen(
            [sys.executable, "-c", KILLED_WORKER, task],
            cwd=repo,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.4, 1.2))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        # The next command that touches the ledger finishes or undoes the killed one. Until
        # then `show` says what HEAD holds, and names a file the killed one left uncommitted.
        shown = taskfs("show", task, "--json").json
        assert {p["code"] for p in shown["problems"]} <= {"ledger_file_uncommitted"}
        target = "working" if shown["state"] == "input_required" else "input_required"
        moved = taskfs("move", task, target, "--agent", "builder", "--json")
        if moved.codes == ["transition_not_allowed"]:  # the killed one's move was finished
            target = "working" if target == "input_required" else "input_required"
            moved = taskfs("move", task, target, "--agent", "builder", "--json")
        assert moved.code == 0, moved.stdout
        assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
        for path in (repo / "tasks" / task / "status").iterdir():
            assert not path.name.startswith("."), "a temporary file was left behind"
        assert taskfs("audit", "--json").json["ok"] is True


def test_version_answers_without_a_repository(tmp_path: Path) -> None:
    result = taskfs_process("--version", cwd=tmp_path)
    assert result.code == 0
    assert result.stdout.startswith("taskfs ")


def test_a_dependency_completed_through_its_check_unblocks_the_claim(repo: Path) -> None:
    check = {"passFailCommand": "true", "endToEndVerification": "nothing to see"}
    first = submit(repo, id="first", filesAndInterfaces=["a.py"], acceptanceCheck=check)
    second = submit(repo, id="second", dependsOn=["first"], filesAndInterfaces=["b.py"])
    assert taskfs("claim", second, "--agent", "builder", "--json").codes == [
        "dependencies_unresolved"
    ]
    bring(first, "completed")
    assert taskfs("claim", second, "--agent", "builder", "--json").json["state"] == "working"
