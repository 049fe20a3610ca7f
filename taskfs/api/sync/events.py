"""A task's committed ledger entries as one ordered stream of events (for `taskfs a2a`).

Every status file, message and evidence file of a task that a commit holds is one event, in
the order they arrived on HEAD's first-parent line (oldest first; a file merged in arrives
with its merge), so the order only ever grows at its end. Inside one commit a message comes
before the evidence and the transition it caused, so an answer precedes the `working` it
brings back.
Files that no commit holds yet are not events: a follower must never see something that a
crash could still take back.

An event's id is the ledger's own: the message's `msg_id` for a message, and
`status/<file>` or `evidence/<file>` for the others. Ids are opaque to the followers: they
only ever hand one back to say where they stopped (`after`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from taskfs.api.messages import threads
from taskfs.api.tasks import queries
from taskfs.core.chain import Link
from taskfs.core.evidence import EvidenceFile
from taskfs.core.layout import EVIDENCE, MESSAGES, STATUS
from taskfs.core.lifecycle import State
from taskfs.errors import fail
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task

Kind = Literal["message", "evidence", "status"]
_RANK: dict[str, int] = {MESSAGES: 0, EVIDENCE: 1, STATUS: 2}


@dataclass(frozen=True)
class LedgerEvent:
    id: str
    kind: Kind
    rel: str  # the ledger file, relative to the repository
    commit: str
    state: State  # the task's state once this event happened
    status: Link | None = None
    message: threads.CheckedMessage | None = None
    evidence: EvidenceFile | None = None


@dataclass(frozen=True)
class TaskEvents:
    task: Task  # with its evidence
    events: tuple[LedgerEvent, ...]
    head: str | None  # the commit the events were read at

    def after(self, event_id: str | None) -> tuple[LedgerEvent, ...]:
        """The events that follow `event_id` (all of them for None); `event_not_found` for
        an id this task never had."""
        if event_id is None:
            return self.events
        for index, event in enumerate(self.events):
            if event.id == event_id:
                return self.events[index + 1 :]
        raise fail("event_not_found", id=self.task.id, event=event_id)

    @property
    def last_id(self) -> str | None:
        return self.events[-1].id if self.events else None


def head(repo: Repository) -> str | None:
    """The commit HEAD names, read cheaply: followers poll it to learn when to read again."""
    return repo.git.head_guess()


def task_events(repo: Repository, task_id: str) -> TaskEvents:
    at = repo.git.head()  # first: every file committed by then is in the tree read below
    task = queries.show(repo, task_id)
    thread = threads.read_thread(repo, task_id)
    links = {repo.task_rel(task_id, STATUS, link.name): link for link in task.chain.links}
    found_messages = {c.stored.rel: c for c in thread.messages if c.in_place}
    found_evidence = {item.rel: item for item in task.evidence or ()}
    added = repo.git.arrivals(at, repo.task_rel(task_id)) if at else []
    # Each commit's files come together, oldest commit first; a merge brings its files at its
    # own place, so what was already streamed never gains an entry before it.
    first: dict[str, int] = {}
    ordered: list[tuple[int, int, str, str]] = []
    seen: set[str] = set()
    for position, (commit, rel) in enumerate(added):
        first.setdefault(commit, position)
        kind = rel.rsplit("/", 2)[-2] if rel.count("/") >= 2 else ""
        if kind not in _RANK or rel in seen:
            continue
        seen.add(rel)
        ordered.append((first[commit], _RANK[kind], rel, commit))
    ordered.sort()
    events: list[LedgerEvent] = []
    state: State = "submitted"
    for _rank, _kind, rel, commit in ordered:
        if rel in links:
            link = links[rel]
            state = link.record.state
            event = LedgerEvent(f"{STATUS}/{link.name}", "status", rel, commit, state, status=link)
        elif rel in found_messages:
            checked = found_messages[rel]
            event = LedgerEvent(
                checked.record.msg_id, "message", rel, commit, state, message=checked
            )
        elif rel in found_evidence:
            item = found_evidence[rel]
            event = LedgerEvent(
                f"{EVIDENCE}/{item.name}", "evidence", rel, commit, state, evidence=item
            )
        else:
            continue  # superseded, unreadable or not a ledger file: `validate` names those
        events.append(event)
    return TaskEvents(task, tuple(_settle(events)), at)


def _settle(events: list[LedgerEvent]) -> list[LedgerEvent]:
    """A message committed with the transition it caused is shown in the state it left the
    task in, like the transition after it."""
    out: list[LedgerEvent] = []
    for index, event in enumerate(events):
        nxt = events[index + 1] if index + 1 < len(events) else None
        if (
            event.kind == "message"
            and nxt is not None
            and nxt.kind == "status"
            and nxt.commit == event.commit
        ):
            out.append(replace(event, state=nxt.state))
        else:
            out.append(event)
    return out


ARTIFACT_BYTES_LIMIT = 1 << 20


def artifact_content(repo: Repository, commit: str, location: str) -> bytes | None:
    """The bytes of an artifact named by a repository path, as the commit that declared it
    holds them (at most `ARTIFACT_BYTES_LIMIT`); None for a URL, a path outside the
    repository, a file that commit does not hold, or a larger one."""
    parts = location.split("/")
    if (
        not location
        or location.startswith("/")
        or "://" in location
        or any(p in ("", ".", "..") for p in parts)
        or parts[0] == ".git"
    ):
        return None
    found = repo.git.read_blobs([(commit, location)])[0]
    if found is None or len(found) > ARTIFACT_BYTES_LIMIT:
        return None
    return found
