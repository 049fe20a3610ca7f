"""Transitions write status files without the model; the model must accept each unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from taskfs.core.records import StatusRecord
from taskfs.core.status_file import status_document

CASES: list[dict[str, Any]] = [
    {
        "task": "t1",
        "state": "submitted",
        "by": "planner",
        "at": "2026-01-01T00:00:00.000000Z",
        "prev": None,
    },
    {
        "task": "t1",
        "state": "working",
        "by": "builder",
        "at": "2026-01-01T00:00:01.000000Z",
        "prev": "0001-submitted-abcdefgh.yaml",
    },
    {
        "task": "t1",
        "state": "failed",
        "by": "builder",
        "at": "2026-01-01T00:00:02.000000Z",
        "prev": "0002-working-abcdefgh.yaml",
        "reason": "the API is gone",
    },
    {
        "task": "t1",
        "state": "completed",
        "by": "builder",
        "at": "2026-01-01T00:00:03.000000Z",
        "prev": "0002-working-abcdefgh.yaml",
        "evidence": "20260101T000000.000000Z-abcdefgh.yaml",
        "artifacts": [{"name": "fix", "location": "src/a.py"}, {"name": "pr", "location": "#7"}],
    },
    {
        "task": "t1",
        "state": "input_required",
        "by": "builder",
        "at": "2026-01-01T00:00:04.000000Z",
        "prev": "0002-working-abcdefgh.yaml",
        "message": "t1/20260101T000004.000000Z-abcdefgh",
    },
]


@pytest.mark.parametrize("fields", CASES)
def test_the_model_reads_what_transitions_write_unchanged(fields: dict[str, Any]) -> None:
    document = status_document(**fields)
    assert StatusRecord.model_validate(document).to_document() == document
    assert list(StatusRecord.model_validate(document).to_document()) == list(document)
