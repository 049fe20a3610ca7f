"""A task mirrored from another ledger (`taskfs a2a send`/`follow`): the work files that
arrived as artifacts, and how far the mirror has read the remote task's events.

The artifacts are the recipient's work, so they are written where the envelope says the
recipient works, and nowhere else: a path the task does not own, a path into the ledger or
git's own files, or one that climbs out of the repository is refused with the contract's
codes, and nothing is written. They are committed (by the recipient, whose work they are)
before the local acceptance check runs on them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from taskfs.core import globs
from taskfs.core.layout import FIXED_LEDGER_FOLDERS
from taskfs.errors import Problem, TaskfsError, problem
from taskfs.store import fs
from taskfs.store.repository import Repository
from taskfs.store.task_reader import load_task

MIRROR_KEY = "x-a2a"


def mirrored_url(repo: Repository, task_id: str) -> str | None:
    """The A2A agent the task was delegated to, when it was delegated over A2A."""
    task = load_task(repo, task_id)
    value = task.envelope.extensions.get(MIRROR_KEY)
    if isinstance(value, dict) and isinstance(value.get("url"), str):
        return str(value["url"])
    return None


def mirrored_tasks(repo: Repository) -> list[str]:
    return [task_id for task_id in repo.task_ids() if mirrored_url(repo, task_id)]


def record_work(
    repo: Repository, task_id: str, agent: str, files: Mapping[str, bytes]
) -> tuple[list[str], str | None]:
    """Write the files that arrived for the task and commit those that changed, as `agent`.
    Returns the paths changed and the commit (None when nothing changed)."""
    task = load_task(repo, task_id, strict=True)
    entries = [globs.parse_entry(e) for e in task.envelope.files_and_interfaces]
    problems: list[Problem] = []
    for rel in files:
        why = _unsafe(repo, rel)
        if why is None and not any(globs.matches(entry, rel) for entry in entries):
            why = "the task does not own it"
        if why is not None:
            problems.append(problem("files_and_interfaces_invalid", value=rel, reason=why))
    if problems:
        raise TaskfsError(problems)
    with repo.writing() as writer:
        changed = []
        for rel, data in sorted(files.items()):
            target = repo.root / rel
            if target.is_file() and target.read_bytes() == data:
                continue
            fs.replace(target, data)
            changed.append(rel)
        if not changed:
            return [], None
        message = (
            f"taskfs: {task_id} work from {agent} (arrived over A2A)\n\n"
            f"Taskfs-Task: {task_id}\nTaskfs-Agent: {agent}\n"
        )
        return changed, writer.commit_existing(changed, message, agent)


def _unsafe(repo: Repository, rel: str) -> str | None:
    path = PurePosixPath(rel)
    if not rel or path.is_absolute() or any(p in ("", ".", "..") for p in rel.split("/")):
        return "not a plain path inside the repository"
    if path.parts[0] in FIXED_LEDGER_FOLDERS or path.parts[0] == repo.tasks_rel.split("/")[0]:
        return "it lies in the ledger or in git's or taskfs's own files"
    return None


# -- how far the mirror has read --------------------------------------------------------------


def _cursor_file(repo: Repository, task_id: str) -> Path:
    return repo.state_dir() / "a2a" / f"{task_id}.cursor"


def load_cursor(repo: Repository, task_id: str) -> str | None:
    try:
        text = _cursor_file(repo, task_id).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return text or None


def save_cursor(repo: Repository, task_id: str, event_id: str) -> None:
    fs.replace(_cursor_file(repo, task_id), event_id.encode())
