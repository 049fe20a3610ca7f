"""`taskfs archive` (contract section 12, issue 31): terminal tasks older than an age leave the
working tree in one audited commit; history keeps them, and every command that names a task
still finds an archived one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from taskfs.store import index, readmodel_store
from taskfs.store.repository import Repository
from tests.helpers import check, configure, git, submit, taskfs, write_envelope

TRUE = {"passFailCommand": "true", "endToEndVerification": "it runs"}


def _done(repo: Path, task_id: str, **changes: object) -> str:
    """A task taken through claim, check and complete."""
    task = submit(repo, id=task_id, acceptanceCheck=TRUE, **changes)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    check(task)
    assert taskfs("complete", task, "--agent", "builder").code == 0
    return task


def _ledger(repo: Path) -> None:
    _done(repo, "finished", filesAndInterfaces=["src/finished/**"])
    submit(repo, id="refused", filesAndInterfaces=["src/refused/**"])
    assert taskfs("refuse", "refused", "--agent", "builder", "--reason", "no").code == 0
    submit(repo, id="waiting", filesAndInterfaces=["src/waiting/**"], dependsOn=["finished"])
    submit(repo, id="working", filesAndInterfaces=["src/working/**"])
    assert taskfs("claim", "working", "--agent", "builder").code == 0


def _ids(result_json: dict[str, object]) -> list[str]:
    tasks = result_json["tasks"]
    assert isinstance(tasks, list)
    return [t["id"] for t in tasks]


def test_terminal_tasks_leave_the_tree_and_are_still_found(repo: Path) -> None:
    _ledger(repo)
    shown_before = taskfs("show", "finished", "--json").json
    archived = taskfs("archive", "--older-than", "0", "--json")
    assert archived.code == 0, archived.stdout
    assert archived.json["archived"] == ["finished", "refused"]
    assert not (repo / "tasks" / "finished").exists()
    assert git(repo, "status", "--porcelain") == ""
    # One commit, by the operator, holding the removal and the archive's file.
    assert git(repo, "log", "-1", "--format=%an") == "operator"
    assert git(repo, "show", "--stat", "--format=", "HEAD").count("tasks/finished/") >= 1
    assert _ids(taskfs("ls", "--json").json) == ["waiting", "working"]
    listed = taskfs("ls", "--archived", "--json")
    assert _ids(listed.json) == ["finished", "refused"]
    assert all(t["archived"] is True for t in listed.json["tasks"])
    assert listed.stdout == taskfs("--lang", "en", "ls", "--archived", "--json").stdout
    assert _ids(taskfs("ls", "--archived", "--state", "completed", "--json").json) == ["finished"]
    # show and log read it from the commit that archived it.
    shown = taskfs("show", "finished", "--json")
    assert shown.code == 0, shown.stdout
    assert shown.json["archived"] is True
    assert shown.json["envelope"] == shown_before["envelope"]
    assert shown.json["state"] == "completed"
    assert [e["verdict"] for e in shown.json["evidence"]] == ["pass"]
    assert "(archived)" in taskfs("show", "finished").stdout
    logged = taskfs("log", "finished", "--json")
    assert logged.code == 0, logged.stdout
    assert "completed" in logged.stdout
    assert taskfs("show", "finished", "--format", "markdown").code == 0
    # A dependency on an archived completed task stays satisfied.
    assert _ids(taskfs("ready", "--json").json) == ["waiting"]
    assert taskfs("claim", "waiting", "--agent", "builder").code == 0
    # Its id stays taken.
    path = write_envelope(repo.parent / "again.yaml", id="finished")
    assert taskfs("new", str(path), "--json").codes == ["task_exists"]
    # Audit calls none of it a deleted ledger file; review names the archive.
    audited = taskfs("audit", "--json")
    assert audited.json["findings"] == [], audited.stdout
    reviewed = taskfs("review", "HEAD~2..HEAD~1", "--json").json
    assert [(t["id"], t["state"]) for t in reviewed["archived"]] == [
        ("finished", "completed"),
        ("refused", "rejected"),
    ]
    assert "### Archived" in taskfs("review", "HEAD~2..HEAD~1").stdout


def test_the_archive_is_said_in_the_readers_language(repo: Path) -> None:
    _done(repo, "finished", filesAndInterfaces=["src/finished/**"])
    assert taskfs("archive", "--older-than", "0").stdout == "archived 1 task older than 0\n"
    reviewed = taskfs("--lang", "tr", "review", "HEAD~1..HEAD").stdout
    assert "### Arşivlenenler" in reviewed
    assert "1 görev arşivlendi" in reviewed
    assert "archived" not in reviewed


def test_only_tasks_old_enough_are_archived(repo: Path) -> None:
    _ledger(repo)
    nothing = taskfs("archive", "--json")  # the default age: 30 days
    assert nothing.code == 0
    assert nothing.json["archived"] == []
    assert nothing.json["commit"] is None
    assert nothing.json["olderThan"] == "30d"
    assert taskfs("archive", "--older-than", "1h", "--json").json["archived"] == []
    bad = taskfs("archive", "--older-than", "soon", "--json")
    assert (bad.code, bad.codes) == (1, ["invalid_value"])


def test_only_those_the_settings_name_may_archive(repo: Path) -> None:
    _ledger(repo)
    refused = taskfs("archive", "--older-than", "0", "--agent", "builder", "--json")
    assert (refused.code, refused.codes) == (1, ["agent_not_allowed"])
    assert (repo / "tasks" / "finished").exists()
    configure(repo, "keeper archives", archive={"by": ["keeper"]})
    assert taskfs("archive", "--older-than", "0", "--json").codes == ["agent_not_allowed"]
    done = taskfs("archive", "--older-than", "0", "--agent", "keeper", "--json")
    assert done.json["archived"] == ["finished", "refused"]
    assert taskfs("audit", "--json").json["findings"] == []


def test_a_task_holding_uncommitted_files_stays(repo: Path) -> None:
    _ledger(repo)
    (repo / "tasks" / "finished" / "evidence" / "extra.yaml").write_text("x: 1\n")
    done = taskfs("archive", "--older-than", "0", "--json")
    assert done.json["archived"] == ["refused"]
    assert done.json["skipped"] == ["finished"]
    assert (repo / "tasks" / "finished" / "evidence" / "extra.yaml").exists()


def test_audit_names_an_archive_that_took_an_open_task_or_was_not_allowed(repo: Path) -> None:
    _ledger(repo)
    assert taskfs("archive", "--older-than", "0").code == 0
    record = next((repo / ".taskfs" / "archive").iterdir())
    # By hand: an archive file naming the working task, written as if by the operator.
    forged = record.read_text().replace('"finished", "completed"', '"working", "completed"')
    (record.parent / "20300101T000000.000000Z-aaaaaaaa.yaml").write_text(forged)
    git(repo, "rm", "-q", "-r", "tasks/working")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "archive by hand")  # authored by Test User
    codes = {(f["code"], f["path"]) for f in taskfs("audit", "--json").json["findings"]}
    assert ("archive_not_terminal", "tasks/working") in codes
    assert ("archive_unauthorized", ".taskfs/archive/20300101T000000.000000Z-aaaaaaaa.yaml") in {
        (code, path) for code, path in codes
    }
    assert not any(code == "ledger_file_deleted" for code, _path in codes)
    # A folder removed with no archive naming it is a deleted ledger file, as ever.
    git(repo, "rm", "-q", "-r", "tasks/waiting")
    git(repo, "commit", "-q", "-m", "gone")
    codes = {(f["code"], f["path"]) for f in taskfs("audit", "--json").json["findings"]}
    assert ("ledger_file_deleted", "tasks/waiting/envelope.yaml") in codes


def test_clones_agree_on_what_is_archived(repo: Path) -> None:
    _ledger(repo)
    other = repo.parent / "other"
    git(repo.parent, "clone", "-q", str(repo), str(other))
    for line in (["ls", "--json"], ["ready", "--json"]):
        taskfs(*line, cwd=other)  # the other clone's read model, settled before the pull
    assert taskfs("archive", "--older-than", "0").code == 0
    git(other, "pull", "-q", "--ff-only", str(repo), "main")
    for line in (["ls", "--json"], ["ls", "--archived", "--json"], ["ready", "--json"]):
        assert taskfs(*line, cwd=other).stdout == taskfs(*line).stdout, line
    assert taskfs("show", "refused", "--json", cwd=other).json["state"] == "rejected"
    # What each clone's read model says is what one built from nothing says.
    for where in (repo, other):
        kept = dict(index.summaries(Repository.open(where)).items())
        readmodel_store.close()
        shutil.rmtree(Path(git(where, "rev-parse", "--absolute-git-dir")) / "taskfs" / "cache")
        assert dict(index.summaries(Repository.open(where)).items()) == kept


@pytest.mark.parametrize("where", ["archived", "kept"])
def test_archived_rows_survive_a_rebuild_of_the_store(repo: Path, where: str) -> None:
    _ledger(repo)
    assert taskfs("archive", "--older-than", "0").code == 0
    lines = (["ls", "--archived", "--json"], ["ready", "--json"])
    before = [taskfs(*line).stdout for line in lines]
    if where == "archived":
        readmodel_store.close()
        shutil.rmtree(repo / ".git" / "taskfs" / "cache")
    after = [taskfs(*line).stdout for line in lines]
    assert after == before
