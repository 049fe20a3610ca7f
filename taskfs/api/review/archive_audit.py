"""`audit`'s checks of the archive (`taskfs archive`, issue 31).

An archive commit removes task folders whole and adds the archive's files naming them. Its
removals are the archive's audited act, not ledger files deleted: `ledger_file_deleted` is not
said of them. What is checked instead: every task it took out was in a terminal state in the
commit before it (`archive_not_terminal`: a status file of the highest sequence number names
a state that is not terminal), and the archive was made by someone the settings of that commit
allowed (`archive.by`), who authored the commit (`archive_unauthorized`). A folder removed by a
commit that no archive file of that commit names is still `ledger_file_deleted`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from taskfs.core import layout
from taskfs.core.layout import ARCHIVE_DIR, CONFIG_PATH, STATUS, STATUS_NAME_RE
from taskfs.core.lifecycle import TERMINAL
from taskfs.errors import Problem, TaskfsError, problem
from taskfs.store.archive_records import is_archive_file, records
from taskfs.store.repository import Repository


@dataclass
class Act:
    """One archive commit: who authored it, and the archive files and tasks it added."""

    commit: str
    author: str
    files: list[str] = field(default_factory=list)
    tasks: dict[str, str] = field(default_factory=dict)  # task id -> the file naming it


def acts(repo: Repository) -> dict[str, Act]:
    """Every commit in HEAD's history that added archive files, by commit id."""
    found: dict[str, Act] = {}
    for commit, author, status, path in repo.git.path_history(ARCHIVE_DIR):
        if status == "A" and is_archive_file(path):
            found.setdefault(commit, Act(commit, author)).files.append(path)
    for act in found.values():
        read, _problems = records(repo, act.commit, act.files)
        for path, record in read:
            for summary in record.tasks:
                act.tasks[summary.id] = path
    return found


def archived_removal(repo: Repository, found: dict[str, Act], commit: str, path: str) -> bool:
    """Whether deleting `path` in `commit` was part of an archive that named its task."""
    act = found.get(commit)
    if act is None:
        return False
    prefix = repo.tasks_rel + "/"
    task_id = path[len(prefix) :].split("/", 1)[0] if path.startswith(prefix) else None
    return task_id is not None and task_id in act.tasks


def problems(repo: Repository, found: dict[str, Act]) -> list[Problem]:
    """What is wrong with each archive commit."""
    out: list[Problem] = []
    for act in found.values():
        parent = repo.git.verify(f"{act.commit}^1")
        out += _authority(repo, act, parent)
        if parent is not None:
            out += _terminal(repo, act, parent)
    return out


def _authority(repo: Repository, act: Act, parent: str | None) -> list[Problem]:
    allowed = _allowed(repo, parent)
    read, _problems = records(repo, act.commit, act.files)
    out: list[Problem] = []
    for path, record in read:
        why = ""
        if record.by not in allowed:
            why = f" for {record.by!r}, whom archive.by ({', '.join(allowed) or 'nobody'}) omits"
        elif record.by != act.author:
            why = f", though its file says {record.by!r} made it"
        if why:
            out.append(
                problem(
                    "archive_unauthorized",
                    path=path,
                    commit=act.commit[:12],
                    author=act.author,
                    why_text=why,
                )
            )
    return out


def _allowed(repo: Repository, parent: str | None) -> tuple[str, ...]:
    """Who the settings of commit `parent` allowed to archive."""
    from taskfs.core import yamlio
    from taskfs.core.config import Config, parse_config

    if parent is None:
        return Config().archive.by
    try:
        data = repo.git.head_files([CONFIG_PATH], rev=parent).get(CONFIG_PATH)
        config, _found = parse_config(yamlio.load(data) if data is not None else None)
    except (TaskfsError, yamlio.YamlError):
        config = None
    return (config or Config()).archive.by


def _terminal(repo: Repository, act: Act, parent: str) -> list[Problem]:
    """The tasks the act took out whose newest status files, in `parent`, name an open state."""
    folders = [repo.task_rel(t, STATUS) for t in sorted(act.tasks) if layout.is_task_id(t)]
    names: dict[str, list[str]] = {}
    for path in _paths(repo, parent, folders):
        task_id, _status, name = path[len(repo.tasks_rel) + 1 :].split("/", 2)
        names.setdefault(task_id, []).append(name)
    out: list[Problem] = []
    for task_id in sorted(act.tasks):
        state = _newest_state(names.get(task_id, []))
        if state is None or state not in TERMINAL:
            out.append(
                problem(
                    "archive_not_terminal",
                    id=task_id,
                    path=repo.task_rel(task_id),
                    commit=act.commit[:12],
                    state=state or "not a task",
                )
            )
    return out


def _paths(repo: Repository, rev: str, folders: list[str]) -> Iterable[str]:
    """The files below `folders` in commit `rev` (one git process per thousand folders)."""
    for start in range(0, len(folders), 1000):
        chunk = folders[start : start + 1000]
        yield from repo.git.tree_paths(rev, chunk)


def _newest_state(names: list[str]) -> str | None:
    """The state the status files of the highest sequence number name; one that is not
    terminal wins (a fork at the top that left the task open)."""
    parsed = [m for m in map(STATUS_NAME_RE.fullmatch, names) if m is not None]
    if not parsed:
        return None
    top = max(int(m["seq"]) for m in parsed)
    states = {m["state"] for m in parsed if int(m["seq"]) == top}
    open_states = sorted(states - TERMINAL)
    return open_states[0] if open_states else sorted(states)[0]
