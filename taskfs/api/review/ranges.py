"""`taskfs review`: what a range of commits did to the ledger, for a pull request.

Read from git: every task contract, transition, piece of evidence and message that a commit of
the range added under the tasks folder, each as the commit that added it holds it. Beside them,
everything `audit` (which runs `validate`) finds in the checkout, as errors, and the lint
warnings of the contracts the range added.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from taskfs.api.review import audit as audit_api
from taskfs.api.review.added import (
    AddedTask,
    _added_task,
    _load,
    archived_of,
    resolve,
    with_origins,
)
from taskfs.api.review.audit import Finding
from taskfs.api.review.outcomes import Outcome, outcomes
from taskfs.api.views import entries
from taskfs.api.views.entries import EvidenceRow, MessageRow
from taskfs.api.views.reports import state_before
from taskfs.core.layout import AMENDMENTS, ARCHIVE_DIR, ENVELOPE, EVIDENCE, MESSAGES, STATUS
from taskfs.core.records import StatusRecord
from taskfs.errors import Problem, TaskfsError, fail
from taskfs.store.all_tasks import load_all
from taskfs.store.archive_records import records
from taskfs.store.git.session import Session, open_session
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task


@dataclass(frozen=True)
class AddedTransition:
    task: str
    path: str
    commit: str
    author: str
    record: StatusRecord | None
    left: str | None  # the state it left
    superseded: bool = False
    problem: str = ""


@dataclass(frozen=True)
class AddedAmendment:
    """An amendment (or a holder's acceptance of one) a commit of the range added, with where
    it stands in the checkout (`views.amendments.rows`)."""

    task: str
    path: str
    commit: str
    author: str
    row: Mapping[str, Any]  # empty when the checkout does not hold it readable


@dataclass(frozen=True)
class ArchivedTask:
    """A task an archive commit of the range took out of the working tree."""

    id: str
    commit: str
    author: str
    state: str


@dataclass(frozen=True)
class Review:
    revisions: str
    base: str
    tip: str
    commits: int
    tasks: tuple[AddedTask, ...]
    transitions: tuple[AddedTransition, ...]
    evidence: tuple[EvidenceRow, ...]
    messages: tuple[MessageRow, ...]
    errors: tuple[Finding, ...]
    warnings: tuple[Problem, ...]
    tip_is_checkout: bool = True
    outcomes: tuple[Outcome, ...] = ()  # where each task the range touched stands now
    archived: tuple[ArchivedTask, ...] = ()
    amendments: tuple[AddedAmendment, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.errors


def review(repo: Repository, spec: str | None) -> Review:
    revisions, base, tip = resolve(repo, spec)
    with open_session(repo.git) as session:
        try:
            commits = session.commits_in(revisions)
            added = repo.git.added_files(revisions, repo.tasks_rel)
            archives = repo.git.added_files(revisions, ARCHIVE_DIR)
        except TaskfsError as exc:
            raise fail(
                "range_invalid", range=spec or revisions, reason=exc.problems[0].english
            ) from None
        found = _review(repo, session, (revisions, base, tip), len(commits), added)
        return replace(found, archived=_archived(repo, archives))


def _archived(repo: Repository, added: list[tuple[str, str, str]]) -> tuple[ArchivedTask, ...]:
    """The tasks the archive files the range added name, each with the commit that added it."""
    out = []
    for commit, author, path in added:
        for _path, record in records(repo, commit, [path])[0]:
            out += [ArchivedTask(t.id, commit, author, t.state) for t in record.tasks]
    return tuple(sorted(out, key=lambda t: (t.id, t.commit)))


def _review(
    repo: Repository,
    session: Session,
    labels: tuple[str, str, str],
    commits: int,
    added: list[tuple[str, str, str]],
) -> Review:
    revisions, base, tip = labels
    now = load_all(repo)
    by_kind: dict[str, list[tuple[str, str, str, str]]] = {}
    touched: list[str] = []  # the tasks the range touched, in the order it did
    for commit, author, path in added:
        parsed = _ledger_path(repo, path)
        if parsed is not None:
            task_id, kind = parsed
            by_kind.setdefault(kind, []).append((commit, author, path, task_id))
            touched.append(task_id)
    contents = _contents(session, by_kind)
    archived = archived_of(repo, touched, now)
    tasks = with_origins(
        repo,
        (_added_task(item, contents[item[2]], now, archived) for item in by_kind.get(ENVELOPE, [])),
    )
    superseded = {
        repo.task_rel(t.id, STATUS, link.name) for t in now.values() for link in t.chain.superseded
    }
    transitions = tuple(
        _added_transition(item, contents[item[2]], superseded) for item in by_kind.get(STATUS, [])
    )
    from taskfs.api.evidence.gate import trust_root

    trust = trust_root(repo)
    evidence = tuple(
        entries.evidence_row(task_id, path, contents[path], trust)
        for _c, _a, path, task_id in by_kind.get(EVIDENCE, [])
    )
    messages = tuple(
        entries.message_row(task_id, path, contents[path])
        for _c, _a, path, task_id in by_kind.get(MESSAGES, [])
    )
    head = repo.git.head()
    return Review(
        revisions=revisions,
        base=base,
        tip=tip,
        commits=commits,
        tasks=tasks,
        transitions=transitions,
        evidence=evidence,
        messages=messages,
        errors=audit_api.audit(repo, session).findings,
        warnings=tuple(_warnings(repo, tasks, now)),
        tip_is_checkout=repo.git.verify(f"{tip}^{{commit}}") == head,
        outcomes=outcomes(repo, revisions, touched, now, trust, archived=archived),
        amendments=_amendments(repo, by_kind.get(AMENDMENTS, []), now),
    )


def _amendments(
    repo: Repository, items: list[tuple[str, str, str, str]], now: dict[str, Task]
) -> tuple[AddedAmendment, ...]:
    """The amendment files the range added, each with its row in the checkout's task."""
    from taskfs.api.tasks.queries import amendments

    rows: dict[str, dict[str, Mapping[str, Any]]] = {}
    out = []
    for commit, author, path, task_id in items:
        if task_id not in rows:
            task = now.get(task_id)
            found = amendments(repo, task) if task is not None else []
            rows[task_id] = {row["file"]: row for row in found}
        name = path.rsplit("/", 1)[-1]
        out.append(AddedAmendment(task_id, path, commit, author, rows[task_id].get(name, {})))
    return tuple(out)


def _ledger_path(repo: Repository, path: str) -> tuple[str, str] | None:
    """(task id, kind) of a ledger file: its envelope, or a file in status/, evidence/ or
    messages/. Anything else under the tasks folder is validate's and audit's to name."""
    rest = path[len(repo.tasks_rel) + 1 :].split("/")
    if len(rest) == 2 and rest[1] == ENVELOPE:
        return rest[0], ENVELOPE
    kinds = (STATUS, EVIDENCE, MESSAGES, AMENDMENTS)
    if len(rest) == 3 and rest[1] in kinds and rest[2].endswith(".yaml"):
        return rest[0], rest[1]
    return None


def _contents(
    session: Session, by_kind: dict[str, list[tuple[str, str, str, str]]]
) -> dict[str, bytes | None]:
    wanted = [(commit, path) for items in by_kind.values() for commit, _a, path, _t in items]
    return {path: data for (_c, path), data in zip(wanted, session.read_blobs(wanted), strict=True)}


def _added_transition(
    item: tuple[str, str, str, str], data: bytes | None, superseded: set[str]
) -> AddedTransition:
    commit, author, path, task_id = item
    value, reason = _load(data)
    record = None
    if not reason:
        try:
            record = StatusRecord.model_validate(value)
        except ValidationError as exc:
            reason = f"not a status record ({exc.error_count()} problems)"
    left = state_before(record.prev) if record else None
    return AddedTransition(task_id, path, commit, author, record, left, path in superseded, reason)


def _warnings(
    repo: Repository, tasks: tuple[AddedTask, ...], now: dict[str, Task]
) -> list[Problem]:
    """The lint warnings of the contracts the range added: what `lint RANGE` says."""
    from taskfs.api.tasks import lint

    subjects = [(t.id, t.envelope) for t in tasks if t.envelope is not None]
    return list(lint.lint_subjects(repo, subjects, now).warnings)
