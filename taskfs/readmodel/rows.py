"""Changing the read model's rows (`taskfs.readmodel.view.Batch`), with everything derived
from them: each task's relations the other way round (who depends on it, was delegated or follows
from it, was found while working on it), the ownership entries filed by place and the overlaps
between tasks' entries, and whether `ready` offers a task. Only the rows that changed are written,
and only the tasks whose readiness they can change are asked again. (A store built anew is
`taskfs.readmodel.rebuild`'s.)

What the rows are read from (the full reader, git) is the caller's: `taskfs.store.index` hands
in each task's new row (`Row`: its projection, the key of its objects, where an archived task's
files are), and this module keeps the rest right.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from taskfs.core import globs
from taskfs.core.lineage import Lineage
from taskfs.core.readiness import claimable, rests_on_words
from taskfs.errors import TaskfsError
from taskfs.readmodel.db import READY, RUNS, WORDS
from taskfs.readmodel.ledger import Ledger, filed
from taskfs.readmodel.projection import Summary
from taskfs.readmodel.view import Batch, Row

RELATIONS = ("dependents", "children", "followers", "discovered")


def replace(batch: Batch, changed: Mapping[str, Row | None]) -> None:
    """Put the rows of `changed` (None: the task is gone; a row's relations are kept right
    here, whatever it says of them) and keep everything derived from them right: the
    relations and overlaps, and whether `ready` offers each task whose readiness they can
    change."""
    if not changed:
        return
    ledger = Ledger(batch)
    ids = sorted(changed)
    before = {t: (r.summary if (r := batch.row(t)) is not None and r.held else None) for t in ids}
    touched = {o for t in ids if (r := batch.row(t)) is not None for o in r.overlaps}
    edges = {t for t in ids if _edges(before[t]) != _edges(_summary(changed[t]))}
    for task_id in ids:
        _put(batch, task_id, changed[task_id], before[task_id])
    live = [t for t in ids if (s := _summary(changed[t])) is not None and not s.archived]
    _store_overlaps(batch, ledger, live)
    touched |= {o for t in ids if (r := batch.row(t)) is not None for o in r.overlaps}
    affected = set(ids) | touched | waiting_on(batch, ids) | _upstream(batch, edges)
    settle(batch, affected)


def _summary(row: Row | None) -> Summary | None:
    return None if row is None else row.summary


def _edges(summary: Summary | None) -> object:
    """What orders a task with others: its dependencies, its parent, and the task it follows
    (`taskfs.core.lineage`: what depends on that one is ordered after it too)."""
    if summary is None:
        return None
    env = summary.envelope
    return (env.depends_on, env.parent, env.follows, env.sender, env.command)


def _targets(summary: Summary | None) -> dict[str, set[str]]:
    """The tasks a task's own edges name, by the relation they hold it in the other way."""
    out: dict[str, set[str]] = {name: set() for name in RELATIONS}
    if summary is None:
        return out
    env = summary.envelope
    out["dependents"] = set(env.depends_on)
    if env.parent is not None:
        out["children"] = {env.parent}
    if env.follows is not None:
        out["followers"] = {env.follows}
    if summary.discovered_from is not None:
        out["discovered"] = {summary.discovered_from}
    return out


def _put(batch: Batch, task_id: str, new: Row | None, old: Summary | None) -> None:
    """Store `new` as the row of `task_id` with its relations the other way kept, note it in
    the rows its edges name (and no longer in those its old edges named), drop it from its old
    overlaps, and file its ownership entries."""
    current = batch.row(task_id)
    for other in current.overlaps if current else ():
        _relate(batch, other, "overlaps", task_id, add=False)
    summary = _summary(new)
    row = Row(None, held=False) if new is None else new._replace(overlaps=())
    if current is not None:
        row = row._replace(
            dependents=current.dependents,
            children=current.children,
            followers=current.followers,
            discovered=current.discovered,
        )
    batch.put(task_id, row)
    before, after = _targets(old), _targets(summary)
    for name in RELATIONS:
        for other in before[name] - after[name]:
            _relate(batch, other, name, task_id, add=False)
        for other in after[name] - before[name]:
            _relate(batch, other, name, task_id, add=True)
    live = summary is not None and not summary.archived and row.held
    entries = summary.envelope.files_and_interfaces if live and summary is not None else ()
    batch.file(task_id, [filed(raw) for raw in entries] or None)


def _relate(batch: Batch, task_id: str, name: str, other: str, *, add: bool) -> None:
    """Add `other` to (or take it from) relation `name` of the row of `task_id` (a row only
    named, when there is none yet)."""
    row = batch.row(task_id)
    if row is None:
        if not add:
            return
        row = Row(None, held=False)
    held = set(getattr(row, name))
    if (other in held) == add:
        return
    held = held | {other} if add else held - {other}
    batch.put(task_id, _with(row, name, tuple(sorted(held))))


def _with(row: Row, name: str, value: tuple[str, ...]) -> Row:
    if name == "dependents":
        return row._replace(dependents=value)
    if name == "children":
        return row._replace(children=value)
    if name == "followers":
        return row._replace(followers=value)
    if name == "discovered":
        return row._replace(discovered=value)
    summary = row.summary._replace(overlaps=value) if row.summary is not None else None
    return row._replace(overlaps=value, summary=summary)


