"""Reading an intake's files (`<task>/intake/<stamp>-<nonce>.yaml`, `taskfs.core.intake`).

Through a `Repository`: the working tree, or a commit's tree (`CommitView`). A file that is not a
well-formed intake file is a `file_invalid` problem, never skipped in silence.
"""

from __future__ import annotations

from pydantic import ValidationError

from taskfs.core import layout
from taskfs.core.intake import Entry, Intake, IntakeRecord
from taskfs.core.layout import INTAKE, STAMPED_NAME_RE
from taskfs.errors import Problem, TaskfsError, fail, problem
from taskfs.store.repository import Repository
from taskfs.store.task_reader import first_error, read_yaml

TYPE_CHECKING = False
if TYPE_CHECKING:
    from taskfs.readmodel.projection import Summary
    from taskfs.store.key_history import KeyOf


def has_intake(repo: Repository, task_id: str) -> bool:
    """Whether the folder of `task_id` holds an intake (open, closed, or become a task)."""
    return layout.is_task_id(task_id) and bool(repo.list_dir(task_id, INTAKE))


def is_intake(repo: Repository, task_id: str) -> bool:
    """Whether `task_id` names an intake that is not (yet) a task: no envelope beside it."""
    return has_intake(repo, task_id) and not repo.has_task(task_id)


def load_intake(repo: Repository, task_id: str) -> tuple[Intake, list[Problem]]:
    """The intake of `task_id` and its files that could not be read; `task_not_found` when the
    folder holds no readable intake file."""
    entries: list[Entry] = []
    problems: list[Problem] = []
    for name in repo.list_dir(task_id, INTAKE) if layout.is_task_id(task_id) else []:
        rel = repo.task_rel(task_id, INTAKE, name)
        try:
            entries.append(Entry(name, _record(repo, rel, name, task_id)))
        except TaskfsError as exc:
            problems += exc.problems
    # The opening names the requester: a first file that is no request opens nothing.
    if not entries or entries[0].record.kind != "request":
        if entries:
            rel = repo.task_rel(task_id, INTAKE, entries[0].name)
            problems.append(problem("file_invalid", path=rel, reason="it opens with no request"))
        raise TaskfsError(problems or [problem("task_not_found", id=task_id)])
    return Intake(task_id, tuple(entries), submitted=repo.has_task(task_id)), problems


def _record(repo: Repository, rel: str, name: str, task_id: str) -> IntakeRecord:
    if not STAMPED_NAME_RE.fullmatch(name):
        raise fail("file_invalid", path=rel, reason="its name is not <stamp>-<nonce>.yaml")
    try:
        record = IntakeRecord.model_validate(read_yaml(repo, rel))
    except ValidationError as exc:
        raise fail("file_invalid", path=rel, reason=first_error(exc)) from None
    if record.intake != task_id:
        raise fail("file_invalid", path=rel, reason=f"it records intake {record.intake!r}")
    return record


def project(repo: Repository, task_id: str, key_of: KeyOf | None = None) -> Summary | None:
    """The read model's row of a task folder: the task its files say, else the intake they
    hold (a folder with no envelope), else None (nothing readable: `validate` names it).
    `key_of`: `key_history.act_keys`'s, when the caller reads many tasks (one for each task
    that asks, otherwise)."""
    from taskfs.readmodel.projection import Summary as Projected
    from taskfs.readmodel.projection import text_of
    from taskfs.store.task_reader import load_task

    try:
        task = load_task(repo, task_id, key_of=key_of)
    except TaskfsError:
        if repo.has_task(task_id) or not repo.list_dir(task_id, INTAKE):
            return None
    else:
        found = Projected.of(task)
        if found.state == "completed":
            found = found._replace(stands=completion_stands(repo, found, key_of))
        if not repo.list_dir(task_id, INTAKE):
            return found._replace(text=text_of(task.envelope.objective, *said(repo, task_id)))
        # A task born from a request: a follow-up of the task the request names, if any.
        try:
            intake = load_intake(repo, task_id)[0]
        except TaskfsError:
            return found._replace(text=text_of(task.envelope.objective, *said(repo, task_id)))
        words = [e.record.text or "" for e in intake.requests()]
        text = text_of(task.envelope.objective, *words, *said(repo, task_id))
        return found._replace(discovered_from=intake.discovered_from, text=text)
    try:
        intake, problems = load_intake(repo, task_id)
    except TaskfsError:
        return None
    words = [e.record.text or "" for e in intake.requests()]
    return Projected.of_intake(intake)._replace(
        problems=tuple(p.code for p in problems), text=text_of(*words, *said(repo, task_id))
    )


def completion_stands(repo: Repository, summary: Summary, key_of: KeyOf | None = None) -> bool:
    """Whether the completion of the task `summary`, read from `repo`, stands
    (`taskfs.store.completions`), with the keys of `key_of` (opened for it when None)."""
    from taskfs.store import completions

    if key_of is not None:
        return completions.stands(repo, summary, key_of)
    from taskfs.store.key_history import act_keys

    with act_keys(repo, [summary.id]) as keys:
        return completions.stands(repo, summary, keys)


def said(repo: Repository, task_id: str) -> list[str]:
    """The texts of a task folder's readable messages, in the order they were made."""
    from taskfs.store.messages import load_messages

    stored, _problems = load_messages(repo, task_id, pending=set())
    return [item.record.text for item in stored]
