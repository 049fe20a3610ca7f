"""`show ID` answered ready-made (issue 19): whatever changes in a task's files, the stored
answer is printed only while it is exactly what the full reader would print.

Every case runs with no racy margin (`TASKFS_RACY_MARGIN_MS=0`), so the stored answer is
trusted at once and each change is one the identities must catch; the truth is the full
reader's answer with the stored answers deleted.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from taskfs.core import yamlio
from taskfs.readmodel import show as answers
from taskfs.store import keys
from tests.cli.test_evidence import check, make_task, new_runner
from tests.helpers import Result, git, taskfs


@pytest.fixture(autouse=True)
def _no_margin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TASKFS_RACY_MARGIN_MS", "0")


def _stored(repo: Path, task: str) -> Path:
    return repo / ".git" / "taskfs" / "cache" / "show" / task


def _shown(repo: Path, task: str) -> list[tuple[int, str]]:
    """`show` (text and --json) as printed now, and as the full reader prints it."""
    out: list[tuple[int, str]] = []
    for args in (("show", task, "--json"), ("show", task)):
        now = taskfs(*args)
        shutil.rmtree(repo / ".git" / "taskfs" / "cache" / "show", ignore_errors=True)
        truth: Result = taskfs(*args)
        assert (now.code, now.stdout) == (truth.code, truth.stdout), args
        out.append((now.code, now.stdout))
    return out


def test_every_change_to_a_task_is_seen(repo: Path) -> None:
    task = make_task(repo, "true")
    first = _shown(repo, task)
    assert _stored(repo, task).is_file()  # a valid task is stored ...
    assert taskfs("show", task, "--json").stdout == first[0][1]  # ... and printed from there
    assert answers.answer(task, True) == first[0][1].rstrip("\n")
    assert check(task).code == 0  # an evidence file
    assert "evidence" in _shown(repo, task)[1][1]
    assert taskfs("move", task, "input_required", "--agent", "builder").code == 0
    assert '"input_required"' in _shown(repo, task)[0][1]
    # Forbidden edits in place are seen too: the envelope, and a status file. `show` says
    # what HEAD holds, as `ls` and the decisions do, and names each edited file (issue 36).
    envelope = repo / "tasks" / task / "envelope.yaml"
    envelope.write_text(envelope.read_text().replace("Open the app", "Start the app"))
    text = _shown(repo, task)[1][1]
    assert "Start the app" not in text
    assert "ledger_file_uncommitted" in text
    assert f"tasks/{task}/envelope.yaml" in text
    status = sorted((repo / "tasks" / task / "status").iterdir())[-1]
    status.write_text(status.read_text().replace("builder", "mallory"))
    document = _shown(repo, task)[0][1]
    assert '"mallory"' not in document
    assert status.relative_to(repo).as_posix() in document
    # Once committed, the edits are HEAD's: shown as the task's.
    git(repo, "commit", "-qam", "edited in place")
    assert '"mallory"' in _shown(repo, task)[0][1]


def test_a_task_with_problems_is_never_stored(repo: Path) -> None:
    task = make_task(repo, "true")
    status = sorted((repo / "tasks" / task / "status").iterdir())[-1]
    status.write_text("state: [unclosed\n")
    found = _shown(repo, task)
    assert "ledger_file_uncommitted" in found[0][1]  # HEAD holds another file there
    assert not _stored(repo, task).exists()
    git(repo, "commit", "-qam", "broken in place")
    found = _shown(repo, task)
    assert "file_invalid" in found[0][1]
    assert not _stored(repo, task).exists()


def test_a_signed_evidence_file_follows_the_trust_list(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ci = new_runner("ci").json
    new_runner("mallory")
    task = make_task(repo, "true")
    monkeypatch.setenv("TASKFS_RUNNER", "mallory")
    assert check(task).json["signed"] is True
    monkeypatch.delenv("TASKFS_RUNNER")
    assert '"valid"' in _shown(repo, task)[0][1]
    trusted = tmp_path / "trusted-runners.yaml"
    assert answers.trust_list_path() == str(keys.trust_list_path())
    trusted.write_text(yamlio.dump({"runners": {"ci": ci["publicKey"]}}))
    monkeypatch.setenv("TASKFS_TRUSTED_RUNNERS", str(trusted))
    assert answers.trust_list_path() == str(keys.trust_list_path())
    assert '"invalid"' in _shown(repo, task)[0][1]


def test_a_name_that_is_no_task_id_is_never_looked_up(repo: Path) -> None:
    assert answers.answer("../../HEAD", True) is None
    assert taskfs("show", "../../HEAD", "--json").code != 0
