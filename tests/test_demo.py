"""`taskfs demo` runs a whole delegation, check and completion included, and leaves nothing."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.helpers import taskfs


def test_the_demo_delegation_completes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    result = taskfs("demo")
    assert result.code == 0, result.stdout + result.stderr
    out = result.stdout
    assert "error[completion_requires_evidence]" in out
    assert ": fail (exit 1" in out
    assert '"verdict": "pass"' in out
    assert ": completed\n" in out
    assert "audit clean" in out
    assert list(tmp_path.iterdir()) == []
    assert not (Path.home() / ".config" / "taskfs").exists()
