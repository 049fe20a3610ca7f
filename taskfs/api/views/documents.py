"""A task as the CLI and the MCP server show it: its row, its details, its evidence and history.

The shapes themselves (document, refusal, the task row) are `taskfs.core.shapes`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from taskfs.readmodel.projection import Summary

if TYPE_CHECKING:
    from taskfs.store.task_reader import Task


def moved(result: Any) -> dict[str, Any]:
    """What a transition answers besides `ok` (`transitions.Moved`), with a completion's
    warnings (`completion_warnings`); a completion repeated by its maker (`completing.Done`)
    says `already`."""
    from taskfs.core import shapes

    doc = shapes.transition(result.id, result.state, result.commit)
    if getattr(result, "by", None) is not None:  # a completion already made, the same way
        doc["already"] = True
    warnings = getattr(result, "warnings", None)
    if warnings is not None:
        doc["warnings"] = [w.to_json() for w in warnings]
    return doc


def summary(task: Summary | Task) -> dict[str, Any]:
    """A task's row in `ls` and `ready` (from a cached summary, or a task read from disk)."""
    return (task if isinstance(task, Summary) else Summary.of(task)).row()


def detail(task: Task) -> dict[str, Any]:
    out = {
        **summary(task),
        "envelope": task.envelope.to_document(),
        "history": history(task),
        "problems": [p.to_json() for p in task.problems],
    }
    if task.evidence is not None:
        out["evidence"] = evidence(task)
    return out


def evidence(task: Task) -> list[dict[str, Any]]:
    """One row per readable evidence file, oldest first, with how its signature stands:
    `valid`, `invalid`, `unsigned`, or `unverified` (signed, but no runner key is trusted).
    The latest run, when it failed, carries its output's tail (`output`): the reason an agent
    reading the task needs next, whoever ran the check."""
    from taskfs.api.views.checks import output

    rows = []
    for item in task.evidence or ():
        record = item.record
        row: dict[str, Any] = {
            "file": item.name,
            "path": item.rel,
            "kind": record.kind,
            "verdict": record.verdict,
            "verdictSource": record.verdict_source,
            "at": record.started_at,
            "by": record.by,
            "signature": item.signature,
            "signatureNote": item.signature_why,
        }
        if record.kind == "check":
            row.update(
                command=record.command,
                exitCode=record.exit_code,
                fresh=bool(record.fresh),
                runner=record.runner.name if record.runner else None,
            )
        rows.append(row)
    found = task.evidence or ()
    if rows and found and found[-1].record.kind == "check":
        said = output(found[-1].document)
        if said is not None:
            rows[-1]["output"] = said
    return rows


def history(task: Task) -> list[dict[str, Any]]:
    rows = [{**link.record.to_document(), "file": link.name} for link in task.chain.links]
    from taskfs.core.forks import losses

    for loss in losses(task.chain):
        winner = loss.winner
        lost_to = (
            {"file": winner.name, "state": winner.record.state, "by": winner.record.by}
            if winner
            else None
        )
        rows.append(
            {
                **loss.link.record.to_document(),
                "file": loss.link.name,
                "superseded": True,
                "supersededBy": lost_to,
            }
        )
    return rows
