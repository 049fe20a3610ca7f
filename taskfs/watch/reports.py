"""Refusal reports: `<name>.refused.yaml` beside a dropped file that could not be submitted.

A report names every error under its contract code, and the sha256 of the bytes it judged, so
a report that no longer matches its file is recognisable as stale. It is a note for whoever
dropped the file, not a ledger entry: it is never committed, and it goes away when the file is
submitted or removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from taskfs.core import yamlio
from taskfs.errors import Problem

HEADER = (
    "# taskfs watch did not submit {path}: every error is named below. Fix the file and save\n"
    "# it again; this report is then replaced, or removed once the file is submitted.\n"
)


def report_bytes(path: str, sha256: str | None, problems: Sequence[Problem], at: str) -> bytes:
    document = {
        "file": path,
        "sha256": sha256,
        "refusedAt": at,
        "errors": [_plain(p.to_json()) for p in problems],
    }
    return (HEADER.format(path=path) + yamlio.dump(document)).encode()


def report_sha256(data: bytes) -> str | None:
    """The sha256 a report was written for; None when it is not a readable report."""
    try:
        value = yamlio.load(data)
    except yamlio.YamlError:
        return None
    sha = value.get("sha256") if isinstance(value, dict) else None
    return sha if isinstance(sha, str) else None


def _plain(value: Any) -> Any:
    """What YAML can hold: problem data may carry tuples or other values."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
