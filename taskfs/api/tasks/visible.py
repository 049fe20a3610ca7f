"""The tasks an agent may see at a door that names its caller (A2A): those it is a party to
(their sender, their recipient, their holder), and a listing of them a page at a time, the
one whose status changed last first.

A page token is a cursor, not an offset: the place (status time, id) of the last task the page
held. A task that changes between two pages moves to the front, instead of shifting every
later page by one; a task is never shown twice in one walk through the pages.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Collection
from typing import TYPE_CHECKING, NamedTuple

from taskfs.api.messages.threads import submitter
from taskfs.core import layout
from taskfs.core.layout import INTAKE, STATUS
from taskfs.errors import TaskfsError, fail
from taskfs.store.index import summaries
from taskfs.store.task_reader import read_yaml

if TYPE_CHECKING:
    from taskfs.core.intake import Intake
    from taskfs.readmodel.projection import Summary
    from taskfs.store.repository import Repository
    from taskfs.store.task_reader import Task

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100


def parties(task: Task) -> frozenset[str]:
    """Who may see and act on a task: its sender, its recipient, its holder."""
    return frozenset(p for p in (submitter(task), task.envelope.recipient, task.holder) if p)


def intake_parties(intake: Intake) -> frozenset[str]:
    """Who may see a request that is not yet a task: its requester and its recipient."""
    return frozenset(p for p in (intake.requester, intake.recipient) if p)


def intake_context(context: object, intake_id: str) -> str:
    """The context of a request: the contextID it named, else its own id (a conversation of
    one until the envelope names another)."""
    return context if isinstance(context, str) and context.strip() else intake_id


class Listed(NamedTuple):
    """A task (or a request not yet one) as a listing orders and filters it."""

    id: str
    state: str  # taskfs's state; `intake` for an open request
    context_id: str
    updated: str  # the time of its latest status (an intake's: of its latest file); "" unread
    intake: bool

    @property
    def place(self) -> tuple[str, str]:
        return self.updated, self.id


class Page(NamedTuple):
    tasks: tuple[Listed, ...]
    total: int  # every task the filters let through, on every page
    next_token: str  # "" on the last page


def page(
    repo: Repository,
    agent: str | None,
    *,
    context: str | None = None,
    states: Collection[str] | None = None,
    since: str | None = None,
    size: int = DEFAULT_PAGE_SIZE,
    token: str = "",
) -> Page:
    """The tasks `agent` is a party to (every task for None), newest status first, `size` at
    a time after the place `token` names. `context`, `states` (taskfs's states, `intake`
    for an open request) and `since` (a time as the ledger writes it: status at or after it)
    narrow them."""
    if not 1 <= size <= MAX_PAGE_SIZE:
        raise fail(
            "invalid_value", field="pageSize", reason=f"a page holds 1 to {MAX_PAGE_SIZE} tasks"
        )
    after = _place(token) if token else None
    seen: list[Listed] = []
    for row in summaries(repo).values():
        if not row.listed or (states is not None and row.state not in states):
            continue
        shown_context = intake_context(row.envelope.context_id, row.id) if row.intake else None
        if context is not None and context != (shown_context or row.envelope.context_id):
            continue
        if agent is not None and agent not in _row_parties(repo, row):
            continue
        updated = _updated(repo, row)
        if since is not None and updated < since:
            continue
        seen.append(
            Listed(row.id, row.state, shown_context or row.envelope.context_id, updated, row.intake)
        )
    seen.sort(key=lambda listed: listed.place, reverse=True)
    rest = [t for t in seen if after is None or t.place < after]
    shown = tuple(rest[:size])
    more = len(rest) > size
    return Page(shown, len(seen), _token(shown[-1].place) if more else "")


def _row_parties(repo: Repository, row: Summary) -> frozenset[str]:
    sender = row.envelope.sender
    if sender is None and not row.intake:
        # An envelope that names no sender is from whoever submitted it (`submitter`).
        first = repo.list_dir(row.id, STATUS)[:1]
        by = _field(repo, repo.task_rel(row.id, STATUS, first[0]), "by") if first else ""
        sender = by or None
    return frozenset(p for p in (sender, row.envelope.recipient, row.holder) if p)


def _updated(repo: Repository, row: Summary) -> str:
    if row.intake:
        files = repo.list_dir(row.id, INTAKE)[-1:]
        return _field(repo, repo.task_rel(row.id, INTAKE, files[0]), "at") if files else ""
    if row.head is None:
        return ""
    return _field(repo, repo.task_rel(row.id, STATUS, row.head), "at")


def _field(repo: Repository, rel: str, key: str) -> str:
    """One text field of a ledger file; "" when it cannot be read (`validate` names why)."""
    try:
        value = read_yaml(repo, rel)
    except TaskfsError:
        return ""
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, str) else ""


# -- page tokens ---------------------------------------------------------------------------


def _token(place: tuple[str, str]) -> str:
    raw = json.dumps(list(place), separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _place(token: str) -> tuple[str, str]:
    """The place a token names; `invalid_value` for a token no page gave."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        value = json.loads(raw)
    except (binascii.Error, ValueError):
        value = None
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, str) for v in value)
        and layout.is_task_id(value[1])
    ):
        return value[0], value[1]
    raise fail(
        "invalid_value",
        field="pageToken",
        reason="not a token a page of this listing gave: send the nextPageToken of the page "
        "before, or none for the first page",
    )
