"""Which tasks a claim would succeed on: dependencies (followed down the lineage of reassigned
and retried tasks), rivals over owned files, delegation.

Pure: the tasks are passed in as summaries (`taskfs.readmodel.projection.Summary`, or anything
with the same fields). `ready` lists what `claimable` answers, and the claim's own gates
(`taskfs.api.lifecycle.transitions`) call the same functions, so the two can never disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Protocol, TypeVar

from taskfs import i18n
from taskfs.core.facts import EnvelopeFacts, TaskFacts
from taskfs.core.graph import depends_on
from taskfs.core.lifecycle import TERMINAL
from taskfs.core.lineage import Lineage, done, lineage_edges
from taskfs.core.shown import offered_to
from taskfs.errors import Problem, problem


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
    """Each task's `dependsOn`; a task reassigned or retried also leads to its successor
    (`taskfs.core.lineage`), so that what depends on it is ordered after the successor too."""
    listed = {e.id: e for e in envelopes if e.id is not None}
    graph = {task_id: tuple(e.depends_on) for task_id, e in listed.items()}
    if any(e.follows is not None for e in listed.values()):
        for before, after in lineage_edges(listed).items():
            graph[before] = (*graph.get(before, ()), *after)
    return graph


def parent_map(envelopes: Iterable[EnvelopeFacts]) -> dict[str, str | None]:
    return {e.id: e.parent for e in envelopes if e.id is not None}


class _Edges(Mapping[str, tuple[str, ...]]):
    """Each task's `dependsOn` and its genuine successors (as `dependency_graph` has them),
    looked up in the tasks when asked: a rule that walks a few edges reads a few tasks, not
    the ledger (`taskfs.store.index` keeps it in a store)."""

    def __init__(self, tasks: Mapping[str, TaskFacts]) -> None:
        self._tasks = tasks
        self._lineage = Lineage(tasks)

    def __getitem__(self, key: str) -> tuple[str, ...]:
        depends = tuple(self._tasks[key].envelope.depends_on)
        after = self._lineage.followers(key)
        return (*depends, *after) if after else depends

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


def unfinished_dependencies(
    task: TaskFacts, tasks: Mapping[str, TaskFacts], lineage: Lineage | None = None
) -> list[str]:
    """The tasks `task` depends on that are not completed by an act that stands (or do not
    exist yet: `core.lineage.done`), neither they nor a successor down their line (a reassigned
    or retried task: `core.lineage`)."""
    pending = [dep for dep in task.envelope.depends_on if dep not in tasks or not done(tasks[dep])]
    if not pending:
        return pending
    lineage = lineage or Lineage(tasks)
    return [dep for dep in pending if lineage.completed(dep) is None]


def waiting_on(dep: str, tasks: Mapping[str, TaskFacts], lineage: Lineage | None = None) -> str:
    """An unfinished dependency as people read it: `a (working)`, `a (does not exist yet)`,
    `a (completed by an act that does not stand)`, or, when it was handed on or retried,
    `a (failed; now a-r1: working)`."""
    if dep not in tasks:
        return i18n.say("{id} (does not exist yet)", id=dep)
    if tasks[dep].state == "completed":  # and it does not count (`core.lineage.done`)
        return i18n.say("{id} (completed by an act that does not stand)", id=dep)
    now = (lineage or Lineage(tasks)).standing(dep)
    if now == dep:
        return f"{dep} ({tasks[dep].state})"
    return i18n.say(
        "{id} ({state}; now {now}: {now_state})",
        id=dep,
        state=tasks[dep].state,
        now=now,
        now_state=tasks[now].state,
    )


def dependencies_refused(
    task_id: str, depends_on: Sequence[str], states: Mapping[str, str]
) -> list[Problem]:
    """`dependencies_unresolved` when a task `depends_on` names is not completed in `states`
    (id -> state; a task not in it does not exist yet). The claim gate asks this of the ledger
    now, and `audit` of the ledger as the commit that added a claim held it."""
    pending = [dep for dep in depends_on if states.get(dep) != "completed"]
    if not pending:
        return []
    described = ", ".join(
        f"{dep} ({states[dep]})" if dep in states else i18n.say("{id} (does not exist yet)", id=dep)
        for dep in pending
    )
    return [
        problem(
            "dependencies_unresolved",
            id=task_id,
            pending=pending,
            pending_text=described,
            rule="status",
        )
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
    given: submitted, taken in, readable, every dependency completed (or a successor of it:
    `core.lineage`), no open rival. Only those `among` (all of `tasks` when None) are asked
    about; `tasks` answers the lookups."""
    lineage = Lineage(tasks)  # read only when a dependency is not completed itself
    candidates = [
        task
        for task in (tasks.values() if among is None else among)
        if task.state == "submitted"
        and task.length
        and not task.problems
        and offered_to(task.envelope.recipient, agent)
        and not unfinished_dependencies(task, tasks, lineage)
    ]
    if not any(task.overlaps for task in candidates):
        return candidates  # no rival to order
    graph, parents = relations(tasks)
    return [task for task in candidates if not rivals(task, tasks, graph, parents)]


def rests_on_words(
    task: TaskFacts, tasks: Mapping[str, TaskFacts], lineage: Lineage | None = None
) -> bool:
    """Whether a claim of `task` reads a dependency from a word, not a fact, and so checks it
    against git before it is believed (`taskfs.api.lifecycle.standing`): an archived task (its
    row is what an archive file says), or a successor down a dependency's line (its link is a
    key anyone may write). `ready` asks the same checks of the tasks this says (issue 36)."""
    depends = task.envelope.depends_on
    if not depends:
        return False
    lineage = lineage or Lineage(tasks)
    for dep in depends:
        found = tasks.get(dep)
        if found is not None and getattr(found, "archived", False):
            return True
        if lineage.line(dep):
            return True
    return False
