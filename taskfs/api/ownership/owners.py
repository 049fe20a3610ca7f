"""Who owns what: `owners`, the commit `guard`, and the git hook that runs the guard.

A path is owned by every open task with an entry that matches it; the owning agent is the
task's holder (who claimed it), else its recipient (`to`). Files under the tasks folder and
`.taskfs/` are the ledger and never owned: every agent writes them.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from taskfs.core import globs, readiness
from taskfs.core.graph import depends_on
from taskfs.core.layout import TASKFS_DIR
from taskfs.errors import Problem, TaskfsError, fail, problem
from taskfs.store import fs
from taskfs.store.all_tasks import load_all
from taskfs.store.commit_view import CommitView
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task


@dataclass(frozen=True)
class Owner:
    id: str
    to: str | None
    holder: str | None
    state: str
    entry: str
    witness: str | None = None  # for a folder: one path below it that the entry matches

    @property
    def agent(self) -> str | None:
        """The agent the path belongs to while the task is open; None until it is claimed
        when the task names no recipient."""
        return self.holder or self.to


@dataclass(frozen=True)
class PathOwners:
    path: str
    owners: tuple[Owner, ...]
    folder: bool = False


class _OpenTasks:
    """The open tasks of one ledger, indexed by their entries."""

    def __init__(self, tasks: Iterable[Task]) -> None:
        everything = {t.id: t for t in tasks}
        self.graph = readiness.dependency_graph(t.envelope for t in everything.values())
        self.tasks = {t.id: t for t in readiness.open_tasks(everything)}
        self.index: globs.OwnershipIndex[str] = globs.OwnershipIndex()
        for task in self.tasks.values():
            for raw in task.envelope.files_and_interfaces:
                self.index.add(task.id, raw)

    def owner(self, task_id: str, entry: globs.Entry, witness: str | None = None) -> Owner:
        task = self.tasks[task_id]
        return Owner(
            task_id,
            task.envelope.recipient,
            task.holder,
            task.state,
            entry.raw,
            witness,
        )

    def owners_of(self, path: str) -> tuple[Owner, ...]:
        return tuple(self.owner(i, e) for i, e in self.index.matching(path))

    def holding(self, path: str) -> tuple[Owner, ...]:
        """The owners of `path` whose tasks can be worked on now. Two open tasks own the same
        path only when one depends on the other (contract section 5), and the one that waits
        does not hold the path until the one it waits for is done."""
        found = self.owners_of(path)
        first = tuple(
            o for o in found if not any(depends_on(self.graph, o.id, x.id) for x in found if x != o)
        )
        return first or found  # a dependency cycle (refused elsewhere) leaves nobody first

    def owners_below(self, folder: str) -> tuple[Owner, ...]:
        query = globs.parse_entry(f"{_literal_glob(folder)}/**" if folder else "**")
        return tuple(self.owner(i, e, w) for i, e, w in self.index.conflicts(query))


def is_ledger_path(repo: Repository, path: str) -> bool:
    """Whether `path` is one of taskfs's own files, which no task owns."""
    taskfs_dir = TASKFS_DIR
    return any(path == top or path.startswith(f"{top}/") for top in (repo.tasks_rel, taskfs_dir))


# -- owners ----------------------------------------------------------------------------


def owners(repo: Repository, paths: Sequence[str], cwd: Path) -> list[PathOwners]:
    """For each path (relative to `cwd`, or absolute, or `interface:<name>`), the open tasks
    that own it. A folder (an existing directory, or a path ending in /) is answered with the
    tasks that own anything below it."""
    targets = [_repo_path(repo, label, cwd) for label in paths]
    open_tasks = _OpenTasks(load_all(repo).values())
    out = []
    for path, folder in targets:
        if is_ledger_path(repo, path):
            out.append(PathOwners(path, (), folder))
        elif folder:
            out.append(PathOwners(path, _owners_below(open_tasks, path), True))
        else:
            out.append(PathOwners(path, open_tasks.owners_of(path)))
    return out


def _owners_below(open_tasks: _OpenTasks, folder: str) -> tuple[Owner, ...]:
    """The owners of anything below `folder`, asked as the glob `folder/**`: a folder longer
    or deeper than a glob may be cannot be asked about (`invalid_value`)."""
    try:
        return open_tasks.owners_below(folder)
    except globs.EntryError as exc:
        shown = folder if len(folder) <= _SHOWN else f"{folder[:_SHOWN]}..."
        reason = f"the folder {shown!r} cannot be asked about: {exc}"
        raise fail("invalid_value", field="path", reason=reason) from None


_SHOWN = 80  # characters of a refused path said back


def _repo_path(repo: Repository, label: str, cwd: Path) -> tuple[str, bool]:
    """(repository-relative path, whether it names a folder)."""
    if label.startswith(globs.INTERFACE_PREFIX):
        return label, False
    if not label:
        raise fail("usage", reason="an empty path names nothing")
    full = Path(os.path.normpath(cwd / label))
    try:
        rel = full.relative_to(repo.root)
    except ValueError:
        try:
            rel = full.resolve().relative_to(repo.root)
        except (ValueError, OSError):
            raise fail("path_outside_repository", path=label, root=str(repo.root)) from None
    text = "" if rel.as_posix() == "." else rel.as_posix()
    # os.path.isdir: a path the system refuses to look at (too long) is asked about as named.
    folder = not text or label.endswith(("/", os.sep)) or os.path.isdir(full)
    # A folder whose name cannot be written as a glob (a backslash) is asked about as a path.
    return text, folder and "\\" not in text


