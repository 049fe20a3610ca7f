"""An archive record is a ledger file (issue 35, items 2-4): its rows are checked against the
state the archived commit held, it is never edited or deleted, and a message that raced an
archive on another clone is kept where the archived task's `messages` and `log` show it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from taskfs.store import readmodel_store
from tests.cli.test_sync import clones, sync
from tests.helpers import commit_as, git, submit, taskfs
from tests.remotes import make_remote, new_task

ROW = [
    "id",
    "state",
    "from",
    "to",
    "contextID",
    "holder",
    "superseded",
    "head",
    "headBy",
    "headAt",
    "length",
    "dependsOn",
    "parent",
    "command",
    "follows",
]


def _canceled_with_dependent(repo: Path) -> tuple[str, str]:
    """`ts` canceled by its sender, and `td` depending on it."""
    ts = submit(repo, id="ts", filesAndInterfaces=["src/ts/**"])
    td = submit(repo, id="td", dependsOn=[ts], filesAndInterfaces=["src/td/**"])
    moved = taskfs("move", ts, "canceled", "--agent", "planner", "--reason", "not needed")
    assert moved.code == 0, moved.stdout
    return ts, td


def _findings(cwd: Path | None = None) -> list[dict[str, str]]:
    result = taskfs("audit", "--json", cwd=cwd)
    assert result.code in (0, 1), result.stdout + result.stderr
    return list(result.json["findings"])


def _codes(cwd: Path | None = None) -> set[tuple[str, str]]:
    return {(f["code"], f["path"]) for f in _findings(cwd)}


def test_an_archive_row_that_lies_about_the_state_decides_nothing_and_is_named(
    repo: Path,
) -> None:
    """One commit, authored as the operator, removes a canceled task and adds an archive
    record whose row says `completed`."""
    ts, td = _canceled_with_dependent(repo)
    parent = git(repo, "rev-parse", "HEAD")
    head = sorted(p.name for p in (repo / "tasks" / ts / "status").iterdir())[-1]
    row = [ts, "completed", "planner", "builder", "auth-hardening", None, 0,
           head.replace("canceled", "completed"), "planner", "2026-01-01T00:00:00.000000Z", 2,
           [], None, "test -f src/auth/login.py", None]  # fmt: skip
    rel = ".taskfs/archive/20260101T000000.000000Z-aaaaaaaa.yaml"
    text = (
        f'archive: 1\nby: "operator"\nat: "2026-01-01T00:00:00.000000Z"\nolderThan: "0"\n'
        f'commit: "{parent}"\ncolumns: {json.dumps(ROW)}\ntasks:\n- {json.dumps(row)}\n'
    )
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(text)
    git(repo, "rm", "-q", "-r", f"tasks/{ts}")
    commit_as(repo, "operator", "archive", rel)
    # The row's word decides nothing: ts was canceled in the commit the archive took it from.
    claimed = taskfs("claim", td, "--agent", "builder", "--json")
    assert (claimed.code, claimed.codes) == (1, ["dependencies_unresolved"])
    assert taskfs("show", ts, "--json").json["state"] == "canceled"
    found = [f for f in _findings() if f["path"] == rel]
    assert [f["code"] for f in found] == ["archive_row_false"]
    assert found[0]["rule"] == "archive"
    assert found[0]["id"] == ts
    assert (found[0]["said"], found[0]["held"]) == ("completed", "canceled")


def test_an_archive_record_edited_later_is_named_and_decides_nothing(repo: Path) -> None:
    ts, td = _canceled_with_dependent(repo)
    archived = taskfs("archive", "--older-than", "0", "--json")
    assert archived.json["archived"] == [ts]
    assert _findings() == []
    rel = archived.json["files"][0]
    path = repo / rel
    path.write_text(path.read_text().replace('"canceled"', '"completed"'))
    commit_as(repo, "operator", "fix the archive", rel)
    assert ("ledger_file_edited", rel) in _codes()
    assert taskfs("claim", td, "--agent", "builder", "--json").codes == ["dependencies_unresolved"]
    assert taskfs("show", ts, "--json").json["state"] == "canceled"


def test_an_archive_record_deleted_later_is_named_and_its_ids_stay_taken(repo: Path) -> None:
    ts, _td = _canceled_with_dependent(repo)
    archived = taskfs("archive", "--older-than", "0", "--json")
    rel = archived.json["files"][0]
    git(repo, "rm", "-q", rel)
    commit_as(repo, "mallory", "tidy up", ".taskfs")
    assert ("ledger_file_deleted", rel) in _codes()
    again = submit_refused(repo, ts)
    assert (again.code, again.codes) == (1, ["task_exists"])


def submit_refused(repo: Path, task_id: str):  # type: ignore[no-untyped-def]
    from tests.helpers import write_envelope

    path = write_envelope(repo.parent / "again.yaml", id=task_id)
    return taskfs("new", str(path), "--json")


def test_messages_and_log_of_an_archived_task_answer(repo: Path) -> None:
    ts, _td = _canceled_with_dependent(repo)
    sent = taskfs("send", ts, "why was it canceled?", "--agent", "builder", "--to", "planner")
    assert sent.code == 0, sent.stdout + sent.stderr
    assert taskfs("archive", "--older-than", "0").code == 0
    shown = taskfs("messages", ts, "--json")
    assert shown.code == 0, shown.stdout
    assert [m["text"] for m in shown.json["messages"]] == ["why was it canceled?"]


def test_a_message_that_raced_an_archive_on_another_clone_is_kept_and_shown(
    tmp_path: Path,
) -> None:
    remote = make_remote(tmp_path)
    a, b = clones(remote, "a", "b")
    check = {"passFailCommand": "true", "endToEndVerification": "it runs"}
    task = new_task(a, id="raced", filesAndInterfaces=["src/raced/**"], acceptanceCheck=check)
    later = new_task(a, id="later", dependsOn=["raced"], filesAndInterfaces=["src/later/**"])
    assert taskfs("claim", task, "--agent", "builder", cwd=a).code == 0
    assert taskfs("check", task, "--agent", "builder", cwd=a).code == 0
    assert taskfs("complete", task, "--agent", "builder", cwd=a).code == 0
    sync(a)
    sync(b)
    # a archives and publishes; b, not yet synced, writes on the task.
    assert taskfs("archive", "--older-than", "0", cwd=a).code == 0
    sync(a)
    said = taskfs("send", task, "was it moot?", "--agent", "builder", "--to", "planner", cwd=b)
    assert said.code == 0, said.stdout + said.stderr
    sync(b)
    sync(a)
    for where in (a, b):
        assert _findings(where) == [], where
        assert task in [
            t["id"] for t in taskfs("ls", "--archived", "--json", cwd=where).json["tasks"]
        ]
        shown = taskfs("messages", task, "--json", cwd=where)
        assert shown.code == 0, shown.stdout
        assert [m["text"] for m in shown.json["messages"]] == ["was it moot?"]
        assert "was it moot?" in taskfs("log", task, cwd=where).stdout
        assert taskfs("show", task, "--json", cwd=where).json["state"] == "completed"
        assert later in [t["id"] for t in taskfs("ready", "--json", cwd=where).json["tasks"]]
        assert taskfs("validate", "--json", cwd=where).json["ok"] is True
        # So says a read model built afresh.
        readmodel_store.close()
        shutil.rmtree(Path(git(where, "rev-parse", "--absolute-git-dir")) / "taskfs")
        assert task in [
            t["id"] for t in taskfs("ls", "--archived", "--json", cwd=where).json["tasks"]
        ]
        assert later in [t["id"] for t in taskfs("ready", "--json", cwd=where).json["tasks"]]
    assert taskfs("claim", later, "--agent", "builder", cwd=b).code == 0
