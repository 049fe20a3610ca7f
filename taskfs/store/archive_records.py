"""The archive's files (`.taskfs/archive/*.yaml`, `taskfs.readmodel.archive`) as a commit holds
them, and an archived task's own files, read from the commit whose tree still holds them.

A row is the archive's word, and an archive file is a file anyone could have committed: what an
archived task was is what the commit before the archive that took it held (`taken_from`: the
first parent of the commit that added the file naming it), never the row, nor the commit the
file itself names. The decisions that rest on an archived task (a claim's dependencies, a line
of successors, `show`) read it from there (`held`); `audit` compares every row with it."""

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


def archived_in(repo: Repository, task_id: str) -> str | None:
    """The commit that archived `task_id`, as history says: the one that added the latest
    archive file naming it (None: no archive names it)."""
    found = _latest_file(repo, task_id)
    if found is None:
        return None
    added = repo.git.file_additions([found]).get(found)
    return added.commit if added is not None else None


def taken_from(repo: Repository, task_id: str) -> str | None:
    """The commit an archive took `task_id` from: the first parent of `archived_in`'s."""
    commit = archived_in(repo, task_id)
    return repo.git.verify(f"{commit}^1") if commit is not None else None


def _latest_file(repo: Repository, task_id: str) -> str | None:
    latest = None
    for path, record in records(repo)[0]:  # in name order: the latest wins, as `archived`
        if any(summary.id == task_id for summary in record.tasks):
            latest = path
    return latest


def held(repo: Repository, rev: str, task_ids: Collection[str]) -> dict[str, Summary | None]:
    """Each task's projection as commit `rev` holds its files (None: it holds none), read by
    the reader the read model's rows are made with."""
    from taskfs.store.commit_view import CommitView
    from taskfs.store.intake_reader import project

    wanted = sorted(t for t in task_ids if layout.is_task_id(t))
    out: dict[str, Summary | None] = {}
    for start in range(0, len(wanted), 1000):
        chunk = wanted[start : start + 1000]
        view = CommitView(repo, repo.git.head_files([repo.task_rel(t) for t in chunk], rev=rev))
        for task_id in chunk:
            out[task_id] = project(view, task_id) if view.has_task(task_id) else None
    return out


def archived_truth(repo: Repository, task_ids: Collection[str]) -> dict[str, Summary]:
    """The archived tasks among `task_ids` as the commits the archives took them from held
    them (`taken_from`), as the archive keeps a row (`as_archived`): what a decision reads of
    an archived task. A task an archive names but no such commit holds is left out (it does
    not exist, as far as a rule can tell)."""
    out: dict[str, Summary] = {}
    for task_id in task_ids:
        rev = taken_from(repo, task_id)
        found = held(repo, rev, [task_id]).get(task_id) if rev is not None else None
        if found is not None:
            out[task_id] = archive.as_archived(found)
    return out


def once_named(repo: Repository, task_ids: Collection[str]) -> set[str]:
    """The ids among `task_ids` that an archive file HEAD's history edited or removed named
    before: an archived task's id stays taken even after its record was tampered with (audit
    names the tampering). One `git log` of the archive's folder; no read when nothing was."""
    from taskfs.core import yamlio

    wanted = set(task_ids)
    changed = repo.git.changes_after_creation(ARCHIVE_DIR) if wanted else []
    if not changed:
        return set()
    found: set[str] = set()
    with repo.git.reader() as reader:
        for author, _status, path in changed:
            before = reader.read(f"{author.commit}^:{path}")
            try:
                record = archive.read(yamlio.load(before[1])) if before is not None else None
            except (yamlio.YamlError, ValueError):
                continue
            found |= {row.id for row in record.tasks} & wanted if record is not None else set()
    return found


def archived_task(repo: Repository, task_id: str) -> Task | None:
    """An archived task, read whole from the commit whose tree still holds it (its evidence
    too: `show` and `log` print it); None when the task is not archived."""
    from taskfs.store.task_reader import load_task

    view = archived_view(repo, task_id)
    return None if view is None else load_task(view, task_id)


def archived_tasks(repo: Repository, task_ids: Collection[str]) -> dict[str, Task]:
    """The archived tasks among `task_ids`, each read as `archived_task` reads it (`show`'s
    reading, from the commit the archive took it from): what a report says of a task it names
    that the working tree no longer holds. One read of the archive's files for them all."""
    from taskfs.store.task_reader import load_task

    wanted = {t for t in task_ids if layout.is_task_id(t) and not repo.has_task(t)}
    latest: dict[str, str] = {}
    for path, record in records(repo)[0] if wanted else []:  # in name order: the latest wins
        latest.update((row.id, path) for row in record.tasks if row.id in wanted)
    added = repo.git.file_additions(sorted(set(latest.values()))) if latest else {}
    out: dict[str, Task] = {}
    for task_id, path in sorted(latest.items()):
        commit = added[path].commit if path in added else None
        view = _view_at(repo, task_id, repo.git.verify(f"{commit}^1") if commit else None)
        if view is not None:
            out[task_id] = load_task(view, task_id)
    return out


# What may arrive in an archived task's folder after the archive: a message written on another
# clone before it knew of the archive (and a read mark of one), merged in by a later sync.
LATE = (layout.MESSAGES, layout.READS)


def late_files(repo: Repository, task_id: str) -> dict[str, bytes]:
    """The files of the kinds `LATE` that the working tree holds in the folder of a task that
    is no task there (archived): they are the task's, as the archived ones are."""
    import os

    out: dict[str, bytes] = {}
    for kind in LATE:
        folder = repo.task_dir(task_id) / kind
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(layout.SUFFIX))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for name in names:
            try:
                out[repo.task_rel(task_id, kind, name)] = (folder / name).read_bytes()
            except OSError:
                continue
    return out


def home(repo: Repository, task_id: str) -> Repository:
    """Where a task's files are read: the working tree, or, for a task an archive took out of
    it, the commit it was taken from (with what arrived since: `archived_view`)."""
    if repo.has_task(task_id):
        return repo
    return archived_view(repo, task_id) or repo


def archived_view(repo: Repository, task_id: str) -> CommitView | None:
    """The files of an archived task as the commit the archive took it from held them, with
    what arrived in its folder since (`late_files`): its messages and read marks."""
    if not layout.is_task_id(task_id) or repo.has_task(task_id):
        return None
    return _view_at(repo, task_id, taken_from(repo, task_id))


def _view_at(repo: Repository, task_id: str, rev: str | None) -> CommitView | None:
    """`archived_view` of a task the archive took from commit `rev` (None: from none)."""
    from taskfs.store.commit_view import CommitView

    if rev is None:
        return None
    try:
        files = repo.git.head_files([repo.task_rel(task_id)], rev=rev)
    except TaskfsError:
        return None  # the commit is gone from this clone's history
    return CommitView(repo, {**files, **late_files(repo, task_id)}) if files else None
