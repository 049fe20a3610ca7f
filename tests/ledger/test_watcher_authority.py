"""The watcher never completes by surprise (issue 16): completing stays the holder's act unless
the runner policy says `complete: true` (and then the watcher commits it, on the holder's
behalf), and a check the policy declines is answered once, with a committed message to the
sender, and run once the policy allows it."""

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
    # The holder completed it in the ledger; the commit is the watcher's, on its behalf.
    author, subject = git(repo, "log", "-1", "--format=%an <%ae>%n%s").splitlines()
    assert author == "watcher <watcher@taskfs>"
    assert subject == f"taskfs: {task} working -> completed by builder (committed by watcher)"
    trailers = git(repo, "log", "-1", "--format=%(trailers:only,unfold)").splitlines()
    assert "Taskfs-Agent: watcher" in trailers
    assert "Taskfs-On-Behalf-Of: builder" in trailers
    history = taskfs("log", task, "--json").json["history"]
    result = next(m for m in taskfs("messages", task, "--json").json["messages"])
    assert (history[-1]["by"], history[-1]["message"]) == ("builder", result["msg_id"])
    # audit accepts exactly that: the watcher's commit of a completion its holder asked for.
    assert taskfs("audit", "--json").json["ok"] is True


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
    # A second watcher (a restart) under the same policy still does not run it, and does not
    # tell the sender again.
    second = taskfs("watch", "--once")
    assert second.code == 0
    assert "check_not_allowed" in second.stderr
    thread = taskfs("messages", task, "--json").json
    assert len([m for m in thread["messages"] if m["from"] == "watcher"]) == 1
    assert int(git(repo, "rev-list", "--count", "HEAD")) == int(commits) + 1
    assert _state(task) == "working"
    # The operator allows the command: the next watcher runs the request it declined.
    _policy(tmp_path, monkeypatch, f"complete: true\nallow:\n  commands: ['{COMMAND}']\n")
    third = taskfs("watch", "--once")
    assert third.code == 0, third.stderr
    assert "verdict=pass" in third.stderr
    assert _state(task) == "completed"
    # And once answered by evidence, it is not run again.
    fourth = taskfs("watch", "--once")
    assert "checked" not in fourth.stderr


def test_a_completion_committed_for_a_holder_with_a_key_rests_on_its_signed_result(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # builder signs what it sends; the watcher (a CI runner) has no key of builder's.
    for agent in ("builder", "planner"):
        assert taskfs("keys", "new", "--agent", agent).code == 0
    task = _requested(repo)
    _policy(tmp_path, monkeypatch, f"complete: true\nallow:\n  commands: ['{COMMAND}']\n")
    elsewhere = tmp_path / "runner-keys"
    elsewhere.mkdir()
    monkeypatch.setenv("TASKFS_KEY_DIR", str(elsewhere))
    assert taskfs("watch", "--once").code == 0
    assert _state(task) == "completed"
    completion = taskfs("log", task, "--json").json["history"][-1]
    assert "sig" not in completion  # the watcher cannot sign as builder
    # The signed result it answers vouches for it, and the watcher's authorship is expected.
    audit = taskfs("audit", "--json").json
    assert audit["ok"] is True, audit["findings"]
