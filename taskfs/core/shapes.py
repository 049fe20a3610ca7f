"""Every JSON shape taskfs answers with (contract section 4), in one leaf module.

The CLI, the MCP server, the ledger cache and the prepared answers of the fast paths all build
their documents here, so that a listing printed from the cache is byte for byte the listing
click prints: a document is `{"schemaVersion": 1, "ok": ..., ...}`, a refusal is a document
with `ok` false and the problems as `errors`, a task's row in `ls` and `ready` is `task_row`,
and a transition's answer is `transition`. Documents are printed with `json.dumps(doc,
ensure_ascii=False)`; `listing_head` and `LISTING_TAIL` are what that prints around the rows
of a listing, for the answers that are stored as text.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` costs the fast paths milliseconds; type checkers know this
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from taskfs.errors import Problem

SCHEMA_VERSION = 1
LISTING_TAIL = "]}"


def document(ok: bool, **fields: Any) -> dict[str, Any]:
    """An answer: the schema version, whether it succeeded, then its own fields."""
    return {"schemaVersion": SCHEMA_VERSION, "ok": ok, **fields}


def refusal(problems: Iterable[Problem]) -> dict[str, Any]:
    """A refused command's answer: every problem, each with its contract code."""
    return document(False, errors=[p.to_json() for p in problems])


def task_row(
    task_id: str,
    state: str,
    *,
    sender: str | None,
    recipient: str | None,
    context_id: str | None,
    holder: str | None,
    superseded: int,
    priority: int | None = None,
    labels: Iterable[str] = (),
) -> dict[str, Any]:
    """A task's row in `ls` and `ready`; `priority` and `labels` where the envelope has them."""
    row: dict[str, Any] = {
        "id": task_id,
        "state": state,
        "from": sender,
        "to": recipient,
        "contextID": context_id,
        "holder": holder,
        "superseded": superseded,
    }
    if priority is not None:
        row["priority"] = priority
    if labels:
        row["labels"] = list(labels)
    return row


# The fields a task's row may hold, in order: `task_row`'s (`priority` and `labels` where the
# envelope names them), and `archived` for a task `taskfs archive` took out of the working
# tree. The read model's store keeps each row's values in this order, for the listings'
# filters (`taskfs.readmodel.filters`).
_EVERY_FIELD = task_row(
    "", "", sender=None, recipient=None, context_id=None, holder=None, superseded=0,
    priority=0, labels=("",),
)  # fmt: skip
ROW_FIELDS: tuple[str, ...] = (*_EVERY_FIELD, "archived")


def listing_head(schema_version: int = SCHEMA_VERSION) -> str:
    """What `json.dumps(document(True, tasks=rows), ensure_ascii=False)` prints before the
    rows; the rows follow joined by ", ", then `LISTING_TAIL`."""
    return f'{{"schemaVersion": {schema_version}, "ok": true, "tasks": ['


def listing_text(rows: Iterable[str], head: str | None = None) -> str:
    """A listing document as text, from its rows already printed as JSON."""
    return f"{listing_head() if head is None else head}{', '.join(rows)}{LISTING_TAIL}"


def transition(task_id: str, state: str, commit: str | None) -> dict[str, Any]:
    """What a transition (claim, move, complete, refuse, ...) answers besides `ok`."""
    return {"id": task_id, "state": state, "commit": commit}
