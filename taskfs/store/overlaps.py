"""The overlaps the ledger cache keeps in every task's row (`Summary.overlaps`): the tasks, in
any state, owning an entry that overlaps one of its own. `taskfs.store.index` keeps them right
as envelopes come, change and go, querying only the changed envelopes against the others.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from taskfs.readmodel.cache import CacheRow

if TYPE_CHECKING:
    from taskfs.store.entry_places import Places

# Up to this many changed envelopes are queried against the entries near them alone
# (`taskfs.store.entry_places`); past it every entry is indexed once.
NEARBY_LIMIT = 64


def keep(row: CacheRow, was: CacheRow) -> None:
    """`row`, built again from an envelope with the same bytes as `was`'s, overlaps the same
    tasks: it keeps `was`'s overlaps instead of querying them again."""
    if row.summary is not None and row.summary.overlaps != was.overlaps:
        row.summary = row.summary._replace(overlaps=was.overlaps)


def update(
    rows: dict[str, CacheRow], rebuilt: set[str], gone: set[str], places: Places | None = None
) -> set[str]:
    """Keep every row's `overlaps` right after the envelopes in `rebuilt` changed and the tasks
    in `gone` went away: only the changed envelopes are queried, against all the others.
    Overlap is decided on the two envelopes' entries alone, whatever the tasks' states.
    Returns the tasks whose overlaps changed."""
    from taskfs.core import globs

    stale = rebuilt | gone
    entries = [
        (task_id, raw)
        for task_id, row in rows.items()
        if row.summary is not None
        for raw in row.summary.envelope.files_and_interfaces
    ]
    queries = [
        raw
        for t in rebuilt
        if (s := rows[t].summary) is not None
        for raw in s.envelope.files_and_interfaces
    ]
    index: globs.OwnershipIndex[str] = globs.OwnershipIndex()
    if places is not None and len(rebuilt) <= NEARBY_LIMIT:  # only the entries near the queries
        entries = places.nearby(entries, queries)
        places.save()
    for task_id, raw in entries:
        index.add(task_id, raw)
    found: dict[str, set[str]] = {task_id: set() for task_id in rebuilt}
    for task_id in rebuilt:
        summary = rows[task_id].summary
        for raw in summary.envelope.files_and_interfaces if summary is not None else ():
            for other, _entry, _witness in index.conflicts(globs.parse_entry(raw)):
                if other != task_id:
                    found[task_id].add(other)
                    found.setdefault(other, set()).add(task_id)
    # Only these rows can change: the queried ones, those they overlap now, and those that
    # named a changed or gone task before (most rows name none: one look at each).
    named = {t for t, row in rows.items() if row.overlaps and not stale.isdisjoint(row.overlaps)}
    changed: set[str] = set()
    for task_id in sorted(rebuilt | found.keys() | named):
        row = rows[task_id]
        if row.summary is None:
            continue
        kept = {o for o in row.overlaps if o not in stale} if task_id not in rebuilt else set()
        overlaps = tuple(sorted(kept | found.get(task_id, set())))
        if overlaps != row.overlaps:
            # A new row, not the one changed: the rows may be shared with what was read.
            rows[task_id] = dataclasses.replace(
                row, summary=row.summary._replace(overlaps=overlaps)
            )
            changed.add(task_id)
    return changed
