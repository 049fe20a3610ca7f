"""The rules that relate one task to the others: dependencies, ownership, delegation.

Each rule is checked here once and called from every place that needs it (`new`, `claim`,
the watcher's intake, `validate` and `audit`), so no adapter carries a rule of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from taskfs.core import globs
from taskfs.core.envelope import Envelope
from taskfs.core.graph import depends_on, find_cycle
from taskfs.core.lifecycle import TERMINAL
from taskfs.errors import Problem, TaskfsError, problem
from taskfs.store.ledger import Task
from taskfs.store.repository import Repository
from taskfs.store.snapshot import load_all


def dependency_graph(envelopes: Iterable[Envelope]) -> dict[str, tuple[str, ...]]:
    return {e.id: e.depends_on for e in envelopes if e.id is not None}


def check_new_tasks(repo: Repository, batch: Sequence[Envelope]) -> None:
    """Refuse a batch of new tasks that would close a cycle or own what an open task owns."""
    existing = load_all(repo)
    graph = dependency_graph([t.envelope for t in existing.values()] + list(batch))
    problems: list[Problem] = []
    for envelope in batch:
        assert envelope.id is not None
        cycle = find_cycle(graph, envelope.id)
        if cycle is not None:
            problems.append(
                problem(
                    "dependency_cycle",
                    field="dependsOn",
                    id=envelope.id,
                    cycle=cycle,
                    cycle_text=" -> ".join(cycle),
                )
            )
    open_envelopes = [t.envelope for t in existing.values() if t.state not in TERMINAL]
    problems += ownership_conflicts(batch, open_envelopes, graph)
    if problems:
        raise TaskfsError(problems)


def ownership_conflicts(
    candidates: Sequence[Envelope],
    others: Sequence[Envelope],
    graph: Mapping[str, Iterable[str]],
) -> list[Problem]:
    """Every overlap between a candidate's entries and another open task's that no
    dependency orders (contract section 5). Candidates are also checked against each other."""
    index: globs.OwnershipIndex[str] = globs.OwnershipIndex()
    for other in [*others, *candidates]:
        assert other.id is not None
        for raw in other.files_and_interfaces:
            index.add(other.id, raw)  # parsed only if a query reaches it
    problems: list[Problem] = []
    reported: set[frozenset[str]] = set()
    for envelope in candidates:
        assert envelope.id is not None
        for raw in envelope.files_and_interfaces:
            for other_id, other_entry, witness in index.conflicts(globs.parse_entry(raw)):
                pair = frozenset((envelope.id, other_id))
                if other_id == envelope.id or pair in reported:
                    continue
                if depends_on(graph, envelope.id, other_id) or depends_on(
                    graph, other_id, envelope.id
                ):
                    continue
                reported.add(pair)
                problems.append(
                    problem(
                        "ownership_conflict",
                        field="filesAndInterfaces",
                        id=envelope.id,
                        entry=raw,
                        other=other_id,
                        other_entry=other_entry.raw,
                        witness=witness,
                    )
                )
    return problems


def open_tasks(tasks: Mapping[str, Task]) -> list[Task]:
    return [t for t in tasks.values() if t.state not in TERMINAL]
