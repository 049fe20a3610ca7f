"""A listing's filters, applied in one place (issue 36).

`ls` and `ready` take their filters from the option table (`taskfs.cli.options`: an option
with a `field`), as pairs of a field of a task's row (contract section 4: `state`, `to`,
`contextID`, `labels`, `archived`, ...) and the value it must hold; an option given more than
once gives a pair for each value, and every one must hold. What holding means is said here, by
the field alone, for every filter: a value a row's list holds (`labels`: the task carries that
label), the value itself otherwise; a flag filter asks for True when given and False when not,
and a row without the field has False there (a live task's row says nothing of `archived`).
One field is no field of the row `ls` prints: `text`, what `ls --grep` searches (the task's
objective, its request's words, its messages' texts, case folded), which holds a value found in
it whatever its case; its reader hands it in (`matches`, `keeps`: `text`).

`matches` applies the filters to a row, `keeps` to the row's values as the store keeps them
(`taskfs.core.shapes.ROW_FIELDS`, `compiled`); both mean the same, so the answer does not
depend on whether a store answered it.

Imports nothing but the leaves' shapes: the fast path applies them.
"""

from __future__ import annotations

from taskfs.core.shapes import ROW_FIELDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    Filters = tuple[tuple[str, Any], ...]

# The field of what `ls --grep` searches: no field of the row `ls` prints.
TEXT = "text"
_TEXT_PLACE = -2  # `compiled`'s place of the text (-1: a field no row has)


def _holds(held: Any, value: Any) -> bool:
    if type(value) is bool:
        return (held is True) is value
    if type(held) is list or type(held) is tuple:
        return any(_holds(one, value) for one in held)
    return held == value and type(held) is type(value)


def _found(text: str | None, value: Any) -> bool:
    return type(value) is str and text is not None and value.casefold() in text


def searches(filters: Filters) -> bool:
    """Whether the filters ask for what `ls --grep` searches (the row alone cannot answer)."""
    return any(field == TEXT for field, _value in filters)


def matches(row: Mapping[str, Any], filters: Filters, text: str | None = None) -> bool:
    """Whether a task's row (contract section 4), whose searched text is `text`, passes every
    filter."""
    return all(
        _found(text, value) if field == TEXT else _holds(row.get(field), value)
        for field, value in filters
    )


def compiled(filters: Filters) -> list[tuple[int, Any]]:
    """The filters as (place in `ROW_FIELDS`, value): -1 for a field no row has."""
    return [
        (
            _TEXT_PLACE
            if field == TEXT
            else ROW_FIELDS.index(field)
            if field in ROW_FIELDS
            else -1,
            value,
        )
        for field, value in filters
    ]


def keeps(fields: Sequence[Any], kept: list[tuple[int, Any]], text: str | None = None) -> bool:
    """Whether a row whose values are `fields` (in `ROW_FIELDS` order), whose searched text is
    `text`, passes `compiled` filters."""
    return all(
        _found(text, value) if i == _TEXT_PLACE else _holds(fields[i] if i >= 0 else None, value)
        for i, value in kept
    )
