"""The archive's files (`.taskfs/archive/*.yaml`, `taskfs.readmodel.archive`) as a commit holds
them, and an archived task's own files, read from the commit whose tree still holds them."""

from __future__ import annotations

from collections.abc import Collection

from taskfs.core import layout
from taskfs.core.layout import ARCHIVE_DIR
from taskfs.errors import Problem, TaskfsError, problem
from taskfs.readmodel import archive
from taskfs.readmodel.projection import Summary
from taskfs.store.repository import Repository

TYPE_CHECKING = False
if TYPE_CHECKING:
    from taskfs.store.commit_view import CommitView
    from taskfs.store.task_reader import Task


def is_archive_file(path: str) -> bool:
    """Whether a repository-relative path is one of the archive's files."""
    return (
        path.startswith(ARCHIVE_DIR + "/")
        and layout.STAMPED_NAME_RE.fullmatch(path[len(ARCHIVE_DIR) + 1 :]) is not None
    )


def records(
    repo: Repository, rev: str = "HEAD", paths: Collection[str] | None = None
) -> tuple[list[tuple[str, archive.Record]], list[Problem]]:
    """The archive files commit `rev` holds (those of `paths`, when given), in name order, and
    a `file_invalid` problem for each that is not one."""
    if paths is not None and not paths:
        return [], []
    from taskfs.core import yamlio  # only where an archive is read: the hot paths read none

    wanted = [ARCHIVE_DIR] if paths is None else sorted(paths)
    found: list[tuple[str, archive.Record]] = []
    problems: list[Problem] = []
    for path, data in sorted(repo.git.head_files(wanted, rev=rev).items()):
        if not is_archive_file(path):
            problems.append(problem("file_invalid", path=path, reason="not an archive file name"))
            continue
        try:
            found.append((path, archive.read(yamlio.load(data))))
        except (yamlio.YamlError, ValueError) as exc:
            reason = exc.reason if isinstance(exc, yamlio.YamlError) else str(exc)
            problems.append(problem("file_invalid", path=path, reason=reason))
    return found, problems


def archived(
    repo: Repository, rev: str = "HEAD", paths: Collection[str] | None = None
) -> dict[str, tuple[Summary, str | None]]:
    """Each archived task's row and the commit that holds its files, as of commit `rev`."""
    return archive.latest(records(repo, rev, paths)[0])


def archived_task(repo: Repository, task_id: str) -> Task | None:
    """An archived task, read whole from the commit whose tree still holds it (its evidence
    too: `show` and `log` print it); None when the task is not archived."""
    from taskfs.store.task_reader import load_task

    view = archived_view(repo, task_id)
    return None if view is None else load_task(view, task_id)


def archived_view(repo: Repository, task_id: str) -> CommitView | None:
    """The files of an archived task as the commit that archived it found them."""
    from taskfs.store.commit_view import CommitView

    if not layout.is_task_id(task_id) or repo.has_task(task_id):
        return None
    found = archived(repo).get(task_id)
    if found is None or found[1] is None:
        return None
    try:
        files = repo.git.head_files([repo.task_rel(task_id)], rev=found[1])
    except TaskfsError:
        return None  # the commit is gone from this clone's history
    return CommitView(repo, files) if files else None
