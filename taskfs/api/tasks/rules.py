"""The rules that relate one task to the others: dependencies, ownership, delegation.

Each rule is checked here once and called from every place that needs it (`new`, `claim`,
the watcher's intake, `validate` and `audit`), so no adapter carries a rule of its own. The
rules read `TaskFacts` and `EnvelopeFacts`: a full task read from disk or a cached summary.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from taskfs.api.tasks import envelope_rules
from taskfs.core import globs
from taskfs.core.delegation import Known, check_child
from taskfs.core.facts import EnvelopeFacts, TaskFacts
from taskfs.core.graph import find_cycle
from taskfs.core.lifecycle import TERMINAL
from taskfs.core.lineage import same_contract
from taskfs.core.readiness import ordered, parent_map, relations
from taskfs.errors import Problem, TaskfsError, problem
from taskfs.readmodel.ledger import Ledger
from taskfs.store.index import summaries
from taskfs.store.repository import Repository

if TYPE_CHECKING:
    from taskfs.core.capabilities import CapabilityLedger


def check_new_tasks(repo: Repository, batch: Sequence[EnvelopeFacts]) -> None:
    """Refuse a batch of new tasks that would close a cycle, own what an open task owns, or
    break a delegation chain (contract section 8). The batch is checked as a whole: its tasks
    may depend on, and be delegated from, each other."""
    # A new id may name an intake's folder, which the task is about to take over: checked.
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

    The ledger's tasks are read as a rule reaches them (`Ledger`): a candidate's entries are
    checked against the stored entries near them (`Ledger.near`) and against the batch
    admitted so far, kept in one index that grows with it; its cycle and its delegation chain
    read the tasks they walk through.
    """

    def __init__(
        self, repo: Repository, existing: Ledger, pending: Sequence[EnvelopeFacts] = ()
    ) -> None:
        self._repo = repo
        self._ledger = existing
        # A folder with an envelope but no status file yet is a drop waiting for the intake,
        # not a task: it must not stand in its own way.
        self._tasks = _Taken(existing)
        edges, parents = relations(self._tasks)
        self._graph: _Layered[tuple[str, ...]] = _Layered(edges)
        self._parents: _Layered[str | None] = _Layered(parents)
        self._known: _Layered[Known] = _Layered(_Known(self._tasks))
        for e in pending:
            if e.id is not None:
                self._graph[e.id] = tuple(e.depends_on)
                self._parents[e.id] = e.parent
                self._known[e.id] = Known(e)
        self._follow(pending)
        self._pending = pending
        self._pending_by_id = {e.id: e for e in pending if e.id is not None}
        self._pending_near: globs.OwnershipIndex[str] | None = None  # `_nearby`, when asked
        self._admitted: globs.OwnershipIndex[str] = globs.OwnershipIndex()
        self._ledger_rules: list[CapabilityLedger | None] = []  # read once, when needed
        self._folders = envelope_rules.ledger_folders(repo.tasks_rel)

    @property
    def graph(self) -> Mapping[str, Iterable[str]]:
        return self._graph

    def _follow(self, pending: Sequence[EnvelopeFacts]) -> None:
        """A pending task that genuinely follows a task of the ledger (a reassign's or retry's
        successor: `taskfs.core.lineage`) is ordered where that one stands: what depends on
        the old task is ordered after the new one too."""
        for e in pending:
            before = self._tasks.get(e.follows) if e.follows is not None else None
            if e.id is not None and before is not None and same_contract(e, before.envelope):
                self._graph[before.id] = (*self._graph.get(before.id, ()), e.id)

    def problems(self, envelope: EnvelopeFacts) -> list[Problem]:
        """Every reason `envelope` may not join the open tasks admitted so far."""
        task_id = envelope.id
        assert task_id is not None
        # The candidate's own edges count (they may order it after an open task), but only
        # while it is being checked: an envelope that is refused leaves no trace.
        saved = (self._graph.get(task_id), self._parents.get(task_id), self._known.get(task_id))
        had_parent = task_id in self._parents
        self._graph[task_id] = tuple(envelope.depends_on)
        self._parents[task_id] = envelope.parent
        self._known[task_id] = Known(envelope)
        try:
            reported: set[frozenset[str]] = set()
            return (
                _cycle(self._graph, task_id)
                + envelope_rules.ledger_entries(envelope, self._folders)
                + self._delegation(envelope)
                + _conflicts(envelope, self._nearby(envelope), self._graph, self._parents, reported)
                + _conflicts(envelope, self._admitted, self._graph, self._parents, reported)
            )
        finally:
            _restore(self._graph, task_id, saved[0])
            _restore(self._parents, task_id, saved[1], had_parent)
            _restore(self._known, task_id, saved[2])

    def admit(self, envelope: EnvelopeFacts) -> None:
        assert envelope.id is not None
        self._graph[envelope.id] = tuple(envelope.depends_on)
        self._parents[envelope.id] = envelope.parent
        self._known[envelope.id] = Known(envelope)
        for raw in envelope.files_and_interfaces:
            self._admitted.add(envelope.id, raw)  # parsed only if a query reaches it

    def _nearby(self, envelope: EnvelopeFacts) -> globs.OwnershipIndex[str]:
        """The open tasks' stored entries `envelope`'s can overlap, indexed (parsed only if a
        query reaches them). For a task of the batch known from the start, those of the whole
        batch, looked up once (a `new` of a thousand envelopes asks the store once, not a
        thousand times): the index decides which overlap, so more entries change no answer."""
        if self._pending_by_id.get(envelope.id or "") is envelope:
            if self._pending_near is None:
                entries = [raw for e in self._pending for raw in e.files_and_interfaces]
                self._pending_near = self._open_near(entries)
            return self._pending_near
        return self._open_near(envelope.files_and_interfaces)

    def _open_near(self, queries: Sequence[str]) -> globs.OwnershipIndex[str]:
        index: globs.OwnershipIndex[str] = globs.OwnershipIndex()
        near = self._ledger.near(queries)
        self._ledger.many(sorted({task_id for task_id, _raw in near}))  # read together
        for task_id, raw in near:
            task = self._tasks.get(task_id)
            if task is not None and task.state not in TERMINAL:
                index.add(task_id, raw)
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
            if not self._ledger_rules:
                self._ledger_rules.append(load_ledger(self._repo.root))
            return granted(parent.envelope, parent.recipient, self._ledger_rules[0])

        try:
            depth = self._repo.config.delegation_max_depth
            return check_child(child, self._known, grant, depth)
        except TaskfsError as exc:
            return list(exc.problems)


