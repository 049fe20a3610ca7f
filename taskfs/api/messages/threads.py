"""Looking messages up (contract section 6): a task's thread, the plain conversation, who a
party talks to, where a message is and how far it got, and `validate`'s view of the files.

Every message is checked whenever it is read (`taskfs.core.messages` says what and when); one
that fails is shown with its codes and never acted on.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Literal

from taskfs import i18n
from taskfs.api.tasks.filing import FileReport
from taskfs.core import messages as rules
from taskfs.core.layout import CONVERSATIONS, MESSAGES, READS, message_location
from taskfs.core.lifecycle import State
from taskfs.core.records import MessageRecord, ReadRecord
from taskfs.errors import Problem, fail
from taskfs.store.messages import (
    Stored,
    agent_keys,
    find_task_of,
    load_conversations,
    load_messages,
    load_reads,
    pending_paths,
    placements,
)
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task, load_task

# `received`: what interlink calls a message that reached its addressee, as its addressee's
# interlink tools see it (`taskfs.api.messages.interlink`); elsewhere a message is `sent`.
Delivery = Literal["pending", "sent", "read", "received"]
# Acting on a message needs its neighbours' checks, not whether git holds them yet: this spares
# a `git status` on every send.
NOT_ASKED: frozenset[str] = frozenset()


@dataclass(frozen=True)
class CheckedMessage:
    """A message as read, with every reason it may not be acted on, and how far it got."""

    stored: Stored
    problems: tuple[Problem, ...]
    delivery: Delivery

    @property
    def record(self) -> MessageRecord:
        return self.stored.record

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def in_place(self) -> bool:
        return not any(p.code == "message_replayed" for p in self.problems)


@dataclass(frozen=True)
class Thread:
    """Every message of one task, checked, and the files that could not be read."""

    task_id: str
    messages: tuple[CheckedMessage, ...]
    problems: tuple[Problem, ...] = ()

    def find(self, msg_id: str) -> CheckedMessage | None:
        for checked in self.messages:
            if checked.in_place and checked.record.msg_id == msg_id:
                return checked
        return None


def trust(repo: Repository, *, entering: bool = False) -> rules.SenderTrust:
    """The keys messages are checked against. What the ledger holds keeps verifying under a
    key `keys remove` revoked since; a message entering it now needs a key that stands."""
    current = agent_keys(repo)
    if not entering:
        from taskfs.store.keys import revoked_keys

        current = {**revoked_keys(repo.root), **current}
    return rules.SenderTrust(current, repo.config.require_signed_messages)


def read_thread(
    repo: Repository,
    task_id: str,
    *,
    trusted: rules.SenderTrust | None = None,
    pending: AbstractSet[str] | None = None,
) -> Thread:
    trusted = trusted or trust(repo)
    pending = pending_paths(repo, task_id) if pending is None else pending
    stored, problems = load_messages(repo, task_id, pending)
    reads, read_problems = load_reads(repo, task_id)
    read_by = {
        (msg_id, mark.by) for mark in reads if _mark_holds(mark, trusted) for msg_id in mark.msg_ids
    }
    out: list[CheckedMessage] = []
    for item, placed in zip(stored, placements(stored, task_id), strict=True):
        record = item.record
        found = rules.authenticity(record, trusted)
        delivery: Delivery = "sent"
        if not item.committed:
            delivery = "pending"
        elif (record.msg_id, record.recipient) in read_by:
            delivery = "read"
        out.append(CheckedMessage(item, tuple(found + placed), delivery))
    return Thread(task_id, tuple(out), tuple(problems + read_problems))


def _mark_holds(mark: ReadRecord, trusted: rules.SenderTrust) -> bool:
    """Whether a read mark counts: signed by its `by` where `by` has a key (one written in its
    name by anyone else marks nothing read; audit names it: `read_audit`). Only the addressee's
    mark of a message counts at all (`read_by` pairs each with its `by`)."""
    key = trusted.public_keys.get(mark.by)
    if key is None:
        return True
    from taskfs.core import act_signing

    return act_signing.verifies("read", mark.to_document(), key)


def read_conversations(repo: Repository, *, trusted: rules.SenderTrust | None = None) -> Thread:
    """The messages about no task (interlink's plain conversation), checked like a thread."""
    if not (repo.root / CONVERSATIONS).is_dir():
        return Thread("", ())
    trusted = trusted or trust(repo)
    pending = {
        path
        for status, path in repo.git.worktree_changes(CONVERSATIONS)
        if status == "??" or "A" in status
    }
    stored, problems = load_conversations(repo, pending)
    seen: set[tuple[str, str]] = set()
    out: list[CheckedMessage] = []
    for item in stored:
        found = rules.authenticity(item.record, trusted)
        found += rules.placement(item.record, None, item.own_id, seen)
        seen.add(rules.replay_key(item.record))
        out.append(CheckedMessage(item, tuple(found), "sent" if item.committed else "pending"))
    return Thread("", tuple(out), tuple(problems))


def submitter(task: Task) -> str | None:
    """Who sent the task: its `from`, else the agent that submitted it."""
    if task.envelope.sender:
        return task.envelope.sender
    return task.chain.links[0].record.by if task.chain.links else None


def counterpart(task: Task, agent: str) -> str | None:
    """Whom a party of the task talks to: the sender talks to the worker, everyone else to
    the sender."""
    sender = submitter(task)
    if agent == sender:
        return task.chain.holder or task.envelope.recipient
    return sender


# -- reading -------------------------------------------------------------------------------


def file_reports(repo: Repository, task_id: str) -> list[FileReport]:
    """`validate`'s view of a task's message and read files: malformed files, and messages
    that fail their signature or are copies (unsigned ones are shown, not reported: whether
    they were acceptable depended on the configuration when they were sent)."""
    if not repo.list_dir(task_id, MESSAGES) and not repo.list_dir(task_id, READS):
        return []
    # Whether a file is committed does not matter here: no need to ask git.
    thread = read_thread(repo, task_id, pending=set())
    reports: dict[str, list[Problem]] = {}
    for checked in thread.messages:
        reports[checked.stored.rel] = [
            p for p in checked.problems if p.code in ("signature_invalid", "message_replayed")
        ]
    for found in thread.problems:
        reports.setdefault(str(found.data.get("path", "")), []).append(found)
    for name in repo.list_dir(task_id, READS):
        reports.setdefault(repo.task_rel(task_id, READS, name), [])
    return [FileReport(path, tuple(found)) for path, found in sorted(reports.items())]


def messages(repo: Repository, task_id: str) -> Thread:
    """A task's messages; an archived task's as the commit the archive took it from holds
    them, with those that arrived in its folder after it (`taskfs.store.index.home`)."""
    from taskfs.store.index import home

    where = home(repo, task_id)
    load_task(where, task_id)
    return read_thread(where, task_id)


def conversation(
    repo: Repository, agent: str, peer: str, *, session: str | None = None
) -> list[CheckedMessage]:
    """Every message between `agent` and `peer`, about any task, oldest first; with `session`,
    only what that session of `agent` should see (`for_session`)."""
    pair = {agent, peer}
    trusted, pending = trust(repo), pending_paths(repo)
    threads = [
        read_thread(repo, task_id, trusted=trusted, pending=pending) for task_id in repo.task_ids()
    ]
    threads.append(read_conversations(repo, trusted=trusted))
    found = [
        checked
        for thread in threads
        for checked in thread.messages
        if (
            {checked.record.sender, checked.record.recipient} == pair
            or (agent == peer and checked.record.sender == checked.record.recipient == agent)
        )
        and for_session(checked.record, agent, session)
    ]
    return sorted(found, key=lambda c: (c.record.at, c.record.msg_id))


def for_session(record: MessageRecord, agent: str, session: str | None) -> bool:
    """Whether one session of `agent` should see a message: a message to `agent` that names a
    session goes to that session only; everything else (no session named, no session asked,
    or written by `agent` itself) is for every session."""
    return (
        session is None
        or record.session is None
        or record.recipient != agent
        or record.session == session
    )


def pending(repo: Repository, sender: str | None = None) -> list[CheckedMessage]:
    """Message files written but not committed yet (by `sender`, when named), oldest first:
    what `deliver` would act on."""
    waiting = pending_paths(repo)
    task_ids = sorted({p.split("/")[-3] for p in waiting if p.split("/")[-2:-1] == [MESSAGES]})
    trusted = trust(repo)
    found = [
        checked
        for task_id in task_ids
        if repo.has_task(task_id)
        for checked in read_thread(repo, task_id, trusted=trusted, pending=waiting).messages
        if checked.delivery == "pending" and sender in (None, checked.record.sender)
    ]
    return sorted(found, key=lambda c: (c.record.at, c.record.msg_id))


# The ids an ambiguous one is said to fit, at most (a one-letter prefix may fit thousands).
FITS_SHOWN = 20


def named(given: str, known: Iterable[tuple[str, str]]) -> str | None:
    """The msg_id `given` names among `known` ((msg_id, file stem) of each message in its
    place): that id itself, else the one id it is a prefix of or the one file it is the stem
    of; None when it names none; `message_ambiguous` when it fits more than one. Every command
    that takes a message id reads it so (`send --in-reply-to`, `read`, `agent_answer`)."""
    token = given.strip()
    if not token:
        return None
    pairs = list(known)
    if any(msg_id == token for msg_id, _stem in pairs):
        return token
    found = sorted({msg_id for msg_id, stem in pairs if msg_id.startswith(token) or stem == token})
    if len(found) > 1:
        shown = found[:FITS_SHOWN]
        more = len(found) - len(shown)
        raise fail(
            "message_ambiguous",
            msg_id=given,
            count=len(found),
            matches=shown,
            matches_text=", ".join(shown)
            + (i18n.say(" and {count} more", count=more) if more else ""),
        )
    return found[0] if found else None


def stem(name: str) -> str:
    """A message file's name without its `.yaml`: what `send --in-reply-to` takes for it."""
    return name.rsplit(".", 1)[0]


def locate(repo: Repository, msg_id: str, index: dict[str, str] | None = None) -> str | None:
    """The task a message about a task belongs to: an older id names it; an opaque one is
    found by the msg_id its file holds (in `index`, when the caller made one), never by a file
    name."""
    location = message_location(msg_id)
    if location is not None:
        return location[0] if repo.has_task(location[0]) else None
    return index.get(msg_id) if index is not None else find_task_of(repo, msg_id)


@dataclass(frozen=True)
class Status:
    message: CheckedMessage
    task_state: State


def message_status(repo: Repository, msg_id: str) -> Status:
    """Where a message got to (`pending`, `sent`, `read`) and the state of its task."""
    task_id = locate(repo, msg_id)
    if task_id is None:
        raise fail("message_not_found", msg_id=msg_id)
    task = load_task(repo, task_id)
    found = read_thread(repo, task.id).find(msg_id)
    if found is None:
        raise fail("message_not_found", msg_id=msg_id)
    return Status(found, task.state)
