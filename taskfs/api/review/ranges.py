"""`taskfs review`: what a range of commits did to the ledger, for a pull request.

Read from git: every task contract, transition, piece of evidence and message that a commit of
the range added under the tasks folder, each as the commit that added it holds it. Beside them,
everything `audit` (which runs `validate`) finds in the checkout, as errors, and the lint
warnings of the contracts the range added.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from pydantic import ValidationError

from taskfs.api.review import audit as audit_api
from taskfs.api.review.audit import Finding
from taskfs.api.review.outcomes import Outcome, outcomes
from taskfs.api.views import entries
from taskfs.api.views.entries import EvidenceRow, MessageRow
from taskfs.api.views.reports import state_before
from taskfs.core import lint as lint_rules
from taskfs.core import yamlio
from taskfs.core.envelope import Envelope, validate_envelope
from taskfs.core.layout import ARCHIVE_DIR, ENVELOPE, EVIDENCE, MESSAGES, STATUS
from taskfs.core.records import StatusRecord
from taskfs.errors import Problem, TaskfsError, fail
from taskfs.store.all_tasks import load_all
from taskfs.store.archive_records import records
from taskfs.store.git.session import Session, open_session
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

    @property
    def ok(self) -> bool:
        return not self.errors


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
    tasks = tuple(_added_task(item, contents[item[2]], now) for item in by_kind.get(ENVELOPE, []))
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
        outcomes=outcomes(repo, revisions, touched, now, trust),
    )


def _ledger_path(repo: Repository, path: str) -> tuple[str, str] | None:
    """(task id, kind) of a ledger file: its envelope, or a file in status/, evidence/ or
    messages/. Anything else under the tasks folder is validate's and audit's to name."""
    rest = path[len(repo.tasks_rel) + 1 :].split("/")
    if len(rest) == 2 and rest[1] == ENVELOPE:
        return rest[0], ENVELOPE
    if len(rest) == 3 and rest[1] in (STATUS, EVIDENCE, MESSAGES) and rest[2].endswith(".yaml"):
        return rest[0], rest[1]
    return None


def _contents(
    session: Session, by_kind: dict[str, list[tuple[str, str, str, str]]]
) -> dict[str, bytes | None]:
    wanted = [(commit, path) for items in by_kind.values() for commit, _a, path, _t in items]
    return {path: data for (_c, path), data in zip(wanted, session.read_blobs(wanted), strict=True)}


def _load(data: bytes | None) -> tuple[object, str]:
    if data is None:
        return None, "the commit holds no such file"
    try:
        return yamlio.load(data), ""
    except yamlio.YamlError as exc:
        return None, exc.reason


def _added_task(
    item: tuple[str, str, str, str], data: bytes | None, now: dict[str, Task]
) -> AddedTask:
    commit, author, _path, task_id = item
    value, reason = _load(data)
    envelope, problems = validate_envelope(value) if not reason else (None, [])
    if problems:
        reason = "; ".join(f"{p.code}: {p.english}" for p in problems)
    state = now[task_id].state if task_id in now else None
    return AddedTask(task_id, commit, author, envelope, state, reason)


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
    contexts = {task_id: task.envelope.context_id for task_id, task in now.items()}
    contexts.update({t.id: t.envelope.context_id for t in tasks if t.envelope})
    settings = repo.config.lint.settings()
    return [
        warning
        for task in tasks
        if task.envelope is not None
        for warning in lint_rules.lint_envelope(
            task.envelope, subject=task.id, contexts=contexts, settings=settings
        )
    ]


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
    label = f"the last {len(recent)} ledger commits"
    if parent is None:  # they go back to the first commit: all of history
        return "HEAD", label, "HEAD"
    return f"{parent}..HEAD", label, "HEAD"
