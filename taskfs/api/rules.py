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
        problems += _cycle(graph, envelope.id)
    open_envelopes = [t.envelope for t in existing.values() if t.state not in TERMINAL]
    problems += ownership_conflicts(batch, open_envelopes, graph)
    if problems:
        raise TaskfsError(problems)


def _cycle(graph: Mapping[str, Iterable[str]], task_id: str) -> list[Problem]:
    cycle = find_cycle(graph, task_id)
    if cycle is None:
        return []
    return [
        problem(
            "dependency_cycle",
            field="dependsOn",
            id=task_id,
            cycle=cycle,
            cycle_text=" -> ".join(cycle),
        )
    ]


class Admission:
    """The open tasks, to which new tasks are admitted one at a time (the watcher's intake):
    each is checked against the open tasks and those admitted before it, so one that would
    close a cycle or own what another owns is refused on its own, never blocking the rest."""

    def __init__(self, existing: Mapping[str, Task]) -> None:
        # A folder with an envelope but no status file yet is a drop waiting for the intake,
        # not a task: it must not stand in its own way.
        tasks = {task_id: t for task_id, t in existing.items() if t.chain.links}
        self._graph: dict[str, tuple[str, ...]] = dependency_graph(
            t.envelope for t in tasks.values()
        )
        self._index: globs.OwnershipIndex[str] = globs.OwnershipIndex()
        for task in open_tasks(tasks):
            self._add(task.envelope)

    def problems(self, envelope: Envelope) -> list[Problem]:
        assert envelope.id is not None
        # The candidate's own edges count (they may order it after an open task), but only
        # while it is being checked: an envelope that is refused leaves no trace.
        before = self._graph.get(envelope.id)
        self._graph[envelope.id] = envelope.depends_on
        try:
            return _cycle(self._graph, envelope.id) + _conflicts(
                envelope, self._index, self._graph, set()
            )
        finally:
            if before is None:
                del self._graph[envelope.id]
            else:
                self._graph[envelope.id] = before

    def admit(self, envelope: Envelope) -> None:
        assert envelope.id is not None
        self._graph[envelope.id] = envelope.depends_on
        self._add(envelope)

    def _add(self, envelope: Envelope) -> None:
        assert envelope.id is not None
        for raw in envelope.files_and_interfaces:
            self._index.add(envelope.id, globs.parse_entry(raw))


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
            index.add(other.id, globs.parse_entry(raw))
    problems: list[Problem] = []
    reported: set[frozenset[str]] = set()
    for envelope in candidates:
        problems += _conflicts(envelope, index, graph, reported)
    return problems


def _conflicts(
    envelope: Envelope,
    index: globs.OwnershipIndex[str],
    graph: Mapping[str, Iterable[str]],
    reported: set[frozenset[str]],
) -> list[Problem]:
    """The overlaps of `envelope`'s entries with the indexed ones that no dependency orders,
    one per pair of tasks (`reported` holds the pairs already named)."""
    assert envelope.id is not None
    problems: list[Problem] = []
    for raw in envelope.files_and_interfaces:
        for other_id, other_entry, witness in index.conflicts(globs.parse_entry(raw)):
            pair = frozenset((envelope.id, other_id))
            if other_id == envelope.id or pair in reported:
                continue
            if depends_on(graph, envelope.id, other_id) or depends_on(graph, other_id, envelope.id):
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
