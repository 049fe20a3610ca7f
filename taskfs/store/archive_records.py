"""The archive's files (`.taskfs/archive/*.yaml`, `taskfs.readmodel.archive`) as a commit holds
them, and an archived task's own files, read from the commit whose tree still holds them.

A row is the archive's word, and an archive file is a file anyone could have committed: what an
archived task was is what the commit before the archive that took it held (`taken_from`: the
first parent of the commit that added the file naming it), never the row, nor the commit the
file itself names. The decisions that rest on an archived task (a claim's dependencies, a line
of successors, `show`) read it from there (`held`); `audit` compares every row with it."""

from __future__ import annotations

from collections.abc import Collection, Mapping

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
    """Each archived task's row (the archive's word) and the commit the archive took it from
    (`taken_from`, as commit `rev`'s history says; None when it cannot say), as of `rev`."""
    found = records(repo, rev, paths)[0]
    files = _latest_files(found)
    taken = _taken_from_files(repo, set(files.values()), rev)
    return {
        task_id: (summary, taken.get(files[task_id]))
        for task_id, (summary, _named) in archive.latest(found).items()
    }


def archived_in(repo: Repository, task_id: str) -> str | None:
    """The commit that archived `task_id`, as history says: the one that added the latest
    archive file naming it (None: no archive names it)."""
    found = _latest_files(records(repo)[0], {task_id}).get(task_id)
    if found is None:
        return None
    added = repo.git.file_additions([found]).get(found)
    return added.commit if added is not None else None


def taken_from(repo: Repository, task_id: str) -> str | None:
    """The commit an archive took `task_id` from: the first parent of `archived_in`'s."""
    return taken_from_many(repo, [task_id]).get(task_id)


def taken_from_many(repo: Repository, task_ids: Collection[str]) -> dict[str, str | None]:
    """`taken_from` of each of `task_ids` (None: no archive names it, or history cannot say),
    the archive's files read once."""
    if not task_ids:
        return {}
    files = _latest_files(records(repo)[0], set(task_ids))
    taken = _taken_from_files(repo, set(files.values()), "HEAD")
    return {t: taken.get(files[t]) if t in files else None for t in task_ids}


def _latest_files(
    found: list[tuple[str, archive.Record]], wanted: Collection[str] | None = None
) -> dict[str, str]:
    """The latest archive file (by name, as `archive.latest` takes its row) naming each task
    (of `wanted`, when given)."""
    out: dict[str, str] = {}
    for path, record in sorted(found, key=lambda item: item[0]):
        for summary in record.tasks:
            if wanted is None or summary.id in wanted:
                out[summary.id] = path
    return out


def _taken_from_files(repo: Repository, paths: Collection[str], rev: str) -> dict[str, str]:
    """The first parent of the commit of `rev`'s history that added each archive file of
    `paths`: the commit the archive that wrote it took its tasks from."""
    if not paths:
        return {}
    added = repo.git.file_additions(sorted(paths), revisions=(rev,))
    parents: dict[str, str | None] = {}
    out: dict[str, str] = {}
    for path, author in added.items():
        if author.commit not in parents:
            parents[author.commit] = repo.git.verify(f"{author.commit}^1")
        parent = parents[author.commit]
        if path in paths and parent is not None:
            out[path] = parent
    return out


def held(repo: Repository, rev: str, task_ids: Collection[str]) -> dict[str, Summary | None]:
    """Each task's projection as commit `rev` holds its files (None: it holds none), read by
    the reader the read model's rows are made with."""
    from taskfs.store.commit_view import CommitView
    from taskfs.store.intake_reader import project
    from taskfs.store.key_history import act_keys, reading

    wanted = sorted(t for t in task_ids if layout.is_task_id(t))
    out: dict[str, Summary | None] = {}
    with act_keys(repo, reading(wanted)) as key_of:
        for start in range(0, len(wanted), 1000):
            chunk = wanted[start : start + 1000]
            files = repo.git.head_files([repo.task_rel(t) for t in chunk], rev=rev)
            view = CommitView(repo, files)
            for task_id in chunk:
                out[task_id] = project(view, task_id, key_of) if view.has_task(task_id) else None
    return out


def archived_truth(repo: Repository, task_ids: Collection[str]) -> dict[str, Summary]:
    """The archived tasks among `task_ids` as the commits the archives took them from held
    them (`taken_from`), as the archive keeps a row (`as_archived`): what a decision reads of
    an archived task. A task an archive names but no such commit holds is left out (it does
    not exist, as far as a rule can tell)."""
    return truth_at(repo, taken_from_many(repo, task_ids))


def truth_at(repo: Repository, taken: Mapping[str, str | None]) -> dict[str, Summary]:
    """Each task of `taken` as the commit named beside it (the one an archive took it from)
    held it, as the archive keeps a row (`as_archived`); one a commit does not hold, or none
    is named for, is left out."""
    by_commit: dict[str, list[str]] = {}
    for task_id, rev in taken.items():
        if rev is not None:
            by_commit.setdefault(rev, []).append(task_id)
    out: dict[str, Summary] = {}
    for rev, ids in sorted(by_commit.items()):
        try:
            found = held(repo, rev, ids)
        except TaskfsError:
            continue  # the commit is gone from this clone's history
        out.update({t: archive.as_archived(s) for t, s in found.items() if s is not None})
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
    out: dict[str, Task] = {}
    for task_id, rev in sorted(taken_from_many(repo, wanted).items()):
        view = view_at(repo, task_id, rev)
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
    return view_at(repo, task_id, taken_from(repo, task_id))


def view_at(repo: Repository, task_id: str, rev: str | None) -> CommitView | None:
    """The files of archived task `task_id` as commit `rev` (the one the archive took it
    from; None: none) held them, with what arrived in its folder since; None when that commit
    holds none or is gone from this clone's history."""
    from taskfs.store.commit_view import CommitView

    if rev is None:
        return None
    try:
        files = repo.git.head_files([repo.task_rel(task_id)], rev=rev)
    except TaskfsError:
        return None  # the commit is gone from this clone's history
    return CommitView(repo, {**files, **late_files(repo, task_id)}) if files else None
