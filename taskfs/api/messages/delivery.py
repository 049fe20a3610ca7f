"""Delivering message files written elsewhere (by an agent without git, or copied in) and
marking messages read (contract section 6)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from taskfs.api.messages.sending import Sent, act
from taskfs.api.messages.threads import NOT_ASKED, Thread, locate, named, read_thread, stem
from taskfs.api.tasks.filing import record_bytes
from taskfs.core import messages as rules
from taskfs.core.layout import MESSAGES, READS, format_time, message_location, stamped_name
from taskfs.core.records import ReadRecord
from taskfs.errors import Problem, TaskfsError, fail, problem
from taskfs.store.messages import load_message_file, message_files, pending_paths
from taskfs.store.repository import Repository
from taskfs.store.task_reader import load_task


@dataclass(frozen=True)
class Delivered:
    path: str
    sent: Sent | None = None
    problems: tuple[Problem, ...] = ()
    already: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems


def deliver(
    repo: Repository, paths: Sequence[str] = (), *, now: datetime | None = None
) -> list[Delivered]:
    """Act on message files written into `messages/` but not committed (by an agent without
    git, or copied in): check each, make its transition, commit both. Refused files stay
    where they are, uncommitted, and are answered with their codes."""
    now = now or datetime.now(timezone.utc)
    pending = pending_paths(repo)
    if paths:
        targets = [_repo_relative(repo, p) for p in paths]
    else:
        targets = sorted(
            p for p in pending if p.split("/")[-2:-1] == [MESSAGES] and p.endswith(".yaml")
        )
    return [_deliver_one(repo, rel, now) for rel in targets]


def _repo_relative(repo: Repository, label: str) -> str:
    path = Path(label)
    absolute = (path if path.is_absolute() else Path.cwd() / path).resolve()
    try:
        return absolute.relative_to(repo.root).as_posix()
    except ValueError:
        return label


def _deliver_one(repo: Repository, rel: str, now: datetime) -> Delivered:
    try:
        with repo.writing() as writer:
            item = load_message_file(repo, rel, pending_paths(repo))
            if item.committed:
                return Delivered(rel, already=True)
            task = load_task(repo, rel.split("/")[-3], strict=True)
            thread = read_thread(repo, task.id, pending=NOT_ASKED)
            return Delivered(rel, sent=act(repo, writer, task, thread, item, now=now, new=False))
    except TaskfsError as exc:
        return Delivered(rel, problems=exc.problems)


# -- read marks ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Marked:
    marked: tuple[str, ...]
    already: tuple[str, ...]
    commit: str | None


def mark_read(
    repo: Repository, agent: str, msg_ids: Iterable[str], *, now: datetime | None = None
) -> Marked:
    """Mark messages addressed to `agent` as read: one `reads/` file per task, one commit."""
    now = now or datetime.now(timezone.utc)
    wanted = list(dict.fromkeys(msg_ids))
    if not wanted:
        raise fail("usage", reason="name at least one message id")
    with repo.writing() as writer:
        threads: dict[str, Thread] = {}
        marks: dict[str, list[str]] = {}
        already: list[str] = []
        found_ids, problems = _located(repo, wanted)
        for msg_id, task_id in found_ids:
            thread = threads.get(task_id) or read_thread(repo, task_id)
            threads[task_id] = thread
            found = thread.find(msg_id)
            if found is None or found.delivery == "pending":
                problems.append(problem("message_not_found", msg_id=msg_id))
                continue
            refused = [*found.problems, *rules.addressed(found.record, agent)]
            problems += refused
            if not refused and found.delivery == "read":
                already.append(msg_id)
            elif not refused:
                marks.setdefault(task_id, []).append(msg_id)
        if problems:
            raise TaskfsError(problems)
        if not marks:
            return Marked((), tuple(already), None)
        from taskfs.api.lifecycle.signing import sign_act

        for task_id, ids in marks.items():
            mark = ReadRecord(task_id=task_id, by=agent, at=format_time(now), msg_ids=tuple(ids))
            rel = repo.task_rel(task_id, READS, stamped_name(now))
            document = sign_act(repo, agent, "read", mark.to_document(), "mark messages read")
            writer.add(rel, record_bytes(document))
        marked = tuple(m for ids in marks.values() for m in ids)
        subject = f"taskfs: {len(marked)} message(s) read by {agent}"
        trailers = "".join(f"Taskfs-Task: {task_id}\n" for task_id in marks)
        commit = writer.commit(f"{subject}\n\n{trailers}Taskfs-Agent: {agent}\n", agent, when=now)
    return Marked(marked, tuple(already), commit)


def _located(
    repo: Repository, wanted: Sequence[str]
) -> tuple[list[tuple[str, str]], list[Problem]]:
    """(msg_id, task id) of each message `wanted` names, once each: by its id, or by a prefix
    of it or its file's stem, read as `send --in-reply-to` reads them (`threads.named`); and
    why the others name none."""
    opaque = [m for m in wanted if message_location(m) is None]
    files = message_files(repo) if opaque else []
    index: dict[str, str] = {}
    for task, _name, msg_id in files:
        index.setdefault(msg_id, task)
    known = [(msg_id, stem(name)) for _task, name, msg_id in files]
    found: dict[str, str] = {}
    problems: list[Problem] = []
    for given in wanted:
        msg_id = given
        task_id = locate(repo, given, index)
        if task_id is None and message_location(given) is None:
            try:
                msg_id = named(given, known) or given
            except TaskfsError as exc:
                problems += exc.problems
                continue
            task_id = index.get(msg_id)
        if task_id is None:
            problems.append(problem("message_not_found", msg_id=given))
        else:
            found.setdefault(msg_id, task_id)
    return list(found.items()), problems
