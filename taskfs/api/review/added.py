"""The contracts a range of commits added: what `review` and `lint RANGE` read from git.

A range is `A..B`, `A...B` or `A` (meaning `A..HEAD`), or, for `review`, nothing: the branch
against its upstream, or main or master. Each contract is read as the commit that added it
holds it, whatever the working tree says now.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from taskfs.core import yamlio
from taskfs.core.envelope import Envelope, validate_envelope
from taskfs.core.layout import ENVELOPE
from taskfs.errors import TaskfsError, fail
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task


@dataclass(frozen=True)
class AddedTask:
    id: str
    commit: str
    author: str
    envelope: Envelope | None
    state: str | None  # its state in the checkout now; None when the checkout has no such task
    problem: str = ""
    origin: Mapping[str, Any] | None = None  # the request it was born from (`views.intake`)
    archived: bool = False  # taken out of the checkout by `taskfs archive` (`state`: its last)


def resolve(repo: Repository, spec: str | None) -> tuple[str, str, str]:
    """(revisions for git, base label, tip label) of a range given as `A..B`, `A...B`, `A`
    (meaning `A..HEAD`), or nothing: the branch against its upstream, or main or master."""
    git = repo.git
    if spec is None or not spec.strip():
        base = git.default_base()
        if base is not None and base != git.head():
            return f"{base}..HEAD", base[:12], "HEAD"
        return _recent_ledger_range(repo)
    if spec.startswith("-"):
        raise fail("range_invalid", range=spec, reason="a range cannot start with '-'")
    left, dots, right = re.split(r"(\.\.\.?)", spec, maxsplit=1) if ".." in spec else [spec, "", ""]
    revisions = spec if dots else f"{spec}..HEAD"
    for end in (left or "HEAD", right or "HEAD"):
        if git.verify(f"{end}^{{commit}}") is None:
            raise fail("range_invalid", range=spec, reason=f"git knows no commit {end!r}")
    return revisions, left or "HEAD", right or "HEAD"


def _load(data: bytes | None) -> tuple[object, str]:
    if data is None:
        return None, "the commit holds no such file"
    try:
        return yamlio.load(data), ""
    except yamlio.YamlError as exc:
        return None, exc.reason


def _added_task(
    item: tuple[str, str, str, str],
    data: bytes | None,
    now: Mapping[str, Task],
    archived: Mapping[str, Task],
) -> AddedTask:
    """The contract a commit added, with the task's state now: in the checkout, or, archived,
    the state it was archived in (`archived_tasks`, as `show` reads it)."""
    commit, author, _path, task_id = item
    value, reason = _load(data)
    envelope, problems = validate_envelope(value) if not reason else (None, [])
    if problems:
        reason = "; ".join(f"{p.code}: {p.english}" for p in problems)
    task = now.get(task_id) or archived.get(task_id)
    state = task.state if task is not None else None
    gone = task_id not in now and task_id in archived
    return AddedTask(task_id, commit, author, envelope, state, reason, archived=gone)


def archived_of(
    repo: Repository, task_ids: Iterable[str], now: Mapping[str, Task]
) -> dict[str, Task]:
    """The tasks among `task_ids` the checkout lacks because an archive took them, read as
    `show` reads an archived task."""
    from taskfs.store.archive_records import archived_tasks

    return archived_tasks(repo, [t for t in dict.fromkeys(task_ids) if t not in now])


RECENT_LEDGER_COMMITS = 20


def _recent_ledger_range(repo: Repository) -> tuple[str, str, str]:
    """On the branch it would be compared with (main itself, nothing ahead of its base), the
    last commits that touched the ledger: a review of those is what a reader there wants."""
    proc = repo.git.run_raw(
        "rev-list", f"--max-count={RECENT_LEDGER_COMMITS}", "HEAD", "--", repo.tasks_rel
    )
    recent = proc.stdout.decode().split() if proc.returncode == 0 else []
    if not recent:
        raise fail(
            "range_invalid",
            range="(default)",
            reason="HEAD is not ahead of an upstream, main or master, and no commit touches the "
            "ledger; name a range such as HEAD~5..HEAD",
        )
    parent = repo.git.verify(f"{recent[-1]}^{{commit}}")
    many = len(recent) > 1
    label = f"the last {len(recent)} ledger commits" if many else "the last ledger commit"
    if parent is None:  # they go back to the first commit: all of history
        return "HEAD", label, "HEAD"
    return f"{parent}..HEAD", label, "HEAD"


def contracts(repo: Repository, spec: str) -> list[AddedTask]:
    """Every contract (envelope file) a commit of the range `spec` added, oldest first, as
    that commit holds it; `range_invalid` when git knows no such range."""
    revisions, _base, _tip = resolve(repo, spec)
    try:
        added = repo.git.added_files(revisions, repo.tasks_rel)
    except TaskfsError as exc:
        raise fail("range_invalid", range=spec, reason=exc.problems[0].english) from None
    wanted = []
    for commit, author, path in added:
        rest = path[len(repo.tasks_rel) + 1 :].split("/")
        if len(rest) == 2 and rest[1] == ENVELOPE:
            wanted.append((commit, author, path, rest[0]))
    if not wanted:
        return []
    from taskfs.store.all_tasks import load_all

    now = load_all(repo)
    from taskfs.store.git.session import open_session  # GitPython: only where history is read

    with open_session(repo.git) as session:
        contents = session.read_blobs([(commit, path) for commit, _a, path, _t in wanted])
    archived = archived_of(repo, (item[3] for item in wanted), now)
    return [
        _added_task(item, data, now, archived) for item, data in zip(wanted, contents, strict=True)
    ]


def with_origins(repo: Repository, tasks: Iterable[AddedTask]) -> tuple[AddedTask, ...]:
    """Each contract with the request it was born from, as the checkout holds it."""
    from taskfs.api.views.reports import origin_of

    return tuple(replace(t, origin=origin_of(repo, t.id)) for t in tasks)


def is_range(text: str) -> bool:
    """Whether a command-line word names a range of commits (`A..B`, `A...B`)."""
    return ".." in text and not text.startswith("-")
