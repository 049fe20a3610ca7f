"""A task's opening (interlink's first message: the envelope, signed by its sender) is kept
with the task, named by its `submitted` status: exported as stored from any clone, and what
audit accepts as vouching for a `submitted` that its sender could not sign here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from taskfs.core import yamlio
from tests import interlink_ref as ref
from tests.cli.test_authority import findings, forge
from tests.cli.test_wire import import_lines, ok, peer_says, setup_peer_and_builder
from tests.helpers import commit_as, git, submit, taskfs, write_envelope
from tests.mcp.test_server import envelope


def opening_file(repo: Path, task: str) -> Path:
    [path] = sorted((repo / "tasks" / task / "messages").iterdir())
    return path


def test_an_opening_exports_from_another_clone_exactly_as_its_sender_signed_it(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for agent in ("planner", "builder"):
        ok("keys", "new", "--agent", agent)
    task = submit(repo)
    stored = yamlio.load(opening_file(repo, task).read_bytes())
    status = yamlio.load(next((repo / "tasks" / task / "status").iterdir()).read_bytes())
    assert (stored["msg_id"], stored["task_id"], status["message"]) == (
        f"{task}/envelope",
        task,
        f"{task}/envelope",
    )
    assert stored["text"] == (repo / "tasks" / task / "envelope.yaml").read_text()
    here = taskfs("interlink", "export", "--task", task)
    assert here.code == 0, here.stderr
    # Another machine: a clone, and a home without any private key.
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    home = tmp_path / "elsewhere"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    there = taskfs("interlink", "export", "--task", task, cwd=clone)
    assert there.code == 0, there.stderr
    assert there.stdout == here.stdout
    [line] = there.stdout.splitlines()
    assert ref.verify(json.loads(line))
    assert findings(clone) == []


def test_a_recipient_without_a_key_still_gets_its_task_without_a_stored_opening(
    repo: Path,
) -> None:
    ok("keys", "new", "--agent", "planner")
    task = submit(repo)
    assert not (repo / "tasks" / task / "messages").exists()
    status = yamlio.load(next((repo / "tasks" / task / "status").iterdir()).read_bytes())
    assert "message" not in status
    assert findings() == []


def test_a_task_a_peers_opening_opened_audits_clean(repo: Path) -> None:
    builder = setup_peer_and_builder()
    opening = peer_says(builder, text=envelope(**{"from": None, "to": None}), task_id="afar")
    code, doc = import_lines(opening)
    assert code == 0, doc
    status = yamlio.load(next((repo / "tasks" / "afar" / "status").iterdir()).read_bytes())
    assert (status["by"], status["message"]) == ("planner", doc["lines"][0]["msg_id"])
    assert "sig" not in status  # planner's key is on planner's machine
    assert findings() == []
    ok("send", "afar", "On it.", "--agent", "builder", "--status", "update")
    assert findings() == []


def test_a_submitted_by_a_keyed_agent_without_its_opening_is_unauthorized(repo: Path) -> None:
    for agent in ("planner", "builder"):
        ok("keys", "new", "--agent", agent)
    genuine = submit(repo)
    assert findings() == []

    def forged_task(task: str, message: str | None) -> str:
        folder = repo / "tasks" / task
        (folder / "status").mkdir(parents=True)
        write_envelope(folder / "envelope.yaml", id=task, filesAndInterfaces=[f"src/{task}.py"])
        commit_as(repo, "planner", "envelope", str(folder / "envelope.yaml"))
        extra = f"message: {message}\n" if message else ""
        name = "0001-submitted-aaaaaaaa.yaml"
        return forge(repo, task, name, state="submitted", by="planner", prev=None, extra=extra)

    bare = forged_task("forged-bare", None)
    # The genuine task's opening copied beside a forged task: it opens another task.
    (repo / "tasks" / "forged-copy" / "messages").mkdir(parents=True)
    shutil.copy(opening_file(repo, genuine), repo / "tasks" / "forged-copy" / "messages")
    commit_as(repo, "planner", "copied", "tasks/forged-copy/messages")
    copied = forged_task("forged-copy", f"{genuine}/envelope")
    named = findings()
    assert ("transition_unauthorized", bare) in named
    assert ("transition_unauthorized", copied) in named
    assert not [f for f in named if genuine in f[1]]


def test_a_peers_opening_whose_envelope_was_altered_vouches_for_nothing(repo: Path) -> None:
    builder = setup_peer_and_builder()
    opening = peer_says(builder, text=envelope(**{"from": None, "to": None}), task_id="afar")
    assert import_lines(opening)[0] == 0
    path = repo / "tasks" / "afar" / "envelope.yaml"
    path.write_text(path.read_text().replace("Fix the login", "Delete the login"))
    commit_as(repo, "planner", "changed", "tasks/afar/envelope.yaml")
    status = "tasks/afar/status/" + next((repo / "tasks" / "afar" / "status").iterdir()).name
    assert ("transition_unauthorized", status) in findings()
