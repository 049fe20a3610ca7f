"""A listing's filters, applied in one place (issue 36).

`ls` and `ready` take their filters from the option table (`taskfs.cli.options`: an option
with a `field`), as pairs of a field of a task's row (contract section 4: `state`, `to`,
`contextID`, `archived`, ...) and the value it must equal. A flag filter asks for True when
given and False when not, and a row without the field has False there (a live task's row says
nothing of `archived`). `matches` applies them to a row, `where` as the store's query over the
rows it keeps (`taskfs.readmodel.db`); both mean the same, so the answer does not depend on
whether a store answered it.

Imports nothing: the fast path applies them.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    Filters = tuple[tuple[str, Any], ...]

# The fields the store keeps in columns of their own (indexed); any other is read from the row.
COLUMNS = {"state": "state", "to": "recipient", "contextID": "context", "archived": "archived"}


def matches(row: Mapping[str, Any], filters: Filters) -> bool:
    """Whether a task's row (contract section 4) passes every filter."""
    for field, value in filters:
        held = row.get(field, False if type(value) is bool else None)
        if held != value or type(held) is not type(value):
            return False
    return True


def where(filters: Filters) -> tuple[str, list[Any]]:
    """The filters as the store's query: a condition over its `listing` rows and its values."""
    clauses: list[str] = []
    values: list[Any] = []
    for field, value in filters:
        column = COLUMNS.get(field) or f"json_extract(shown, '$.{field}')"
        if type(value) is bool:
            clauses.append(f"coalesce({column}, 0) = ?")
            values.append(int(value))
        else:
            clauses.append(f"{column} IS ?")
            values.append(value)
    return " AND ".join(clauses) or "1", values
