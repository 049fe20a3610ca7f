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
    # An opaque id, as interlink's (it de-duplicates by msg_id alone: ids must not repeat
    # across ledgers), named by the `submitted` status.
    assert len(stored["msg_id"]) == 32
    assert int(stored["msg_id"], 16) >= 0
    assert (stored["task_id"], status["message"]) == (task, stored["msg_id"])
    # Its text is the envelope without the file's schema comment and without petnames.
    envelope_file = (repo / "tasks" / task / "envelope.yaml").read_text()
    assert envelope_file.startswith("# yaml-language-server")
    sent = yamlio.load(stored["text"].encode())
    assert "# yaml-language-server" not in stored["text"]
    assert "from" not in sent
    assert "to" not in sent
    assert sent == {
        k: v for k, v in yamlio.load(envelope_file.encode()).items() if k not in ("from", "to")
    }
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
    genuine_opening = yamlio.load(opening_file(repo, genuine).read_bytes())["msg_id"]
    copied = forged_task("forged-copy", genuine_opening)
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


def test_an_opening_signed_before_ids_were_opaque_keeps_verifying_and_exporting(
    repo: Path,
) -> None:
    """History: an opening stored as `<task>/envelope`, its text the envelope file's bytes (as
    taskfs wrote them before), is still the task's opening: it verifies, exports as signed, and
    the audit finds nothing."""
    from datetime import datetime, timezone

    from taskfs.api.tasks import submit as submitting
    from taskfs.api.tasks.filing import record_bytes
    from taskfs.core import messages as rules
    from taskfs.core.envelope import validate_envelope
    from taskfs.core.layout import format_time, stamped_name
    from taskfs.core.records import MessageRecord
    from taskfs.store import keys
    from taskfs.store.repository import Repository

    for agent in ("planner", "builder"):
        ok("keys", "new", "--agent", agent)
    store = Repository.open(repo)
    envelope_value, problems = validate_envelope(
        yamlio.load(write_envelope(repo / "old.yaml", id="old").read_bytes())
    )
    (repo / "old.yaml").unlink()
    assert envelope_value is not None
    assert not problems
    now = datetime.now(timezone.utc).replace(microsecond=0)
    pair = keys.load_private("agent", "planner")
    builder_key = keys.public_key(repo, "agent", "builder")
    assert pair is not None
    assert builder_key is not None
    text = submitting.envelope_bytes(store, envelope_value).decode()
    record = MessageRecord.model_validate(
        {
            "msg_id": "old/envelope",
            "task_id": "old",
            "from": "planner",
            "to": "builder",
            "at": format_time(now),
            "ts": int(now.timestamp()) * 1000,
            "kind": "message",
            "text": text,
        }
    )
    legacy = rules.signed(record, pair, builder_key)
    with store.writing() as writer:
        writer.add(
            store.task_rel("old", "messages", stamped_name(now)), record_bytes(legacy.to_document())
        )
        submitting.write_new_tasks(
            store, writer, [envelope_value], "planner", opened="old/envelope"
        )
    assert (repo / "tasks" / "old" / "envelope.yaml").read_text() == text
    [line] = taskfs("interlink", "export", "--task", "old").stdout.splitlines()
    exported = json.loads(line)
    assert (exported["msg_id"], exported["text"]) == ("old/envelope", text)
    assert exported["sig"] == legacy.sig
    assert ref.verify(exported)
    rows = taskfs("messages", "old", "--json").json["messages"]
    assert [(m["msg_id"], m["verified"]) for m in rows] == [("old/envelope", True)]
    assert findings() == []
