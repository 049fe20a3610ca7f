"""An archived task's id stays taken at every door that makes a task id, as `new` refuses it (the
team day: `intake open --id X` and a watcher's drop took an archived task's id, and `retry`
named its new task after one): each is refused `task_exists`, marked `archived`, and nothing
is written."""

from __future__ import annotations

from pathlib import Path

from taskfs.core import yamlio
from tests.helpers import ENVELOPE, git, submit, taskfs, write_envelope


def _archive(repo: Path, task_id: str) -> None:
    """Task `task_id`, canceled, then archived: gone from the working tree, kept by history."""
    submit(repo, id=task_id, filesAndInterfaces=[f"src/{task_id}/**"])
    moved = taskfs("move", task_id, "canceled", "--agent", "planner", "--reason", "not needed")
    assert moved.code == 0, moved.stdout
    done = taskfs("archive", "--older-than", "0", "--json")
    assert done.json["archived"] == [task_id], done.stdout
    assert not (repo / "tasks" / task_id).exists()


def _unchanged(repo: Path, head: str) -> None:
    assert git(repo, "rev-parse", "HEAD") == head
    assert taskfs("audit", "--json").json["findings"] == []


def _refused_as_archived(result_json: dict[str, object], task_id: str) -> None:
    errors = result_json["errors"]
    assert isinstance(errors, list)
    assert [e["code"] for e in errors] == ["task_exists"]
    assert (errors[0]["id"], errors[0]["archived"]) == (task_id, True)


def test_a_request_cannot_open_on_an_archived_id(repo: Path) -> None:
    _archive(repo, "mul")
    head = git(repo, "rev-parse", "HEAD")
    opened = taskfs("intake", "open", "multiply", "--id", "mul", "--agent", "planner", "--json")
    assert opened.code == 1, opened.stdout
    _refused_as_archived(opened.json, "mul")
    assert not (repo / "tasks" / "mul").exists()
    _unchanged(repo, head)
    # `new` says the same of the same id: one rule.
    again = taskfs("new", str(write_envelope(repo.parent / "mul.yaml", id="mul")), "--json")
    _refused_as_archived(again.json, "mul")


def _report(path: Path) -> dict[str, object]:
    report = yamlio.load(
        path.with_name(path.name.removesuffix(".yaml") + "+refused.yaml").read_bytes()
    )
    assert isinstance(report, dict)
    return report


def test_a_dropped_envelope_cannot_take_an_archived_id(repo: Path) -> None:
    _archive(repo, "mul")
    head = git(repo, "rev-parse", "HEAD")
    dropped = repo / "tasks" / "again.yaml"
    dropped.write_text(yamlio.dump({**ENVELOPE, "id": "mul", "filesAndInterfaces": ["src/m/**"]}))
    watched = taskfs("watch", "--once")
    assert watched.code == 0, watched.stderr
    _refused_as_archived(_report(dropped), "mul")
    assert not (repo / "tasks" / "mul").exists()
    assert git(repo, "rev-parse", "HEAD") == head


def test_an_envelope_dropped_in_an_archived_tasks_folder_is_refused(repo: Path) -> None:
    _archive(repo, "mul")
    head = git(repo, "rev-parse", "HEAD")
    placed = repo / "tasks" / "mul" / "envelope.yaml"
    placed.parent.mkdir()
    placed.write_text(yamlio.dump({**ENVELOPE, "filesAndInterfaces": ["src/m/**"]}))
    watched = taskfs("watch", "--once")
    assert watched.code == 0, watched.stderr
    _refused_as_archived(_report(placed), "mul")
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain", "--", "tasks/mul/status") == ""


def test_a_retry_never_names_its_task_after_an_archived_one(repo: Path) -> None:
    _archive(repo, "fix-r1")  # an unrelated task, once
    submit(repo, id="fix", filesAndInterfaces=["src/fix/**"])
    assert taskfs("refuse", "fix", "--agent", "builder", "--reason", "not now").code == 0
    retried = taskfs("retry", "fix", "--agent", "planner", "--json")
    assert retried.code == 0, retried.stdout
    assert retried.json["newId"] not in ("fix-r1", "fix")
    assert taskfs("show", retried.json["newId"], "--json").json["state"] == "submitted"
    assert taskfs("audit", "--json").json["findings"] == []
    assert taskfs("show", "fix-r1", "--json").json["archived"] is True


def test_a_peer_cannot_open_a_task_on_an_archived_id(repo: Path) -> None:
    from tests.cli.test_wire import import_lines, peer_says, setup_peer_and_builder
    from tests.mcp.test_server import envelope

    _archive(repo, "mul")  # planner's, before planner became a peer known by its key
    builder = setup_peer_and_builder()
    head = git(repo, "rev-parse", "HEAD")  # the keys committed
    whole = peer_says(builder, text=envelope(**{"from": None, "to": None}), task_id="mul")
    words = peer_says(builder, text="multiply two numbers", task_id="mul")
    code, doc = import_lines(whole, words)
    assert code == 1, doc
    assert [line["code"] for line in doc["lines"]] == ["task_exists", "task_exists"]
    # Nothing of the ledger's tasks: the peer is answered why (a conversation file), no more.
    assert git(repo, "diff", "--name-only", head, "HEAD", "--", "tasks") == ""
    assert not (repo / "tasks" / "mul").exists()
