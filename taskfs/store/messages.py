"""Reading a task's messages and read marks, and telling committed files from pending ones.

A message file is `tasks/<id>/messages/<stamp>-<nonce>.yaml`; a read mark is
`tasks/<id>/reads/<stamp>-<nonce>.yaml`. A message about no task (interlink's plain
conversation) is `.taskfs/conversations/<stamp>-<nonce>.yaml`: one file each, so that clones
recording conversation at once merge without a conflict. A file that is not well formed is
returned as a `file_invalid` problem beside what could be read, never skipped in silence.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from pydantic import ValidationError

from taskfs.core.layout import CONVERSATIONS, MESSAGES, READS, STAMPED_NAME_RE, message_id
from taskfs.core.records import MessageRecord, ReadRecord
from taskfs.errors import Problem, TaskfsError, fail, problem
from taskfs.store import keys
from taskfs.store.repository import Repository
from taskfs.store.task_reader import read_yaml


@dataclass(frozen=True)
class Stored:
    """One message file as found: where it is, what it holds, whether a commit holds it."""

    name: str
    rel: str
    record: MessageRecord
    committed: bool

    @property
    def own_id(self) -> str:
        """The id its place gives it (which a well-behaved message also carries)."""
        return message_id(self.rel.split("/")[-3], self.name)


def conversation_rel(name: str) -> str:
    return f"{CONVERSATIONS}/{name}"


def load_conversations(
    repo: Repository, pending: AbstractSet[str]
) -> tuple[list[Stored], list[Problem]]:
    """The messages about no task, in the order they were made, and those that are malformed."""
    try:
        names = sorted(
            n for n in os.listdir(repo.root / CONVERSATIONS) if n.endswith(".yaml") and n[0] != "."
        )
    except (FileNotFoundError, NotADirectoryError):
        return [], []
    found: list[Stored] = []
    problems: list[Problem] = []
    for name in names:
        rel = conversation_rel(name)
        try:
            record = _parse(repo, rel, name, MessageRecord)
        except TaskfsError as exc:
            problems += exc.problems
            continue
        assert isinstance(record, MessageRecord)
        if record.task_id is not None:
            problems.append(problem("file_invalid", path=rel, reason="it names a task"))
            continue
        found.append(Stored(name, rel, record, rel not in pending))
    return found, problems


def pending_paths(repo: Repository, task_id: str | None = None) -> set[str]:
    """Ledger files in the working tree (of one task, or all) that no commit holds yet."""
    folder = repo.task_rel(task_id) if task_id is not None else repo.tasks_rel
    return {
        path
        for status, path in repo.git.worktree_changes(folder)
        if status == "??" or "A" in status
    }


def load_messages(
    repo: Repository, task_id: str, pending: AbstractSet[str]
) -> tuple[list[Stored], list[Problem]]:
    """The task's message files in the order they were made, and those that are malformed."""
    found: list[Stored] = []
    problems: list[Problem] = []
    for name in repo.list_dir(task_id, MESSAGES):
        rel = repo.task_rel(task_id, MESSAGES, name)
        try:
            record = _parse(repo, rel, name, MessageRecord)
        except TaskfsError as exc:
            problems += exc.problems
            continue
        assert isinstance(record, MessageRecord)
        found.append(Stored(name, rel, record, rel not in pending))
    return found, problems


def placements(stored: Sequence[Stored], task_id: str) -> list[list[Problem]]:
    """Each message of a task's thread (`stored`, in the order they were made) with what its
    place says against it (`core.messages.placement`: a copy from elsewhere, a replay of one
    seen before); an empty list: it is in its place. A replay counts against the copies only."""
    from taskfs.core import messages as rules

    seen: set[tuple[str, str]] = set()
    out: list[list[Problem]] = []
    for item in stored:
        placed = rules.placement(item.record, task_id, item.own_id, seen)
        if not placed:
            seen.add(rules.replay_key(item.record))
        out.append(placed)
    return out


