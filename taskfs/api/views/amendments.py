"""A contract's amendments as the CLI and MCP show them (`taskfs.core.amendments`): what an
amendment changed, who wrote it, whether it is in force, pending, accepted or left behind."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from taskfs.core.amendments import changed_keys
from taskfs.core.lifecycle import TERMINAL


def amended(done: Any) -> dict[str, Any]:
    """What `amend` (and MCP's `agent_amend`) answers."""
    return {
        "id": done.id,
        "state": done.state,
        "file": done.file,
        "inForce": done.in_force,
        "changed": list(done.changed),
        "commit": done.commit,
    }


def rows(task: Any, submitted: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each amendment of `task` (a `Task` read whole; `submitted`: its envelope as submitted),
    oldest first: who wrote it, when, why, what it changed against the version before it, and
    where it stands (`status`: `in force`, `pending`, `lapsed` (pending when the task ended),
    `accepted` (in force before a later one), `superseded`, or `void`: not its writer's to
    write, or unsigned where its writer has a key, so it counts for nothing); and each
    acceptance (`void` too, where it counts for nothing)."""
    version = task.version
    if version is None:
        return []
    in_force = version.in_force.name if version.in_force is not None else None
    pending = {e.name for e in version.pending}
    ended = task.state in TERMINAL  # what its holder did not accept before the end lapsed
    out: list[dict[str, Any]] = []
    before: Mapping[str, Any] = submitted
    for entry in task.amendments:
        record = entry.record
        row: dict[str, Any] = {"file": entry.name, "kind": record.kind, "by": record.by}
        row["at"] = record.at
        if record.kind == "accepted":
            row["accepts"] = record.accepts
            if entry.name in version.void:
                row["status"] = "void"
        else:
            document = record.envelope or {}
            row["changed"] = changed_keys(before, document)
            if entry.name not in version.void:
                before = document
            row["status"] = (
                "void"
                if entry.name in version.void
                else "in force"
                if entry.name == in_force
                else ("lapsed" if ended else "pending")
                if entry.name in pending
                else "accepted"
                if entry.name in version.accepted
                else "superseded"
            )
            if record.reason:
                row["reason"] = record.reason
        out.append(row)
    return out
