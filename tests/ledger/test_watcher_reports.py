"""The watcher's refusal reports never collide with a task or another drop's report, and a
collision never crashes the watcher (issue 16)."""

from __future__ import annotations

from pathlib import Path

from taskfs.core import yamlio
from tests.helpers import submit, taskfs, taskfs_process, write_envelope


def _ids(repo: Path) -> list[str]:
    return [t["id"] for t in taskfs("ls", "--json").json["tasks"]]


def test_a_report_never_lands_on_a_task_named_like_it(repo: Path) -> None:
    submit(repo, id="y.refused.yaml", filesAndInterfaces=["a/**"])
    submit(repo, id="y.yaml.refused", filesAndInterfaces=["b/**"])
    tasks = repo / "tasks"
    (tasks / "y.yaml").write_text("objective: [\n")
    for _ in range(2):  # every run, not only the first
        watched = taskfs_process("watch", "--once", cwd=repo)
        assert watched.code == 0, watched.stderr
        assert "Traceback" not in watched.stderr
    report = yamlio.load((tasks / "y+refused.yaml").read_bytes())
    assert [e["code"] for e in report["errors"]] == ["yaml_invalid"]
    assert (tasks / "y.refused.yaml" / "envelope.yaml").is_file()
    assert sorted(_ids(repo)) == ["y.refused.yaml", "y.yaml.refused"]
    validated = [f["path"] for f in taskfs("validate", "--json").json["files"]]
    assert "tasks/y+refused.yaml" not in validated  # a report is not a ledger file
    assert "tasks/y.refused.yaml/envelope.yaml" in validated


def test_report_names_cannot_be_task_ids(repo: Path) -> None:
    envelope = write_envelope(repo / "e.yaml", id="y+refused.yaml")
    made = taskfs("new", str(envelope), "--json")
    assert made.codes == ["invalid_task_id"]


def test_something_in_the_reports_place_is_named_not_a_crash(repo: Path) -> None:
    tasks = repo / "tasks"
    (tasks / "z+refused.yaml").mkdir()
    (tasks / "z.yaml").write_text("objective: [\n")
    write_envelope(tasks / "fine.yaml", id="fine")
    watched = taskfs_process("watch", "--once", cwd=repo)
    assert "Traceback" not in watched.stderr
    assert watched.code == 1  # not everything was handled: the report could not be written
    assert "cannot be written" in watched.stderr
    assert "fine" in _ids(repo)  # the other drops were handled


def test_folder_drops_and_older_reports(repo: Path) -> None:
    tasks = repo / "tasks"
    (tasks / "q").mkdir()
    (tasks / "q" / "envelope.yaml").write_text("objective: [\n")
    write_envelope(tasks / "w.yaml", id="w")
    (tasks / "w.refused.yaml").write_text("# an older watcher's report\n")
    watched = taskfs_process("watch", "--once", cwd=repo)
    assert watched.code == 0, watched.stderr
    assert (tasks / "q" / "envelope+refused.yaml").is_file()
    assert "w" in _ids(repo)
    assert not (tasks / "w.refused.yaml").exists()
