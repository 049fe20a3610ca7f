"""The watcher never completes by surprise (issue 16): completing stays the holder's act unless
the runner policy says `complete: true`, and a check the policy declines is answered once, with
a committed message to the sender."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import git, submit, taskfs

COMMAND = "test -f src/auth/login.py"


def _requested(repo: Path) -> str:
    task = submit(repo, id="login", filesAndInterfaces=["src/auth/login.py"])
    assert taskfs("claim", task, "--agent", "builder").code == 0
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "login.py").write_text("def login(p):\n    return bool(p)\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "the work")
    sent = taskfs("send", task, "done", "--agent", "builder", "--status", "result", "--json")
    assert sent.code == 0, sent.stdout
    return task


def _policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    monkeypatch.setenv("TASKFS_POLICY", str(path))


def _state(task: str) -> str:
    return str(taskfs("show", task, "--json").json["state"])


def test_a_passing_check_leaves_completing_to_the_holder(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _policy(tmp_path, monkeypatch, f"allow:\n  commands: ['{COMMAND}']\n")
    task = _requested(repo)
    watched = taskfs("watch", "--once")
    assert watched.code == 0, watched.stderr
    assert "verdict=pass" in watched.stderr
    assert _state(task) == "working"
    done = taskfs("complete", task, "--agent", "builder", "--json")
    assert done.json["state"] == "completed"


def test_complete_true_lets_the_watcher_complete(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _policy(tmp_path, monkeypatch, f"complete: true\nallow:\n  commands: ['{COMMAND}']\n")
    task = _requested(repo)
    assert taskfs("watch", "--once").code == 0
    assert _state(task) == "completed"


def test_complete_true_still_needs_committed_work(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _policy(tmp_path, monkeypatch, f"complete: true\nallow:\n  commands: ['{COMMAND}']\n")
    task = _requested(repo)
    (repo / "src" / "auth" / "login.py").write_text("edited, not committed\n")
    watched = taskfs("watch", "--once")
    assert watched.code == 0
    assert "work_uncommitted" in watched.stderr
    assert _state(task) == "working"


def test_a_declined_check_is_answered_once_with_a_message(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _policy(tmp_path, monkeypatch, "allow:\n  commands: ['make check']\n")
    task = _requested(repo)
    commits = git(repo, "rev-list", "--count", "HEAD")
    first = taskfs("watch", "--once")
    assert first.code == 0
    assert "check_not_allowed" in first.stderr
    thread = taskfs("messages", task, "--json").json
    replies = [m for m in thread["messages"] if m["from"] == "watcher"]
    assert len(replies) == 1
    assert replies[0]["to"] == "builder"
    assert "check_not_allowed" in replies[0]["text"] or "did not run" in replies[0]["text"]
    assert int(git(repo, "rev-list", "--count", "HEAD")) == int(commits) + 1
    # A second watcher (a restart) has nothing left to answer.
    second = taskfs("watch", "--once")
    assert second.code == 0
    assert "check_not_allowed" not in second.stderr
    thread = taskfs("messages", task, "--json").json
    assert len([m for m in thread["messages"] if m["from"] == "watcher"]) == 1
    assert _state(task) == "working"
