"""What a check runs, read without the envelope's model: the task's acceptance check and owned
entries (issue 31).

The read model's row says whether the task's files are a valid task as HEAD holds them (a row
with no problems was read by the full reader, or written from a validated envelope); the check
then reads the few fields it runs from the envelope's YAML. A task the row does not vouch for is
read by the full reader, which names what is wrong with it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from taskfs.core.layout import ENVELOPE
from taskfs.store.repository import Repository


class Acceptance(NamedTuple):
    """The acceptance check of a task, and the entries whose files it fingerprints."""

    task_id: str
    command: str
    verification: str
    end_to_end_command: str | None
    timeout_seconds: int | None
    verdict_source: str | None
    entries: tuple[str, ...]
    state: str  # the task's state (a closed task's evidence cannot complete it)
    pending: int = 0  # amendments waiting for its holder's answer (`taskfs.core.amendments`)


def acceptance(repo: Repository, task_id: str) -> Acceptance:
    """The task's acceptance check as HEAD holds its envelope (the caller has refused a task
    folder holding files no commit holds); `TaskfsError` naming what is wrong otherwise."""
    from taskfs.store.index import summaries

    row = summaries(repo).get(task_id)
    if row is not None and not row.problems and row.length and not row.intake:
        raw = _acceptance_fields(repo, task_id)
        if raw is not None:
            return Acceptance(
                task_id,
                row.envelope.command,
                raw["endToEndVerification"],
                raw.get("endToEndCommand"),
                raw.get("timeoutSeconds"),
                raw.get("verdictSource"),
                row.envelope.files_and_interfaces,
                row.state,
                row.pending,
            )
    from taskfs.store.task_reader import load_task  # names what is wrong with its files

    task = load_task(repo, task_id)
    found = task.envelope
    check = found.acceptance_check
    return Acceptance(
        task_id,
        check.pass_fail_command,
        check.end_to_end_verification,
        check.end_to_end_command,
        check.timeout_seconds,
        check.verdict_source,
        tuple(found.files_and_interfaces),
        task.state,
        len(task.version.pending) if task.version is not None else 0,
    )


def _acceptance_fields(repo: Repository, task_id: str) -> dict[str, Any] | None:
    """The envelope's `acceptanceCheck` mapping, as the model validated it; None when the file
    cannot be read as one (the full reader says why)."""
    from taskfs.core import yamlio

    try:
        document = yamlio.load(repo.read_bytes(repo.task_rel(task_id, ENVELOPE)))
    except (OSError, yamlio.YamlError):
        return None
    found = document.get("acceptanceCheck") if isinstance(document, dict) else None
    if not isinstance(found, dict) or not isinstance(found.get("endToEndVerification"), str):
        return None
    return found
