"""The rules that relate one task to the others: dependencies, ownership, delegation.

Each rule is checked here once and called from every place that needs it (`new`, `claim`,
the watcher's intake, `validate` and `audit`), so no adapter carries a rule of its own. The
rules read `TaskFacts` and `EnvelopeFacts`: a full task read from disk or a cached summary.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from taskfs.api.tasks import envelope_rules
from taskfs.core import globs
from taskfs.core.delegation import Known, check_child
from taskfs.core.facts import EnvelopeFacts, TaskFacts
from taskfs.core.graph import find_cycle
from taskfs.core.readiness import (
    dependency_graph,
    open_tasks,
    ordered,
    parent_map,
)
from taskfs.errors import Problem, TaskfsError, problem
from taskfs.store import entry_places
from taskfs.store.index import cache_path, summaries
from taskfs.store.repository import Repository

if TYPE_CHECKING:
    from taskfs.core.capabilities import CapabilityLedger


def check_new_tasks(repo: Repository, batch: Sequence[EnvelopeFacts]) -> None:
    """Refuse a batch of new tasks that would close a cycle, own what an open task owns, or
    break a delegation chain (contract section 8). The batch is checked as a whole: its tasks
    may depend on, and be delegated from, each other."""
    # The new ids are `verify`'s (none has files yet): the writer stores the rows once, with
    # its new tasks (`index.remember_new`), instead of here and again there.
    admission = Admission(repo, summaries(repo, verify=[e.id for e in batch if e.id]), batch)
    problems: list[Problem] = []
    on_named_cycle: set[str] = set()  # a cycle is named once, not once by each of its tasks
    for envelope in batch:
        for found in admission.problems(envelope):
            if found.code == "dependency_cycle" and envelope.id is not None:
                if envelope.id in on_named_cycle:
                    continue
                on_named_cycle.update(find_cycle(admission.graph, envelope.id) or ())
            problems.append(found)
        admission.admit(envelope)
    if problems:
        raise TaskfsError(problems)


class Admission:
    """The open tasks, to which new tasks are admitted one at a time.

    `new` admits a whole batch (all or none); the watcher's intake admits each dropped file on
    its own, so one that would close a cycle or own what another owns is refused without
    blocking the rest. Tasks in `pending` are known from the start: a task may depend on, or
    be delegated from, another one arriving with it.
    """

    def __init__(
        self,
        repo: Repository,
        existing: Mapping[str, TaskFacts],
        pending: Sequence[EnvelopeFacts] = (),
    ) -> None:
        self._repo = repo
        # A folder with an envelope but no status file yet is a drop waiting for the intake,
        # not a task: it must not stand in its own way.
        tasks = {task_id: t for task_id, t in existing.items() if t.length}
        envelopes = [t.envelope for t in tasks.values()] + list(pending)
        self._graph = dependency_graph(envelopes)
        self._parents = parent_map(envelopes)
        self._known = _Known(tasks)
        for e in pending:
            if e.id is not None:
                self._known[e.id] = Known(e)
        # The open tasks' entries, in order; a candidate is checked against those near its
        # own (`entry_places`), indexed for that query alone.
        self._entries: list[tuple[str, str]] = [
            (task.id, raw)
            for task in open_tasks(tasks)
            for raw in task.envelope.files_and_interfaces
        ]
        self._places = entry_places.opened(cache_path(repo))
        self._ledger: list[CapabilityLedger | None] = []  # read once, when a child needs it
        self._folders = envelope_rules.ledger_folders(repo.tasks_rel)

    @property
    def graph(self) -> Mapping[str, Iterable[str]]:
        return self._graph

    def problems(self, envelope: EnvelopeFacts) -> list[Problem]:
        """Every reason `envelope` may not join the open tasks admitted so far."""
        task_id = envelope.id
        assert task_id is not None
        # The candidate's own edges count (they may order it after an open task), but only
        # while it is being checked: an envelope that is refused leaves no trace.
        saved = (self._graph.get(task_id), self._parents.get(task_id), self._known.get(task_id))
        self._graph[task_id] = tuple(envelope.depends_on)
        self._parents[task_id] = envelope.parent
        self._known[task_id] = Known(envelope)
        try:
            return (
                _cycle(self._graph, task_id)
                + envelope_rules.ledger_entries(envelope, self._folders)
                + self._delegation(envelope)
                + _conflicts(envelope, self._nearby(envelope), self._graph, self._parents, set())
            )
        finally:
            _restore(self._graph, task_id, saved[0])
            _restore(self._parents, task_id, saved[1])
            _restore(self._known, task_id, saved[2])

    def admit(self, envelope: EnvelopeFacts) -> None:
        assert envelope.id is not None
        self._graph[envelope.id] = tuple(envelope.depends_on)
        self._parents[envelope.id] = envelope.parent
        self._known[envelope.id] = Known(envelope)
        self._add(envelope)

    def _add(self, envelope: EnvelopeFacts) -> None:
        assert envelope.id is not None
        self._entries += ((envelope.id, raw) for raw in envelope.files_and_interfaces)

    def _nearby(self, envelope: EnvelopeFacts) -> globs.OwnershipIndex[str]:
        """The admitted entries `envelope`'s can overlap, indexed (parsed only if a query
        reaches them)."""
        index: globs.OwnershipIndex[str] = globs.OwnershipIndex()
        for key, raw in self._places.nearby(self._entries, envelope.files_and_interfaces):
            index.add(key, raw)
        # Not stored here: the writer stores the places it learnt after its commit (the
        # cache's overlaps, `taskfs.store.index`), so that its ledger files' `fsync` does not
        # wait for this file's blocks too.
        return index

    def _delegation(self, child: EnvelopeFacts) -> list[Problem]:
        """The child checked against its parent chain. What a parent was granted is its
        `toolsAllowed` intersected with the capability ledger's entry for its recipient when
        this machine has a ledger, else its `toolsAllowed` (the most any ledger could grant)."""
        if child.parent is None:
            return []
        from taskfs.core.capabilities import granted
        from taskfs.store.capability_ledger import load_ledger

        def grant(parent: Known) -> tuple[str, ...]:
            if not self._ledger:
                self._ledger.append(load_ledger(self._repo.root))
            return granted(parent.envelope, parent.recipient, self._ledger[0])

        try:
            depth = self._repo.config.delegation_max_depth
            return check_child(child, self._known, grant, depth)
        except TaskfsError as exc:
            return list(exc.problems)


class _Known(Mapping[str, Known]):
    """The tasks a child may be delegated from, each made a `Known` when asked for: a check
    reads a parent chain, not every task of the ledger. Set and removed like a dict."""

    def __init__(self, tasks: Mapping[str, TaskFacts]) -> None:
        self._tasks = tasks
        self._set: dict[str, Known] = {}
        self._hidden: set[str] = set()

    def __getitem__(self, key: str) -> Known:
        if key in self._set:
            return self._set[key]
        if key in self._hidden or key not in self._tasks:
            raise KeyError(key)
        task = self._tasks[key]
        return Known(task.envelope, task.state, task.holder)

    def __setitem__(self, key: str, value: Known) -> None:
        self._set[key] = value
        self._hidden.discard(key)

    def pop(self, key: str, default: Known | None = None) -> Known | None:
        found = self.get(key, default)
        self._set.pop(key, None)
        self._hidden.add(key)
        return found

    def __iter__(self) -> Iterator[str]:
        yield from self._set
        yield from (k for k in self._tasks if k not in self._set and k not in self._hidden)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _restore(mapping: Any, key: str, value: object) -> None:
    if value is None:
        mapping.pop(key, None)
    else:
        mapping[key] = value


def _cycle(graph: Mapping[str, Iterable[str]], task_id: str) -> list[Problem]:
    cycle = find_cycle(graph, task_id)
    if cycle is None:
        return []
    return [envelope_rules.cycle_problem(task_id, cycle)]


def ownership_conflicts(
    candidates: Sequence[EnvelopeFacts],
    others: Sequence[EnvelopeFacts],
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
        problems += _conflicts(envelope, index, graph, parents, reported)
    return problems


def _conflicts(
    envelope: EnvelopeFacts,
    index: globs.OwnershipIndex[str],
    graph: Mapping[str, Iterable[str]],
    parents: Mapping[str, str | None],
    reported: set[frozenset[str]],
) -> list[Problem]:
    """The overlaps of `envelope`'s entries with the indexed ones that nothing orders, one per
    pair of tasks (`reported` holds the pairs already named)."""
    task_id = envelope.id
    assert task_id is not None
    problems: list[Problem] = []
    for raw in envelope.files_and_interfaces:
        for other_id, other_entry, witness in index.conflicts(globs.parse_entry(raw)):
            pair = frozenset((task_id, other_id))
            if other_id == task_id or pair in reported:
                continue
            if ordered(graph, parents, task_id, other_id):
                continue
            reported.add(pair)
            problems.append(
                problem(
                    "ownership_conflict",
                    field="filesAndInterfaces",
                    id=task_id,
                    entry=raw,
                    other=other_id,
                    other_entry=other_entry.raw,
                    witness=witness,
                )
            )
    return problems