def _literal_glob(path: str) -> str:
    """A glob matching exactly `path` (no escape character exists: use one-character classes)."""
    return "".join(f"[{ch}]" if ch in "*?[" else ch for ch in path)


# -- guard -----------------------------------------------------------------------------


@dataclass(frozen=True)
class GuardedCommit:
    """One commit (or the staged changes, `commit` None) the guard let through."""

    commit: str | None
    agent: str | None
    paths: tuple[str, ...]
    author: str | None = None  # staged changes: the author the commit will carry


def guard(
    repo: Repository,
    agent: str | None,
    *,
    rev_range: str | None = None,
    index_file: str | None = None,
) -> list[GuardedCommit]:
    """Refuse changes to files owned by an open task of another agent (`ownership_guard`,
    one per path and commit).

    Without `rev_range`: the staged changes, against the working tree's ledger; the agent is
    `agent`, else the author name the commit will carry (so the hook and the CI check agree).
    With `rev_range`: every commit in it, each against the ledger of that commit and with its
    author's name as the agent; a merge is judged by what it changes itself.
    """
    checks: list[tuple[str | None, str | None, list[str], _OpenTasks]] = []
    author = None
    if rev_range is None:
        author = repo.git.author_name()
        paths = repo.git.staged_paths(index_file)
        checks.append((None, agent or author, paths, _OpenTasks(load_all(repo).values())))
    else:
        ledgers: dict[str | None, _OpenTasks] = {}
        for sha, author in repo.git.commits(rev_range):
            tree = repo.git.tree_id(sha, repo.tasks_rel)
            if tree not in ledgers:
                ledgers[tree] = _OpenTasks(load_all(CommitView.load(repo, tree)).values())
            checks.append((sha, author or None, repo.git.commit_paths(sha), ledgers[tree]))
    problems: list[Problem] = []
    for commit, who, changed, open_tasks in checks:
        problems += _refusals(repo, open_tasks, changed, who, commit)
    if problems:
        raise TaskfsError(problems)
    return [
        GuardedCommit(commit, who, tuple(changed), author) for commit, who, changed, _ in checks
    ]


def _refusals(
    repo: Repository,
    open_tasks: _OpenTasks,
    paths: Sequence[str],
    agent: str | None,
    commit: str | None,
) -> list[Problem]:
    problems = []
    for path in paths:
        if is_ledger_path(repo, path):
            continue
        found = open_tasks.holding(path)
        if not found or any(o.agent is not None and o.agent == agent for o in found):
            continue
        first = found[0]
        problems.append(
            problem(
                "ownership_guard",
                path=path,
                id=first.id,
                owner=first.agent,
                entry=first.entry,
                agent=agent,
                commit=commit,
                owners=[_owner_json(o) for o in found],
                owner_text=repr(first.agent) if first.agent else "whoever claims it",
                more_text=f" and {len(found) - 1} more" if len(found) > 1 else "",
                agent_text=f"agent {agent!r}" if agent else "an unnamed agent (set TASKFS_AGENT)",
                commit_text=f" (commit {commit[:12]})" if commit else "",
            )
        )
    return problems


def _owner_json(owner: Owner) -> dict[str, object]:
    return {
        "id": owner.id,
        "to": owner.to,
        "holder": owner.holder,
        "owner": owner.agent,
        "entry": owner.entry,
    }


# -- the git hook ----------------------------------------------------------------------

HOOK_MARK = "# taskfs-guard hook"
CHAINED_SUFFIX = ".pre-taskfs"


@dataclass(frozen=True)
class HookInstalled:
    path: Path
    chained: Path | None  # the hook that was there before, now run first
    changed: bool


def install_hook(repo: Repository, python: str) -> HookInstalled:
    """Install a pre-commit hook that runs `taskfs guard` (where core.hooksPath says).

    A hook taskfs installed is brought up to date. Someone else's hook is kept and run first:
    it moves to `pre-commit.pre-taskfs`. When that name is taken too, nothing is changed and
    the refusal is `hook_exists`.
    """
    path = repo.git.hook_path("pre-commit")
    chained = path.with_name(path.name + CHAINED_SUFFIX)
    text = _hook_text(python, chained.name)
    current = _read_text(path)
    if current is not None and HOOK_MARK in current:
        if current == text and os.access(path, os.X_OK):
            return HookInstalled(path, chained if chained.exists() else None, False)
    elif current is not None or path.is_symlink():
        if chained.exists() or chained.is_symlink():
            raise fail(
                "hook_exists",
                path=str(path),
                chained=str(chained),
                reason=f"{chained.name} is taken too",
            )
        os.rename(path, chained)
    fs.replace(path, text.encode(), mode=0o755)
    return HookInstalled(path, chained if chained.exists() else None, True)


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise fail("file_unreadable", path=str(path), reason=exc.strerror or str(exc)) from None


def _hook_text(python: str, chained: str) -> str:
    return f"""#!/bin/sh
{HOOK_MARK}: installed by `taskfs init --hooks`; `taskfs init --hooks` rewrites it.
# Refuses staged changes to files owned by another agent's open task. The acting agent is
# $TASKFS_AGENT, else the commit's author name. Skip it once with `git commit --no-verify`.
previous="$(dirname "$0")/{chained}"
if [ -x "$previous" ]; then
    "$previous" "$@" || exit $?
fi
taskfs_python={shlex.quote(python)}
if [ -x "$taskfs_python" ]; then
    exec "$taskfs_python" -m taskfs guard
fi
if command -v taskfs >/dev/null 2>&1; then
    exec taskfs guard
fi
echo "taskfs guard: taskfs is not installed ($taskfs_python is gone, no taskfs on PATH)" >&2
exit 1
"""