class _Taken(Mapping[str, TaskFacts]):
    """The tasks of a ledger that were taken in (a status file at least), read when asked."""

    def __init__(self, tasks: Ledger) -> None:
        self._tasks = tasks

    def following(self, task_id: str) -> list[str]:
        """Who follows `task_id`, asked of the ledger's store (`taskfs.core.lineage`)."""
        return [t for t in self._tasks.following(task_id) if t in self]

    def __getitem__(self, key: str) -> TaskFacts:
        task = self._tasks[key]
        if not task.length:
            raise KeyError(key)
        return task

    def __iter__(self) -> Iterator[str]:
        return (key for key, task in self._tasks.items() if task.length)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Known(Mapping[str, Known]):
    """The tasks a child may be delegated from, each made a `Known` when asked for: a check
    reads a parent chain, not every task of the ledger."""

    def __init__(self, tasks: Mapping[str, TaskFacts]) -> None:
        self._tasks = tasks

    def __getitem__(self, key: str) -> Known:
        task = self._tasks[key]
        return Known(task.envelope, task.state, task.holder)

    def __iter__(self) -> Iterator[str]:
        return iter(self._tasks)

    def __len__(self) -> int:
        return len(self._tasks)


V = TypeVar("V")


class _Layered(MutableMapping[str, V]):
    """A mapping read from `base` when asked, with keys set over it and removed from it:
    a candidate's edges are laid over the ledger's while it is checked."""

    def __init__(self, base: Mapping[str, V]) -> None:
        self._base = base
        self._set: dict[str, V] = {}
        self._hidden: set[str] = set()

    def __getitem__(self, key: str) -> V:
        if key in self._set:
            return self._set[key]
        if key in self._hidden:
            raise KeyError(key)
        return self._base[key]

    def __setitem__(self, key: str, value: V) -> None:
        self._set[key] = value
        self._hidden.discard(key)

    def __delitem__(self, key: str) -> None:
        self._set.pop(key, None)
        self._hidden.add(key)

    def __iter__(self) -> Iterator[str]:
        yield from self._set
        yield from (k for k in self._base if k not in self._set and k not in self._hidden)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _restore(mapping: Any, key: str, value: object, present: bool | None = None) -> None:
    """Put `key` back as it was: `value`, or absent (`present` False, or None: when `value`
    is None, which no value of those mappings but a parent is)."""
    if (value is None and present is None) or present is False:
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
