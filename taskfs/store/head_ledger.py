"""The ledger against HEAD: files that no commit holds ("loose"), and tasks as HEAD holds them.

Decisions rest on committed files only: a status file written by hand, an evidence file edited
in place, an envelope dropped into a folder and never taken in, none of them may unblock a
claim, buy a completion or be built upon. Writers ask `loose` about the task folders a decision
reads (a `git diff HEAD` and a `git ls-files --others` scoped to those folders, so the cost
does not grow with the ledger; a few folders are first compared with HEAD's trees byte for
byte, which needs no read of git's index), refuse to write on a loose task
(`ledger_file_uncommitted`), and read the others as HEAD holds them (`at_head`).

Two kinds of file in a task folder are not loose in this sense: a message file written into
`messages/` and not committed yet is a delivery waiting for `deliver` (which checks it and
commits it with the transition it asks for; until then nothing reads it as part of the
ledger), and a refusal report of the watcher is a note, never a ledger entry.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING

from taskfs.core import layout
from taskfs.core.layout import MESSAGES
from taskfs.errors import Problem, TaskfsError, problem
from taskfs.store.repository import Repository

if TYPE_CHECKING:
    from taskfs.readmodel.ledger import Ledger
    from taskfs.readmodel.projection import Summary

# Past this many task folders one pathspec for the whole tasks folder is cheaper.
_SCOPED_MAX = 200
# Up to this many task folders are compared with HEAD in-process first (`Git.as_at_head`).
_COMPARED_MAX = 8
# A refusal names at most this many files (a whole folder dropped in can hold many).
_NAMED_MAX = 10


def loose(repo: Repository, task_ids: Iterable[str] | None = None) -> dict[str, list[str]]:
    """The loose ledger files of the tasks `task_ids` (all tasks when None), by task id."""
    # Only task ids reach git as paths: anything else names no folder of the ledger.
    wanted = None if task_ids is None else sorted({t for t in task_ids if layout.is_task_id(t)})
    if wanted is not None and not wanted:
        return {}
    if wanted is None or len(wanted) > _SCOPED_MAX:
        specs = [repo.tasks_rel]
    else:
        specs = [repo.task_rel(t) for t in wanted]
        # A writer asks this of the task it writes to on every write: a few folders found
        # as HEAD holds them need no `git diff`, which reads git's whole index.
        if len(wanted) <= _COMPARED_MAX and repo.git.as_at_head(specs):
            return {}
    prefix = repo.tasks_rel + "/"
    out: dict[str, list[str]] = {}
    for kind, path in repo.git.not_at_head(specs):
        if not path.startswith(prefix):
            continue
        parts = path[len(prefix) :].split("/")
        if len(parts) < 2 or (wanted is not None and parts[0] not in wanted):
            continue  # a file dropped at the top of the tasks folder is the watcher's
        if kind == "untracked" and (_pending_message(parts) or _report(parts)):
            continue
        out.setdefault(parts[0], []).append(path)
    return {task_id: sorted(paths) for task_id, paths in out.items()}


def _pending_message(parts: list[str]) -> bool:
    return len(parts) == 3 and parts[1] == MESSAGES


def _report(parts: list[str]) -> bool:
    from taskfs.core import layout

    return layout.is_report(parts[-2:]) if len(parts) == 2 else False


def refusals(repo: Repository, found: Mapping[str, list[str]]) -> list[Problem]:
    """`ledger_file_uncommitted` for each loose file in `found` (at most `_NAMED_MAX`)."""
    out: list[Problem] = []
    paths = sorted(p for files in found.values() for p in files)
    for path in paths[:_NAMED_MAX]:
        out.append(problem("ledger_file_uncommitted", path=path, commit="HEAD"))
    if len(paths) > _NAMED_MAX:
        out[-1] = problem(
            "ledger_file_uncommitted",
            path=f"{paths[_NAMED_MAX - 1]} (and {len(paths) - _NAMED_MAX} more)",
            commit="HEAD",
        )
    return out


def refuse_loose(repo: Repository, task_id: str) -> None:
    """Raise `ledger_file_uncommitted` when the task's folder holds a loose ledger file: no
    write may build on it."""
    found = loose(repo, [task_id])
    if found:
        raise TaskfsError(refusals(repo, found))


def at_head(repo: Repository, task_ids: Collection[str]) -> dict[str, Summary | None]:
    """The tasks `task_ids` as HEAD holds them (None: HEAD has no such task, or cannot read
    it), whatever the working tree says."""
    if not task_ids:
        return {}  # before the imports: the full reader loads the models
    from taskfs.store.commit_view import CommitView
    from taskfs.store.intake_reader import project

    files = repo.git.head_files([repo.task_rel(t) for t in sorted(task_ids)])
    ledger = CommitView(repo, files)
    return {task_id: project(ledger, task_id) for task_id in task_ids}


def committed_folder(repo: Repository, task_id: str) -> Repository | None:
    """The task's folder as HEAD holds it, read as a `Repository` (a `CommitView`); None when
    HEAD holds no task there."""
    from taskfs.store.commit_view import CommitView

    files = repo.git.head_files([repo.task_rel(task_id)])
    view = CommitView(repo, files)
    return view if view.has_task(task_id) else None


def at_head_keyed(
    repo: Repository, task_ids: Collection[str]
) -> dict[str, tuple[Summary | None, bytes]]:
    """`at_head`, each with the key of the objects HEAD holds in its folder
    (`taskfs.store.readmodel_store.key`)."""
    if not task_ids:
        return {}
    from taskfs.store.commit_view import CommitView
    from taskfs.store.intake_reader import project
    from taskfs.store.key_history import act_keys, reading
    from taskfs.store.readmodel_store import key

    files = repo.git.head_files([repo.task_rel(t) for t in sorted(task_ids)])
    ledger = CommitView(repo, files)
    with act_keys(repo, reading(task_ids)) as key_of:
        return {
            task_id: (project(ledger, task_id, key_of), key(ledger, task_id))
            for task_id in task_ids
        }


def committed_view(repo: Repository, tasks: Ledger, found: Collection[str]) -> Ledger:
    """`tasks` with those in `found` (tasks with loose files) read as HEAD holds them (left
    out when HEAD holds no such task)."""
    changes: dict[str, Summary | None] = {}
    for task_id, summary in at_head(repo, found).items():
        previous = tasks.get(task_id)
        overlaps = previous.overlaps if previous is not None else ()
        changes[task_id] = None if summary is None else summary._replace(overlaps=overlaps)
    return tasks.overlay(changes)
