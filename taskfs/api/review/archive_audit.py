"""`audit`'s checks of the archive (`taskfs archive`, issue 31; the row `archive` of
`taskfs.core.ledger_kinds`).

An archive commit removes task folders whole and adds the archive's files naming them. Its
removals are the archive's audited act, not ledger files deleted: `ledger_file_deleted` is not
said of them. What is checked instead: every task it took out was in a terminal state in the
commit before it (`archive_not_terminal`), every row says of its task what that commit held,
and the file names that commit (`archive_row_false`: the rules never read a row's word, but a
row that lies is a forgery all the same), and the archive was made by someone the settings of
that commit allowed (`archive.by`), who authored the commit and signed the file where it had a
key (`archive_unauthorized`). A folder removed by a commit that no archive file of that commit
names is still `ledger_file_deleted`; an archive file edited or removed later is named by the
table's history pass like every ledger file (`history_audit`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from taskfs.core.layout import ARCHIVE_DIR, CONFIG_PATH
from taskfs.core.lifecycle import TERMINAL
from taskfs.errors import Problem, TaskfsError, problem
from taskfs.readmodel.projection import Summary
from taskfs.store import archive_records
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
            out += _rows(repo, act, parent)
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
        elif not _signed(repo, act.commit, parent, path, record.by):
            why = f": {record.by!r} had a key, and did not sign the file"
        if why:
            out.append(
                problem(
                    "archive_unauthorized",
                    path=path,
                    commit=act.commit[:12],
                    author=act.author,
                    why_text=why,
                    rule="archive",
                )
            )
    return out


def _signed(repo: Repository, commit: str, parent: str | None, path: str, by: str) -> bool:
    """Whether the archive file is signed as every act of `by` is where `by` had a key in the
    commit before (`taskfs.core.act_signing`); True where it had none."""
    from taskfs.core import act_signing, yamlio
    from taskfs.store import keys

    rel = keys.public_rel("agent", by)
    stood = repo.git.head_files([rel], rev=parent).get(rel) if parent is not None else None
    if stood is None:
        return True
    try:
        key = keys.parse_public(stood.decode("utf-8").strip())
        document = yamlio.load(repo.git.head_files([path], rev=commit)[path])
    except (UnicodeDecodeError, ValueError, KeyError, yamlio.YamlError, TaskfsError):
        return False
    return isinstance(document, dict) and act_signing.verifies("archive", document, key)


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


# The fields of a row a rule reads, as `as_archived` keeps them: (column, how a summary says it).
_FIELDS: tuple[tuple[str, Callable[[Summary], object]], ...] = (
    ("state", lambda s: s.state),
    ("from", lambda s: s.envelope.sender),
    ("to", lambda s: s.envelope.recipient),
    ("dependsOn", lambda s: list(s.envelope.depends_on)),
    ("parent", lambda s: s.envelope.parent),
    ("command", lambda s: s.envelope.command),
    ("follows", lambda s: s.envelope.follows),
    ("holder", lambda s: s.holder),
)


def _rows(repo: Repository, act: Act, parent: str) -> list[Problem]:
    """Each row of the act's files against its task as the commit before the act held it: a
    task that was not terminal then (`archive_not_terminal`), a row that says otherwise than
    that commit, or a file naming another commit (`archive_row_false`)."""
    read, _problems = records(repo, act.commit, act.files)
    held = archive_records.held(repo, parent, sorted(act.tasks))
    out: list[Problem] = []
    for path, record in read:
        if record.commit != parent:
            out.append(
                _false(path, "(the file)", "commit", said=record.commit, held=parent, commit=parent)
            )
        for row in record.tasks:
            task = held.get(row.id)
            if task is None or task.intake or task.state not in TERMINAL:
                state = "not a task" if task is None or task.intake else task.state
                out.append(
                    problem(
                        "archive_not_terminal",
                        id=row.id,
                        path=repo.task_rel(row.id),
                        commit=act.commit[:12],
                        state=state,
                        rule="archive",
                    )
                )
                continue
            for column, value in _FIELDS:
                said, was = value(row), value(task)
                if said != was:
                    out.append(_false(path, row.id, column, said=said, held=was, commit=parent))
                    break
    return out


def _false(
    path: str, task_id: str, column: str, *, said: object, held: object, commit: str
) -> Problem:
    return problem(
        "archive_row_false",
        path=path,
        id=task_id,
        field=column,
        said=said,
        held=held,
        commit=commit[:12],
        rule="archive",
    )
