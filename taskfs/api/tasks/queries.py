"""Questions about the ledger: show, ls, ready, log, validate. Nothing here writes."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskfs.api.messages import threads
from taskfs.api.tasks import collisions, envelope_rules, rules
from taskfs.api.tasks.filing import FileReport
from taskfs.api.tasks.submit import Source, parse_source
from taskfs.core import layout, readiness
from taskfs.core.envelope import Envelope
from taskfs.core.evidence import NO_TRUST
from taskfs.core.layout import AMENDMENTS, ENVELOPE, EVIDENCE, INTAKE, MESSAGES, READS, STATUS
from taskfs.core.lifecycle import TERMINAL
from taskfs.errors import Problem, TaskfsError, fail, problem
from taskfs.store import task_reader
from taskfs.store.all_tasks import load_all
from taskfs.store.repository import Repository, read_input
from taskfs.store.task_reader import Task, load_task


def show(repo: Repository, task_id: str) -> Task:
    """The task with its evidence files (and how each one's signature stands), as HEAD holds
    it: the state `ls`, `ready` and the decisions read (issue 36). A file in its folder that no
    commit holds is not read as part of it but named, `ledger_file_uncommitted` among its
    problems. An archived task as the commit that archived it found it."""
    from taskfs.api.evidence import checks as evidence
    from taskfs.store.envelope_seal import unsealed

    where = home(repo, task_id)
    problems: list[Problem] = []
    # A folder taken away by hand is no task here, as `ls` does not list it.
    if where is repo and layout.is_task_id(task_id) and repo.task_dir(task_id).is_dir():
        from taskfs.store import head_ledger

        loose = head_ledger.loose(repo, [task_id])
        if loose:
            problems = head_ledger.refusals(repo, loose)
            committed = head_ledger.committed_folder(repo, task_id)
            if committed is not None:
                where = committed
    task = evidence.with_evidence(where, load_task(where, task_id))
    edited = unsealed(where, task_id)  # what a claim refuses is named where the task is shown
    if edited is not None and edited not in task.problems:
        problems.append(edited)
    return task._replace(problems=(*task.problems, *problems)) if problems else task


def stored_key(repo: Repository, task_id: str) -> bytes | None:
    """The key of the git objects HEAD holds in the task's folder, as the store's row of it
    says (None: no row): what a stored answer of `show` is kept under."""
    from taskfs.store import index

    return index.row_key(repo, task_id)


def amendments(repo: Repository, task: Task) -> list[dict[str, Any]]:
    """The task's amendments as `show` lists them (`views.amendments.rows`)."""
    if task.version is None:
        return []
    from taskfs.api.views.amendments import rows
    from taskfs.store.task_reader import submitted_envelope

    found = rows(task, submitted_envelope(repo, task.id).to_document())
    return [{**row, "path": repo.task_rel(task.id, AMENDMENTS, row["file"])} for row in found]


def follow_ups(repo: Repository, task_id: str) -> list[dict[str, Any]]:
    """The follow-ups found while working on `task_id` (`taskfs discover`), requests and the
    tasks they became, each with its state and who asked whom."""
    from taskfs.store.index import summaries

    ledger = summaries(repo)
    return [
        {"id": s.id, "state": s.state, "from": s.envelope.sender, "to": s.envelope.recipient}
        for s in ledger.many(ledger.discovered(task_id))
    ]


def home(repo: Repository, task_id: str) -> Repository:
    """Where a task's files are read: the working tree, or, for a task `taskfs archive` took
    out of it, the commit whose tree still holds them (`task_not_found` when neither has it,
    as the reader says). The store's row of an archived task names the commit it was taken
    from; what arrived in its folder since (its messages) is read with it."""
    from taskfs.store import index

    return index.home(repo, task_id)


def is_archived(repo: Repository, task_id: str) -> bool:
    """Whether the task was archived (its files are read from history: `home`)."""
    return home(repo, task_id) is not repo


# -- validate --------------------------------------------------------------------------


@dataclass(frozen=True)
class Validation:
    files: tuple[FileReport, ...]
    problems: tuple[Problem, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems and all(f.ok for f in self.files)


def validate(repo: Repository | None, paths: Sequence[str]) -> Validation:
    """Validate envelope files named (folders: every .yaml below), as `new` would refuse them
    submitted together (the ledger folder is `repo`'s when there is one), or the whole
    ledger."""
    if paths:
        tasks_rel = repo.tasks_rel if repo is not None else layout.DEFAULT_TASKS_DIR
        return Validation(tuple(_validate_named(paths, envelope_rules.ledger_folders(tasks_rel))))
    if repo is None:
        raise fail("not_a_repository", path=str(Path.cwd()))
    return validate_ledger(repo)


def _validate_named(paths: Sequence[str], folders: Sequence[str]) -> list[FileReport]:
    parsed = [_parse_file(label) for label in _named_files(paths)]
    envelopes = [envelope for _label, envelope, _found in parsed if envelope is not None]
    batch = iter(envelope_rules.batch_problems(envelopes, folders))
    return [
        FileReport(label, (*found, *(next(batch) if envelope is not None else ())))
        for label, envelope, found in parsed
    ]


def _named_files(paths: Sequence[str]) -> Iterator[str]:
    for label in paths:
        # os.path.isdir, not Path.is_dir: a name the system refuses to look at (too long) is
        # not a folder, and reading it names why (`file_unreadable`).
        if os.path.isdir(label):
            for found in sorted(Path(label).rglob("*.yaml")):
                if not layout.is_report([found.name]):
                    yield str(found)
        else:
            yield label


def _parse_file(label: str) -> tuple[str, Envelope | None, tuple[Problem, ...]]:
    try:
        data = read_input(label)
    except TaskfsError as exc:
        return label, None, exc.problems
    envelope, problems = parse_source(Source(label, data))
    return label, envelope, tuple(problems)


def _validate_file(label: str) -> FileReport:
    label, _envelope, problems = _parse_file(label)
    return FileReport(label, problems)


def validate_ledger(repo: Repository) -> Validation:
    reports: list[FileReport] = []
    for entry in (
        sorted(os.scandir(repo.tasks_dir), key=lambda e: e.name) if repo.tasks_dir.is_dir() else []
    ):
        rel = f"{repo.tasks_rel}/{entry.name}"
        if entry.is_dir() and not repo.has_task(entry.name) and late_folder(repo, entry.name):
            reports += _late_reports(repo, entry.name)
        elif entry.is_dir():
            reports += _validate_task_dir(repo, entry.name)
        elif entry.name == ".gitkeep" or layout.is_report([entry.name]):
            continue
        elif entry.name.endswith(".yaml"):
            reports.append(_validate_file(str(repo.root / rel)))
        else:
            reports.append(
                FileReport(rel, (problem("file_invalid", path=rel, reason="not a taskfs file"),))
            )
    tasks = load_all(repo)
    graph = readiness.dependency_graph(t.envelope for t in tasks.values())
    open_envelopes = [t.envelope for t in readiness.open_tasks(tasks)]
    parents = readiness.parent_map(t.envelope for t in tasks.values())
    overlaps = rules.ownership_conflicts(open_envelopes, [], graph, parents)
    envelopes = [t.envelope for t in tasks.values()]
    folders = envelope_rules.ledger_folders(repo.tasks_rel)
    problems = (
        *overlaps,
        *collisions.id_collisions(repo),
        *(p for e in envelopes for p in envelope_rules.ledger_entries(e, folders)),
        *envelope_rules.parent_problems(envelopes),
        *envelope_rules.ledger_cycles(graph),
    )
    return Validation(tuple(_relative(repo, r) for r in reports), problems)


def _relative(repo: Repository, report: FileReport) -> FileReport:
    path = Path(report.path)
    if path.is_absolute():
        return FileReport(repo.rel(path), report.problems)
    return report


def _validate_task_dir(repo: Repository, name: str) -> list[FileReport]:
    folder = repo.task_rel(name)
    if not repo.has_task(name):
        if layout.is_task_id(name) and repo.list_dir(name, INTAKE):
            # A request not yet a task: its intake files and its messages.
            return (
                _intake_reports(repo, name)
                + threads.file_reports(repo, name)
                + (_stray_files(repo, name))
            )
        reason = "no envelope.yaml" if (repo.tasks_dir / name).is_dir() else "not a task id"
        return [FileReport(folder, (problem("file_invalid", path=folder, reason=reason),))]
    reports = _intake_reports(repo, name) if repo.list_dir(name, INTAKE) else []
    envelope_rel = repo.task_rel(name, ENVELOPE)
    try:
        task_reader.load_envelope(repo, name)
        reports.append(FileReport(envelope_rel))
    except TaskfsError as exc:
        reports.append(FileReport(envelope_rel, exc.problems))
    chain, problems = task_reader.load_chain(repo, name)
    by_path: dict[str, list[Problem]] = {}
    for found in problems:
        path = str(found.data.get("path", folder))
        by_path.setdefault(path, []).append(found)
    for status in repo.list_dir(name, STATUS):
        rel = repo.task_rel(name, STATUS, status)
        reports.append(FileReport(rel, tuple(by_path.pop(rel, []))))
    if not chain.links:
        by_path.setdefault(folder, []).append(
            problem("chain_broken", id=name, path=folder, reason_text="it has no status file")
        )
    reports += [FileReport(path, tuple(found)) for path, found in by_path.items()]
    reports += _evidence_reports(repo, name)
    reports += _amendment_reports(repo, name)
    reports += threads.file_reports(repo, name)
    reports += _stray_files(repo, name)
    return reports


def _evidence_reports(repo: Repository, name: str) -> list[FileReport]:
    """Every evidence file, each checked against the model (signatures are `audit`'s)."""
    found, problems = task_reader.load_evidence(repo, name, NO_TRUST)
    reports = [FileReport(item.rel) for item in found]
    reports += [FileReport(str(p.data.get("path", "")), (p,)) for p in problems]
    return sorted(reports, key=lambda r: r.path)


def _amendment_reports(repo: Repository, name: str) -> list[FileReport]:
    """Every amendment file, each checked against its model and its envelope's rules."""
    names = repo.list_dir(name, AMENDMENTS)
    if not names:
        return []
    try:
        _found, problems = task_reader.load_amendments(
            repo, name, task_reader.submitted_envelope(repo, name)
        )
    except TaskfsError:
        return [FileReport(repo.task_rel(name, AMENDMENTS, n)) for n in names]
    by_path: dict[str, list[Problem]] = {}
    for found in problems:
        by_path.setdefault(str(found.data.get("path", "")), []).append(found)
    return [
        FileReport(rel, tuple(by_path.get(rel, ())))
        for rel in (repo.task_rel(name, AMENDMENTS, n) for n in names)
    ]


def _intake_reports(repo: Repository, name: str) -> list[FileReport]:
    """Every intake file of the folder, each checked against the model."""
    from taskfs.store.intake_reader import load_intake

    names = repo.list_dir(name, INTAKE)
    try:
        _intake, problems = load_intake(repo, name)
    except TaskfsError as exc:
        problems = list(exc.problems)
    by_path: dict[str, list[Problem]] = {}
    for found in problems:
        by_path.setdefault(str(found.data.get("path", repo.task_rel(name, INTAKE))), []).append(
            found
        )
    reports = [
        FileReport(
            repo.task_rel(name, INTAKE, n), tuple(by_path.pop(repo.task_rel(name, INTAKE, n), []))
        )
        for n in names
    ]
    return reports + [FileReport(path, tuple(found)) for path, found in by_path.items()]


def late_folder(repo: Repository, name: str) -> bool:
    """Whether the folder `name` is an archived task's, holding what arrived after the archive
    (a message written on a clone that did not know of it yet: `archive_records.LATE`)."""
    from taskfs.store.archive_records import archived

    if not layout.is_task_id(name) or repo.list_dir(name, INTAKE):
        return False
    return name in archived(repo)


def _late_reports(repo: Repository, name: str) -> list[FileReport]:
    """An archived task's late files: its messages and read marks are checked as a task's are;
    anything else arrived where nothing may (`file_invalid`)."""
    from taskfs.store.archive_records import LATE

    out = threads.file_reports(repo, name)
    for entry in sorted(os.listdir(repo.task_dir(name))):
        if entry not in LATE:
            rel = repo.task_rel(name, entry)
            why = "it arrived in the folder of an archived task, where only messages may"
            out.append(FileReport(rel, (problem("file_invalid", path=rel, reason=why),)))
    return out


def _stray_files(repo: Repository, name: str) -> list[FileReport]:
    known = {ENVELOPE, STATUS, EVIDENCE, MESSAGES, READS, INTAKE, AMENDMENTS}
    out = []
    for entry in sorted(os.listdir(repo.task_dir(name))):
        if entry not in known:
            rel = repo.task_rel(name, entry)
            out.append(
                FileReport(rel, (problem("file_invalid", path=rel, reason="not a taskfs file"),))
            )
    return out


def is_open(task: Task) -> bool:
    return task.state not in TERMINAL
