"""The rules that relate one task to the others: dependencies, ownership, delegation.

Each rule is checked here once and called from every place that needs it (`new`, `claim`,
the watcher's intake, `validate` and `audit`), so no adapter carries a rule of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from taskfs.core import globs
from taskfs.core.capabilities import CapabilityLedger, granted
from taskfs.core.delegation import Known, check_child
from taskfs.core.envelope import Envelope
from taskfs.core.graph import depends_on, find_cycle
from taskfs.core.lifecycle import TERMINAL
from taskfs.errors import Problem, TaskfsError, problem
from taskfs.store.capability_ledger import load_ledger
from taskfs.store.ledger import Task
from taskfs.store.repository import Repository
from taskfs.store.snapshot import load_all


def dependency_graph(envelopes: Iterable[Envelope]) -> dict[str, tuple[str, ...]]:
    return {e.id: e.depends_on for e in envelopes if e.id is not None}


def parent_map(envelopes: Iterable[Envelope]) -> dict[str, str | None]:
    return {e.id: e.parent for e in envelopes if e.id is not None}


def ordered(
    graph: Mapping[str, Iterable[str]], parents: Mapping[str, str | None], a: str, b: str
) -> bool:
    """Whether two tasks can never be worked at the same time as rivals: one depends on the
    other, or one was delegated (directly or through others) from the other."""
    return (
        depends_on(graph, a, b)
        or depends_on(graph, b, a)
        or _descends(parents, a, b)
        or _descends(parents, b, a)
    )


def _descends(parents: Mapping[str, str | None], task: str, ancestor: str) -> bool:
    seen = {task}
    current = parents.get(task)
    while current is not None and current not in seen:
        if current == ancestor:
            return True
        seen.add(current)
        current = parents.get(current)
    return False


def check_new_tasks(repo: Repository, batch: Sequence[Envelope]) -> None:
    """Refuse a batch of new tasks that would close a cycle, own what an open task owns, or
    break a delegation chain (contract section 8)."""
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
    problems += delegation_problems(repo, existing, batch)
    open_envelopes = [t.envelope for t in existing.values() if t.state not in TERMINAL]
    parents = parent_map([t.envelope for t in existing.values()] + list(batch))
    problems += ownership_conflicts(batch, open_envelopes, graph, parents)
    if problems:
        raise TaskfsError(problems)


def delegation_problems(
    repo: Repository, existing: Mapping[str, Task], batch: Sequence[Envelope]
) -> list[Problem]:
    """Each child of the batch checked against its parent chain. What a parent was granted is
    its `toolsAllowed` intersected with the capability ledger's entry for its recipient when
    this machine has a ledger, else its `toolsAllowed` (the most any ledger could grant)."""
    children = [e for e in batch if e.parent is not None]
    if not children:
        return []
    known = {t.id: Known(t.envelope, t.state, t.chain.holder) for t in existing.values()}
    known.update({e.id: Known(e) for e in batch if e.id is not None})
    ledger: list[CapabilityLedger | None] = []

    def grant(parent: Known) -> tuple[str, ...]:
        if not ledger:
            ledger.append(load_ledger(repo.root))
        return granted(parent.envelope, parent.recipient, ledger[0])

    problems: list[Problem] = []
    for child in children:
        try:
            problems += check_child(child, known, grant, repo.config.delegation_max_depth)
        except TaskfsError as exc:
            problems += exc.problems
    return problems


def ownership_conflicts(
    candidates: Sequence[Envelope],
    others: Sequence[Envelope],
    graph: Mapping[str, Iterable[str]],
    parents: Mapping[str, str | None] | None = None,
) -> list[Problem]:
    """Every overlap between a candidate's entries and another open task's that no
    dependency or delegation orders (contract sections 5 and 8). Candidates are also checked
    against each other."""
    if parents is None:
        parents = parent_map([*others, *candidates])
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
                if ordered(graph, parents, envelope.id, other_id):
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