def _store_overlaps(batch: Batch, ledger: Ledger, ids: list[str]) -> None:
    """Find and store the overlaps of the tasks `ids` (their entries filed already) with every
    task's, in both directions. Overlap is decided on the entries alone, whatever the tasks'
    states."""
    owned: dict[str, list[str]] = {}
    for task_id in ids:
        row = batch.row(task_id)
        summary = row.summary if row is not None else None
        if summary is not None and summary.envelope.files_and_interfaces:
            owned[task_id] = list(summary.envelope.files_and_interfaces)
    # The entries near any of them, looked up once (a bulk `new` stores a thousand rows): the
    # index decides which overlap, so more entries change no answer.
    near: globs.OwnershipIndex[str] = globs.OwnershipIndex()
    for other, raw in ledger.near([raw for own in owned.values() for raw in own]) if owned else ():
        near.add(other, raw)
    for task_id, own in owned.items():
        for other in _meeting(near, own) - {task_id}:
            _relate(batch, task_id, "overlaps", other, add=True)
            _relate(batch, other, "overlaps", task_id, add=True)


def _meeting(index: globs.OwnershipIndex[str], entries: list[str]) -> set[str]:
    """The tasks of `index` owning an entry that overlaps one of `entries`."""
    found: set[str] = set()
    for raw in entries:
        try:
            found.update(
                other for other, _entry, _witness in index.conflicts(globs.parse_entry(raw))
            )
        except (globs.EntryError, TaskfsError):
            continue  # an entry the envelope's own problems name
    return found


def waiting_on(batch: Batch, ids: Collection[str]) -> set[str]:
    """The tasks whose dependencies a change of `ids` can settle: those that depend on one of
    them, or on a task one of them follows, down the line (`taskfs.core.lineage`: a task
    depending on A is satisfied by A's completed successor)."""
    line = set(ids) | _reached(batch, ids, forward=("follows",))
    return Ledger(batch).dependents(line)


def affected_by(batch: Batch, ids: Collection[str]) -> set[str]:
    """The tasks whose readiness the absence of `ids` can change, besides their dependents:
    their rivals, and whatever their edges ordered."""
    return _overlapping(batch, ids) | _upstream(batch, ids)


def _overlapping(batch: Batch, ids: Iterable[str]) -> set[str]:
    return {o for row in batch.rows(ids).values() for o in row.overlaps}


def _upstream(batch: Batch, ids: Collection[str]) -> set[str]:
    """When the edges of `ids` changed (a task came, went, or was replaced), the tasks whose
    order with a rival can change: those that reach one of `ids` through `dependsOn`,
    `parent` or lineage links (a task leads to its successors), and their rivals."""
    found = _reached(batch, ids, backward=("dependents", "children"), forward=("follows",))
    return found | _overlapping(batch, found)


def _reached(
    batch: Batch,
    ids: Collection[str],
    *,
    backward: tuple[str, ...] = (),
    forward: tuple[str, ...] = (),
) -> set[str]:
    """Every task one or more steps lead to from `ids`: a step `backward` along a relation
    the rows keep the other way round (`dependents`, `children`), or `forward` along an edge a
    task's own envelope names (`follows`), asked until a step finds nothing new."""
    found: set[str] = set()
    frontier = set(ids)
    while frontier:
        step: set[str] = set()
        for row in batch.rows(sorted(frontier)).values():
            for name in backward:
                step.update(getattr(row, name))
            if row.summary is not None:
                for name in forward:
                    edge = getattr(row.summary.envelope, name)
                    if edge is not None:
                        step.add(edge)
        frontier = step - found
        found |= step
    return found


def settle(batch: Batch, affected: Collection[str] | None) -> None:
    """Ask again whether `ready` offers each task of `affected` (every task when None): the
    claim's own rules (`taskfs.core.readiness.claimable`), on the rows, noting those it offers
    on the word of a row a claim checks against git first (`offer`)."""
    ledger = Ledger(batch)
    if affected is None:
        asked = ledger.values()
        ids = {e[0] for e in batch.entries()}
    else:
        ids = set(affected)
        asked = ledger.many(sorted(ids))
    ready = {task.id: task for task in claimable(ledger, among=asked) if task.listed}
    lineage = Lineage(ledger)
    for task_id in sorted(ids):
        row = batch.row(task_id)
        offered = task_id in ready and row is not None and row.held
        if row is not None and row.summary is not None and row.summary.archived:
            offered = False
        batch.set_ready(task_id, offer(ready[task_id], ledger, lineage) if offered else 0)


def offer(task: Summary, tasks: Mapping[str, Summary], lineage: Lineage | None = None) -> int:
    """How `ready` offers a task the claim's rules let be claimed: READY, with WORDS when a
    dependency is read from a word a claim checks against git before it believes it
    (`taskfs.core.readiness.rests_on_words`), and RUNS when it has dependencies (each completed
    on a run, which a runner trusted now must have signed where runner keys are trusted)."""
    words = WORDS if rests_on_words(task, tasks, lineage) else 0
    return READY | words | (RUNS if task.envelope.depends_on else 0)
