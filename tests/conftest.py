"""Fixtures: every test works in a fresh temporary git repository with a fixed identity,
never in the checkout."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests.helpers import IDENTITY, git, taskfs

# Property tests keep no example database: a failure is reproduced from its printed example.
settings.register_profile("taskfs", database=None)
settings.load_profile("taskfs")


@pytest.fixture(autouse=True)
def _isolated_environment(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for key, value in IDENTITY.items():
        monkeypatch.setenv(key, value)
    for key in list(os.environ):
        if key.startswith("TASKFS_") or key in (
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_INDEX_FILE",
            "INTERLINK_URL",
        ):
            monkeypatch.delenv(key, raising=False)
    # Checks run unconfined unless a test asks for the sandbox: many tests watch a check's
    # processes and files from outside, which the sandbox rightly hides (tests/runner/
    # test_containment.py runs it both ways).
    monkeypatch.setenv("TASKFS_SANDBOX", "off")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh git repository with one commit and taskfs initialised; the cwd is inside it."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("a project\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "initial")
    monkeypatch.chdir(root)
    result = taskfs("init")
    assert result.code == 0, result.stderr
    return root
