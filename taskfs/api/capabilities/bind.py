"""`bind`: a task's envelope bound to one agent's capabilities (contract section 7)."""

from __future__ import annotations

from dataclasses import dataclass

from taskfs.core.capabilities import BoundEnvelope, bind_envelope, intersect
from taskfs.store.capability_ledger import ledger_path, load_ledger
from taskfs.store.repository import Repository
from taskfs.store.task_reader import load_task


@dataclass(frozen=True)
class Bound:
    id: str
    agent: str
    tools_granted: tuple[str, ...]
    envelope: BoundEnvelope
    ledger: str | None


def bind(repo: Repository, task_id: str, agent: str) -> Bound:
    """`toolsAllowed` intersected with `agent`'s ledger entry; the file on disk is untouched."""
    task = load_task(repo, task_id)
    ledger = load_ledger(repo.root)
    held = ledger.held(agent) if ledger is not None else ()
    tools = intersect(task.envelope.tools_allowed, held)
    where = str(ledger_path()) if ledger is not None else None
    return Bound(task_id, agent, tools, bind_envelope(task.envelope, tools), where)
