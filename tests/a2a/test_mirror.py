"""`taskfs a2a send` and `follow`: two repositories, one delegating to the other over A2A.

The builder's repository serves A2A (`taskfs a2a serve`); the planner's mirrors the task and
completes it only once the acceptance check passed here, on the files that arrived.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from taskfs.core import yamlio
from tests.a2a.serving import serving, write_tokens
from tests.helpers import ENVELOPE, git, taskfs, taskfs_process

TOKEN = "planner-token-0123456789"


def make_repo(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("a project\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "initial")
    assert taskfs("init", cwd=path).code == 0
    return path


@pytest.fixture
def pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(the planner's repository, the builder's), and the builder's token for the planner."""
    tokens = write_tokens(tmp_path / "operator" / "a2a.yaml", {TOKEN: "planner"})
    monkeypatch.setenv("TASKFS_A2A_TOKENS", str(tokens))
    monkeypatch.setenv("TASKFS_A2A_TOKEN", TOKEN)
    return make_repo(tmp_path / "planner"), make_repo(tmp_path / "builder")


def envelope_file(path: Path, **changes: Any) -> Path:
    data = {k: v for k, v in ENVELOPE.items() if k not in ("from", "to")}
    data.update(changes)
    path.write_text(yamlio.dump(data))
    return path


def cli(repo: Path, *args: str) -> Any:
    return taskfs_process(*args, "--json", cwd=repo)


def wait_for(check: Callable[[], bool], what: str, seconds: float = 90) -> None:
    end = time.monotonic() + seconds
    while not check():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def state(repo: Path, task_id: str) -> str:
    return str(cli(repo, "show", task_id).json["state"])


@contextlib.contextmanager
def background(repo: Path, *args: str) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskfs", *args],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
        start_new_session=True,
    )
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)


def build(builder: Path, content: str = "def login(p):\n    return bool(p)\n") -> None:
    (builder / "src" / "auth").mkdir(parents=True, exist_ok=True)
    (builder / "src" / "auth" / "login.py").write_text(content)
    git(builder, "add", "src/auth/login.py")
    git(builder, "commit", "-q", "-m", "builder: the fix")


def test_the_mirror_completes_only_after_its_local_check_passed(
    pair: tuple[Path, Path], tmp_path: Path
) -> None:
    planner, builder = pair
    with serving(builder, "builder") as served:
        sent = cli(
            planner,
            "a2a",
            "send",
            served.url,
            str(envelope_file(tmp_path / "e.yaml")),
            "--agent",
            "planner",
            "--detach",
        )
        assert sent.code == 0, sent.stdout + sent.stderr
        task_id = sent.json["tasks"][0]["id"]
        shown = cli(planner, "show", task_id).json
        assert (shown["envelope"]["from"], shown["envelope"]["to"]) == ("planner", "builder")
        assert shown["envelope"]["x-a2a"] == {"url": served.url}
        assert cli(builder, "show", task_id).json["envelope"]["from"] == "planner"

        # The follower mirrors the claim, then dies (kill -9) while the builder asks.
        with background(planner, "a2a", "follow", task_id) as follower:
            assert cli(builder, "claim", task_id, "--agent", "builder").code == 0
            wait_for(lambda: state(planner, task_id) == "working", "the mirrored claim")
            os.killpg(follower.pid, signal.SIGKILL)
        asked = cli(
            builder,
            "send",
            task_id,
            "Which branch?",
            "--agent",
            "builder",
            "--status",
            "needs_input",
        )
        assert asked.code == 0

        # A new follower resumes: the question arrives, the planner answers here.
        with background(planner, "a2a", "follow", task_id, "--json") as follower:
            wait_for(lambda: state(planner, task_id) == "input_required", "the mirrored question")
            thread = cli(planner, "messages", task_id).json["messages"]
            question = thread[-1]
            assert (question["from"], question["status"], question["text"]) == (
                "builder",
                "needs_input",
                "Which branch?",
            )
            answer = cli(
                planner,
                "send",
                task_id,
                "main",
                "--agent",
                "planner",
                "--in-reply-to",
                question["msg_id"],
            )
            assert answer.code == 0, answer.stderr
            wait_for(lambda: state(builder, task_id) == "working", "the forwarded answer")
            remote_thread = cli(builder, "messages", task_id).json["messages"]
            assert (remote_thread[-1]["from"], remote_thread[-1]["text"]) == ("planner", "main")
            assert remote_thread[-1]["in_reply_to"] == asked.json["msg_id"]

            build(builder)
            assert cli(builder, "check", task_id, "--agent", "builder").code == 0
            done = cli(
                builder,
                "complete",
                task_id,
                "--agent",
                "builder",
                "--artifact",
                "login=src/auth/login.py",
            )
            assert done.code == 0, done.stderr
            out, err = follower.communicate(timeout=120)
        assert follower.returncode == 0, out + err
    report = json.loads(out)["tasks"][0]
    assert (report["state"], report["remoteState"], report["passed"]) == (
        "completed",
        "completed",
        True,
    )
    assert (planner / "src/auth/login.py").read_bytes() == (
        builder / "src/auth/login.py"
    ).read_bytes()
    log = cli(planner, "log", task_id).json
    completed = log["history"][-1]
    assert (completed["state"], completed["by"]) == ("completed", "builder")
    assert completed["artifacts"] == [{"name": "login", "location": "src/auth/login.py"}]
    evidence = cli(planner, "show", task_id).json["evidence"]
    assert [row["verdict"] for row in evidence] == ["pass"]  # run here, on what arrived
    assert git(planner, "log", "-1", "--format=%an", "--", "src/auth/login.py") == "builder"


