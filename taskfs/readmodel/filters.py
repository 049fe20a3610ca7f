"""A listing's filters, applied in one place (issue 36).

`ls` and `ready` take their filters from the option table (`taskfs.cli.options`: an option
with a `field`), as pairs of a field of a task's row (contract section 4: `state`, `to`,
`contextID`, `archived`, ...) and the value it must equal. A flag filter asks for True when
given and False when not, and a row without the field has False there (a live task's row says
nothing of `archived`). `matches` applies them to a row, `keeps` to the row's values as the
store keeps them (`taskfs.core.shapes.ROW_FIELDS`, `compiled`); both mean the same, so the
answer does not depend on whether a store answered it.

Imports nothing but the leaves' shapes: the fast path applies them.
"""

from __future__ import annotations

from taskfs.core.shapes import ROW_FIELDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    Filters = tuple[tuple[str, Any], ...]


def _holds(held: Any, value: Any) -> bool:
    if type(value) is bool:
        return (held is True) is value
    return held == value and type(held) is type(value)


def matches(row: Mapping[str, Any], filters: Filters) -> bool:
    """Whether a task's row (contract section 4) passes every filter."""
    return all(_holds(row.get(field), value) for field, value in filters)


def compiled(filters: Filters) -> list[tuple[int, Any]]:
    """The filters as (place in `ROW_FIELDS`, value): -1 for a field no row has."""
    return [
        (ROW_FIELDS.index(field) if field in ROW_FIELDS else -1, value) for field, value in filters
    ]


def keeps(fields: Sequence[Any], kept: list[tuple[int, Any]]) -> bool:
    """Whether a row whose values are `fields` (in `ROW_FIELDS` order) passes `compiled`
    filters."""
    return all(_holds(fields[i] if i >= 0 else None, value) for i, value in kept)