def in_place(repo: Repository, task_id: str, msg_id: str) -> Stored | None:
    """The message of a task's thread with that id, in its place (as `Thread.find` finds it:
    a message's id is opaque, so it is found by the id its file holds, never by its name)."""
    stored, _problems = load_messages(repo, task_id, pending=set())
    for item, placed in zip(stored, placements(stored, task_id), strict=True):
        if not placed and item.record.msg_id == msg_id:
            return item
    return None


def load_message_file(repo: Repository, rel: str, pending: AbstractSet[str]) -> Stored:
    """One message file named by its repository-relative path."""
    parts = rel.split("/")
    if len(parts) < 3 or parts[-2] != MESSAGES or "/".join(parts[:-3]) != repo.tasks_rel:
        raise fail("file_invalid", path=rel, reason=f"not in {repo.tasks_rel}/<id>/{MESSAGES}/")
    record = _parse(repo, rel, parts[-1], MessageRecord)
    assert isinstance(record, MessageRecord)
    return Stored(parts[-1], rel, record, rel not in pending)


def load_reads(repo: Repository, task_id: str) -> tuple[list[ReadRecord], list[Problem]]:
    found, problems = read_files(repo, task_id)
    return [record for _rel, record in found], problems


def read_files(
    repo: Repository, task_id: str
) -> tuple[list[tuple[str, ReadRecord]], list[Problem]]:
    """A task's read marks with the path of each, and a problem for each that is not one."""
    found: list[tuple[str, ReadRecord]] = []
    problems: list[Problem] = []
    for name in repo.list_dir(task_id, READS):
        rel = repo.task_rel(task_id, READS, name)
        try:
            record = _parse(repo, rel, name, ReadRecord)
        except TaskfsError as exc:
            problems += exc.problems
            continue
        assert isinstance(record, ReadRecord)
        if record.task_id != task_id:
            problems.append(problem("file_invalid", path=rel, reason="it names another task"))
            continue
        found.append((rel, record))
    return found, problems


def _parse(
    repo: Repository, rel: str, name: str, model: type[MessageRecord] | type[ReadRecord]
) -> MessageRecord | ReadRecord:
    if not STAMPED_NAME_RE.fullmatch(name):
        raise fail("file_invalid", path=rel, reason="its name is not <time>-<nonce>.yaml")
    try:
        return model.model_validate(read_yaml(repo, rel))
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        where = ".".join(str(p) for p in errors[0]["loc"]) or "file"
        raise fail("file_invalid", path=rel, reason=f"{where}: {errors[0]['msg']}") from None


def find_task_of(repo: Repository, msg_id: str) -> str | None:
    """The task whose messages folder holds a message with this msg_id (the first, in task
    order), found by what the files hold; None when none does."""
    return message_index(repo).get(msg_id)


def message_index(repo: Repository) -> dict[str, str]:
    """msg_id -> the first task (in task order) whose messages folder holds it: one pass over
    the message files, for callers that look up many ids."""
    found: dict[str, str] = {}
    for task_id, _name, msg_id in message_files(repo):
        found.setdefault(msg_id, task_id)
    return found


def message_files(repo: Repository) -> list[tuple[str, str, str]]:
    """(task id, file name, msg_id) of every readable message file of every task, in task
    order: what a message id given in part (a prefix, a file stem) is looked for among."""
    found: list[tuple[str, str, str]] = []
    for task_id in repo.task_ids():
        for name in repo.list_dir(task_id, MESSAGES):
            try:
                value = read_yaml(repo, repo.task_rel(task_id, MESSAGES, name))
            except TaskfsError:
                continue
            msg_id = value.get("msg_id") if isinstance(value, dict) else None
            if isinstance(msg_id, str):
                found.append((task_id, name, msg_id))
    return found


def agent_keys(repo: Repository) -> dict[str, bytes]:
    """The agent keys that stand (a key whose revocation does not hold stands still)."""
    return keys.standing_keys(repo.root)
