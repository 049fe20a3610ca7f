"""Files that arrive for a mirrored task land only where the task owns files."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskfs.api.sync import mirror
from taskfs.errors import TaskfsError
from taskfs.store.repository import Repository
from tests.helpers import git, submit


def test_only_owned_paths_are_written_and_committed_as_the_recipient(repo: Path) -> None:
    task = submit(repo)
    head = git(repo, "rev-parse", "HEAD")
    for bad in (
        "src/other.py",
        "tasks/x/status/0009-completed.yaml",
        "../escape.py",
        ".git/config",
    ):
        with pytest.raises(TaskfsError) as refused:
            mirror.record_work(
                Repository.open(repo), task, "builder", {bad: b"x", "src/auth/login.py": b"ok"}
            )
        assert refused.value.codes == ["files_and_interfaces_invalid"], bad
    assert git(repo, "rev-parse", "HEAD") == head
    assert not (repo / "src/auth/login.py").exists()  # all or nothing

    changed, commit = mirror.record_work(
        Repository.open(repo), task, "builder", {"src/auth/login.py": b"ok\n"}
    )
    assert changed == ["src/auth/login.py"]
    assert git(repo, "log", "-1", "--format=%an %H") == f"builder {commit}"
    assert git(repo, "show", "HEAD:src/auth/login.py") == "ok"
    again = mirror.record_work(
        Repository.open(repo), task, "builder", {"src/auth/login.py": b"ok\n"}
    )
    assert again == ([], None)  # the same bytes again: nothing to commit