def test_a_remote_completion_without_the_work_leaves_the_mirror_open(
    pair: tuple[Path, Path], tmp_path: Path
) -> None:
    planner, builder = pair
    with serving(builder, "builder") as served:
        with background(
            planner,
            "a2a",
            "send",
            served.url,
            str(envelope_file(tmp_path / "e.yaml", id="no-work")),
            "--agent",
            "planner",
            "--json",
        ) as sender:
            wait_for(lambda: cli(builder, "show", "no-work").code == 0, "the remote task")
            assert cli(builder, "claim", "no-work", "--agent", "builder").code == 0
            build(builder)
            assert cli(builder, "check", "no-work", "--agent", "builder").code == 0
            # Completed there, but nothing of the work was sent as an artifact.
            assert cli(builder, "complete", "no-work", "--agent", "builder").code == 0
            out, err = sender.communicate(timeout=120)
        assert sender.returncode == 1, out + err
    report = json.loads(out)["tasks"][0]
    assert (report["state"], report["remoteState"], report["passed"]) == (
        "working",
        "completed",
        False,
    )
    assert [row["verdict"] for row in cli(planner, "show", "no-work").json["evidence"]] == ["fail"]
    refused = cli(planner, "complete", "no-work", "--agent", "builder")
    assert refused.codes == ["completion_requires_evidence"]


def test_a_remote_refusal_rejects_the_mirror_naming_the_remote_codes(
    pair: tuple[Path, Path], tmp_path: Path
) -> None:
    planner, builder = pair
    envelope_file(builder / "taken.yaml", id="taken")
    assert cli(builder, "new", "taken.yaml").code == 0
    with serving(builder, "builder") as served:
        sent = cli(
            planner,
            "a2a",
            "send",
            served.url,
            str(envelope_file(tmp_path / "e.yaml", id="taken")),
            "--agent",
            "planner",
        )
    assert sent.code == 1
    assert sent.codes == ["a2a_refused"]
    assert sent.json["errors"][0]["codes"] == ["task_exists"]
    shown = cli(planner, "show", "taken").json
    assert shown["state"] == "rejected"
    assert "task_exists" in cli(planner, "log", "taken").json["history"][-1]["reason"]


def test_an_agent_that_is_not_there_is_a2a_failed(pair: tuple[Path, Path], tmp_path: Path) -> None:
    planner, _builder = pair
    sent = cli(
        planner,
        "a2a",
        "send",
        "http://127.0.0.1:9/",
        str(envelope_file(tmp_path / "e.yaml")),
        "--agent",
        "planner",
    )
    assert sent.code == 1
    assert sent.codes == ["a2a_failed"]
    assert cli(planner, "ls").json["tasks"] == []  # nothing was submitted here


def test_a_cancel_here_is_a_cancel_there(pair: tuple[Path, Path], tmp_path: Path) -> None:
    planner, builder = pair
    source = str(envelope_file(tmp_path / "e.yaml", id="called-off"))
    with serving(builder, "builder") as served:
        args = ("a2a", "send", served.url, source, "--agent", "planner", "--json")
        with background(planner, *args) as sender:
            wait_for(lambda: cli(builder, "show", "called-off").code == 0, "the remote task")
            assert cli(builder, "claim", "called-off", "--agent", "builder").code == 0
            wait_for(lambda: state(planner, "called-off") == "working", "the mirrored claim")
            called_off = cli(
                planner,
                "send",
                "called-off",
                "not needed",
                "--agent",
                "planner",
                "--status",
                "canceled",
            )
            assert called_off.code == 0, called_off.stderr
            out, err = sender.communicate(timeout=120)
        assert sender.returncode == 0, out + err
    assert state(builder, "called-off") == "canceled"
    report = json.loads(out)["tasks"][0]
    assert (report["state"], report["remoteState"]) == ("canceled", "canceled")
    history = cli(builder, "log", "called-off").json["history"]
    assert history[-1]["by"] == "planner"
