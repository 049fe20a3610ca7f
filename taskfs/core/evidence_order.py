"""A check's evidence document in the order its model writes it, without the model.

`taskfs check` builds its evidence from values it made itself, and used to pass them through
`CheckEvidence` (pydantic) only to drop what is None and put the keys in reading order: the
model's import and build cost a check more than git's commit does (issue 31). `ordered_check`
gives the same document from the same values; `tests/api/test_evidence_order.py` holds it to
`parse_evidence(document).to_document()` on every shape a check can write.
"""

from __future__ import annotations

from typing import Any

# The fields of each record in the models' order (`taskfs.core.evidence_records`).
_RUN = (
    "command",
    "exitCode",
    "signal",
    "durationSeconds",
    "stdout",
    "stderr",
    "streams",
    "limits",
    "spawnError",
)
_CHECK = (
    *_RUN,
    "task",
    "kind",
    "verdict",
    "verdictSource",
    "startedAt",
    "commit",
    "ownedFiles",
    "workTree",
    "uncommitted",
    "endToEnd",
    "fresh",
    "by",
    "host",
    "runner",
    "sandbox",
    "gitChanges",
    "signature",
)
_STREAM = ("totalBytes", "digest", "truncated")
_NESTED: dict[str, tuple[str, ...]] = {
    "streams": ("stdout", "stderr"),
    "streams.stdout": _STREAM,
    "streams.stderr": _STREAM,
    "digest": ("sha256",),
    "limits": ("timeoutSeconds", "outputCapBytes", "timedOut", "leftoverKilled", "outputCapped"),
    "ownedFiles": ("digest", "count", "changedDuringRun"),
    "uncommitted": ("count", "paths"),
    "endToEnd": ("description", "command", "run", "skipped"),
    "endToEnd.run": (*_RUN, "verdict"),
    "runner": ("name", "keyId"),
    "sandbox": ("kind", "mode", "network", "reason"),
    "gitChanges": ("path", "change"),
}
# The verdict and what it rests on first, the long captured output last (`CheckEvidence`).
CHECK_ORDER = (
    "task",
    "kind",
    "verdict",
    "verdictSource",
    "command",
    "exitCode",
    "signal",
    "spawnError",
    "startedAt",
    "durationSeconds",
    "commit",
    "fresh",
    "by",
    "host",
    "ownedFiles",
    "workTree",
    "uncommitted",
    "gitChanges",
    "limits",
    "endToEnd",
    "streams",
    "stdout",
    "stderr",
)


def ordered_check(document: dict[str, Any]) -> dict[str, Any]:
    """`document` (a check's evidence) as its model writes it: None values left out, every
    record's keys in the model's order, the top level in reading order."""
    fields = _ordered(document, _CHECK, "")
    return {**{k: fields[k] for k in CHECK_ORDER if k in fields}, **fields}


def _ordered(record: dict[str, Any], keys: tuple[str, ...], where: str) -> dict[str, Any]:
    unknown = record.keys() - set(keys)
    if unknown:
        raise ValueError(f"not fields of the evidence ({where or 'top'}): {sorted(unknown)}")
    out: dict[str, Any] = {}
    for key in keys:
        value = record.get(key)
        if value is None:
            continue
        path = f"{where}.{key}" if where else key
        nested = _spec(path)
        if isinstance(value, dict) and nested is not None:
            value = _ordered(value, nested, path)
        elif isinstance(value, (list, tuple)):
            value = [
                _ordered(item, nested, path) if isinstance(item, dict) and nested else item
                for item in value
            ]
        out[key] = value
    return out


def _spec(path: str) -> tuple[str, ...] | None:
    """The field order of the record at `path`, by its longest suffix the table names
    (`endToEnd.run.streams.stdout` is a stream like `streams.stdout`)."""
    parts = path.split(".")
    for start in range(len(parts)):
        found = _NESTED.get(".".join(parts[start:]))
        if found is not None:
            return found
    return None
