"""Every task of a repository's working tree (or of a `CommitView`) at once, for the rules that
compare tasks and for listings."""

from __future__ import annotations

from taskfs.errors import TaskfsError
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task, load_task


def load_all(repo: Repository) -> dict[str, Task]:
    """Every readable task by id. A task whose envelope cannot be read is left out here;
    `validate` and `audit` are where it is named."""
    tasks: dict[str, Task] = {}
    for task_id in repo.task_ids():
        try:
            tasks[task_id] = load_task(repo, task_id)
        except TaskfsError:
            continue
    return tasks
