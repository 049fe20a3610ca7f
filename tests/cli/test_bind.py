"""`taskfs bind` through the command line: the grant, the ledger's place, the file untouched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import git, submit, taskfs


def write_ledger(path: Path, text: str = "agents:\n  builder: [bash, edit, pytest]\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = write_ledger(tmp_path / "outside" / "ledger.yaml")
    monkeypatch.setenv("TASKFS_LEDGER", str(path))
    return path


def test_bind_grants_the_request_within_the_ledger(repo: Path, ledger: Path) -> None:
    task = submit(repo, toolsAllowed=["web", "edit", "bash"])
    envelope = repo / "tasks" / task / "envelope.yaml"
    before = envelope.read_bytes()
    result = taskfs("bind", task, "--agent", "builder", "--json")
    assert result.code == 0, result.stdout + result.stderr
    assert result.json["ok"] is True
    assert result.json["id"] == task
    assert result.json["agent"] == "builder"
    assert result.json["toolsGranted"] == ["edit", "bash"]
    assert result.json["envelope"]["toolsGranted"] == ["edit", "bash"]
    assert result.json["envelope"]["toolsAllowed"] == ["web", "edit", "bash"]
    assert envelope.read_bytes() == before
    assert git(repo, "status", "--porcelain") == ""


def test_an_empty_or_absent_request_or_ledger_entry_grants_nothing(
    repo: Path, ledger: Path
) -> None:
    no_request = submit(repo, filesAndInterfaces=["a/**"])
    assert taskfs("bind", no_request, "--agent", "builder", "--json").json["toolsGranted"] == []
    empty = submit(repo, filesAndInterfaces=["b/**"], toolsAllowed=[])
    assert taskfs("bind", empty, "--agent", "builder", "--json").json["toolsGranted"] == []
    asked = submit(repo, filesAndInterfaces=["c/**"], toolsAllowed=["bash"])
    assert taskfs("bind", asked, "--agent", "reviewer", "--json").json["toolsGranted"] == []
    ledger.unlink()
    assert taskfs("bind", asked, "--agent", "builder", "--json").json["toolsGranted"] == []


def test_a_ledger_inside_the_working_tree_is_refused(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = submit(repo, toolsAllowed=["bash"])
    inside = write_ledger(repo / "tasks" / "ledger.yaml")
    monkeypatch.setenv("TASKFS_LEDGER", str(inside))
    assert taskfs("bind", task, "--agent", "builder", "--json").codes == ["ledger_unsafe"]
    monkeypatch.setenv("TASKFS_LEDGER", str(repo / "notes" / "ledger.yaml"))
    assert taskfs("bind", task, "--agent", "builder", "--json").codes == ["ledger_unsafe"]

    link = tmp_path / "link.yaml"
    os.symlink(inside, link)
    monkeypatch.setenv("TASKFS_LEDGER", str(link))
    assert taskfs("bind", task, "--agent", "builder", "--json").codes == ["ledger_unsafe"]

    folder_link = repo / "outside-link"
    real = write_ledger(tmp_path / "real" / "ledger.yaml")
    os.symlink(real.parent, folder_link)
    monkeypatch.setenv("TASKFS_LEDGER", str(folder_link / "ledger.yaml"))
    assert taskfs("bind", task, "--agent", "builder", "--json").codes == ["ledger_unsafe"]


def test_the_default_ledger_lives_in_the_user_config(repo: Path) -> None:
    task = submit(repo, toolsAllowed=["bash", "web"])
    write_ledger(Path(os.environ["XDG_CONFIG_HOME"]) / "taskfs" / "ledger.yaml")
    result = taskfs("bind", task, "--agent", "builder", "--json")
    assert result.json["toolsGranted"] == ["bash"]


def test_a_malformed_ledger_is_named(repo: Path, ledger: Path) -> None:
    task = submit(repo, toolsAllowed=["bash"])
    write_ledger(ledger, "agents:\n  builder: bash\n")
    assert taskfs("bind", task, "--agent", "builder", "--json").codes == ["file_invalid"]
    write_ledger(ledger, "agents: {builder: [bash]}\nextra: 1\n")
    assert taskfs("bind", task, "--agent", "builder", "--json").codes == ["file_invalid"]
    assert taskfs("bind", "nope", "--agent", "builder", "--json").codes == ["task_not_found"]
