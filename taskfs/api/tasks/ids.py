"""Which ids a new task may take: the one rule every door that makes a task id asks.

An id is taken by a task the working tree holds, by a request not yet a task (an intake), and
by an archived task: history, the archive's records and the rules (dependencies, lineage) still
name it. `new`, `intake open` (and every door that opens a request: MCP, A2A, interlink), the
watcher's drops, a peer's envelope opening a task over interlink, and `retry` and `reassign`
naming their new task all ask `taken`, and every id taskfs generates comes from `fresh_id`,
which asks it too: an id one door refuses, no other door takes.

The requester's own open request is the one folder that does not take its id from the
requester's envelope: sending the whole envelope on it submits the task (contract section 12).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING

from taskfs import i18n
from taskfs.core import layout
from taskfs.errors import Problem, TaskfsError, problem
from taskfs.store.repository import Repository

if TYPE_CHECKING:
    from taskfs.readmodel.ledger import Ledger


def taken(
    repo: Repository,
    task_ids: Iterable[str],
    actor: str | None = None,
    *,
    ledger: Ledger | None = None,
    placed: Collection[str] = (),
    generated: Collection[str] = (),
) -> dict[str, Problem]:
    """The ids among `task_ids` that a new task of `actor` may not take, each with its
    `task_exists`. `actor`: whose envelope it is (its own open request does not take its id;
    None: any folder does). `placed`: ids whose folder is the new task's own (an envelope
    dropped in place), so only an archive takes them. `generated`: ids `fresh_id` made, never
    named before, so the archive's history is not searched for them."""
    if ledger is None:
        from taskfs.store.index import summaries

        ledger = summaries(repo)
    out: dict[str, Problem] = {}
    for task_id in dict.fromkeys(task_ids):
        if ledger.is_archived(task_id):
            out[task_id] = archived(task_id)
        elif task_id not in placed and _folder_taken(repo, task_id, actor):
            out[task_id] = problem("task_exists", field="id", id=task_id)
    named = [t for t in dict.fromkeys(task_ids) if t not in out and t not in generated]
    if named:
        from taskfs.store.archive_records import once_named

        # An id an archive once named stays taken, though its record was edited or removed
        # since (audit names that).
        for task_id in sorted(once_named(repo, named)):
            out[task_id] = archived(task_id)
    return out


def refuse_taken(repo: Repository, task_ids: Iterable[str], actor: str | None = None) -> None:
    """`taken`, raised: every id that is taken, named at once."""
    found = taken(repo, task_ids, actor)
    if found:
        raise TaskfsError(list(found.values()))


def archived(task_id: str) -> Problem:
    """`task_exists` for an id an archive took: the task is gone from `ls`, so say where."""
    why = i18n.said(
        " (archived: `taskfs show {id}` and `taskfs ls --archived` still show it; choose "
        "another id)",
        id=task_id,
    )
    return problem("task_exists", field="id", id=task_id, archived=True, archived_text=why)


def fresh_id(repo: Repository, avoid: Iterable[str] = (), *, ledger: Ledger | None = None) -> str:
    """A generated id that no task, request or archived task takes, and not in `avoid`."""
    kept = set(avoid)
    while True:
        candidate = layout.new_task_id()
        if candidate in kept:
            continue
        if not taken(repo, [candidate], ledger=ledger, generated=[candidate]):
            return candidate


def _folder_taken(repo: Repository, task_id: str, actor: str | None) -> bool:
    """Whether `task_id`'s folder is another's: a task, or a request that is not `actor`'s own
    open one."""
    if not repo.task_dir(task_id).exists():
        return False
    if actor is None:
        return True
    from taskfs.store.intake_reader import is_intake, load_intake

    if not is_intake(repo, task_id):
        return True
    try:
        intake, _problems = load_intake(repo, task_id)
    except TaskfsError:
        return True
    return not (intake.is_open and intake.requester == actor)
