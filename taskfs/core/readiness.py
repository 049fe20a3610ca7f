"""Which tasks a claim would succeed on: dependencies, rivals over owned files, delegation.

Pure: the tasks are passed in as summaries (`taskfs.readmodel.projection.Summary`, or anything
with the same fields). `ready` lists what `claimable` answers, and the claim's own gates
(`taskfs.api.lifecycle.transitions`) call the same functions, so the two can never disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Protocol, TypeVar

from taskfs.core.facts import EnvelopeFacts, TaskFacts
from taskfs.core.graph import depends_on
from taskfs.core.lifecycle import TERMINAL
from taskfs.core.shown import offered_to


class Ranked(TaskFacts, Protocol):
    """A task with what the ledger cache keeps of its relations to the others."""

    @property
    def problems(self) -> tuple[str, ...]: ...
    @property
    def overlaps(self) -> tuple[str, ...]:
        """The tasks (any state) owning an entry that overlaps one of this task's."""
        ...


T = TypeVar("T", bound=TaskFacts)
R = TypeVar("R", bound=Ranked)


def dependency_graph(envelopes: Iterable[EnvelopeFacts]) -> dict[str, tuple[str, ...]]:
    return {e.id: tuple(e.depends_on) for e in envelopes if e.id is not None}


def parent_map(envelopes: Iterable[EnvelopeFacts]) -> dict[str, str | None]:
    return {e.id: e.parent for e in envelopes if e.id is not None}


class _Edges(Mapping[str, tuple[str, ...]]):
    """Each task's `dependsOn`, looked up in the tasks when asked: a rule that walks a few
    edges reads a few tasks, not the ledger (`taskfs.store.index` keeps it in a store)."""

    def __init__(self, tasks: Mapping[str, TaskFacts]) -> None:
        self._tasks = tasks

    def __getitem__(self, key: str) -> tuple[str, ...]:
        return tuple(self._tasks[key].envelope.depends_on)

    def __iter__(self) -> Iterator[str]:
        return iter(self._tasks)

    def __len__(self) -> int:
        return len(self._tasks)


class _Parents(Mapping[str, "str | None"]):
    """Each task's `parent`, looked up when asked (see `_Edges`)."""

    def __init__(self, tasks: Mapping[str, TaskFacts]) -> None:
        self._tasks = tasks

    def __getitem__(self, key: str) -> str | None:
        return self._tasks[key].envelope.parent

    def __iter__(self) -> Iterator[str]:
        return iter(self._tasks)

    def __len__(self) -> int:
        return len(self._tasks)


def relations(
    tasks: Mapping[str, TaskFacts],
) -> tuple[Mapping[str, tuple[str, ...]], Mapping[str, str | None]]:
    """The dependency graph and the parent map of `tasks`, read from them as a rule walks
    them (`ordered`), instead of built whole."""
    return _Edges(tasks), _Parents(tasks)


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


def open_tasks(tasks: Mapping[str, T]) -> list[T]:
    return [t for t in tasks.values() if t.state not in TERMINAL]


def unfinished_dependencies(task: TaskFacts, tasks: Mapping[str, TaskFacts]) -> list[str]:
    """The tasks `task` depends on that are not completed (or do not exist yet)."""
    return [
        dep
        for dep in task.envelope.depends_on
        if dep not in tasks or tasks[dep].state != "completed"
    ]


def rivals(
    task: Ranked,
    tasks: Mapping[str, R],
    graph: Mapping[str, Iterable[str]],
    parents: Mapping[str, str | None],
) -> list[R]:
    """The other open tasks owning what `task` owns with nothing ordering the two (contract
    section 5), from the overlaps the ledger cache keeps."""
    return [
        tasks[other]
        for other in task.overlaps
        if other in tasks
        and tasks[other].state not in TERMINAL
        and tasks[other].length
        and not ordered(graph, parents, task.id, other)
    ]


def claimable(
    tasks: Mapping[str, R], agent: str | None = None, among: Iterable[R] | None = None
) -> list[R]:
    """The tasks a claim would succeed on now (by `agent`, when one is named), in the order
    given: submitted, taken in, readable, every dependency completed, no open rival. Only
    those `among` (all of `tasks` when None) are asked about; `tasks` answers the lookups."""
    candidates = [
        task
        for task in (tasks.values() if among is None else among)
        if task.state == "submitted"
        and task.length
        and not task.problems
        and offered_to(task.envelope.recipient, agent)
        and not unfinished_dependencies(task, tasks)
    ]
    if not any(task.overlaps for task in candidates):
        return candidates  # no rival to order
    graph, parents = relations(tasks)
    return [task for task in candidates if not rivals(task, tasks, graph, parents)]
