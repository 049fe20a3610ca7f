"""The document of a status file, as transitions write it.

Transitions are the hottest writes, so they build this plain mapping instead of loading the
models: `taskfs.core.records.StatusRecord` is what reads and validates status files, and a
test checks that every document built here is one it accepts unchanged, key order included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def status_document(
    *,
    task: str,
    state: str,
    by: str,
    at: str,
    prev: str | None,
    reason: str | None = None,
    evidence: str | None = None,
    artifacts: Sequence[Mapping[str, str]] = (),
    message: str | None = None,
) -> dict[str, Any]:
    """The fields in `StatusRecord`'s order, absent ones left out."""
    fields: dict[str, Any] = {
        "task": task,
        "state": state,
        "by": by,
        "at": at,
        "prev": prev,
        "reason": reason,
        "evidence": evidence,
        "artifacts": [dict(a) for a in artifacts] or None,
        "message": message,
    }
    return {key: value for key, value in fields.items() if value is not None}
