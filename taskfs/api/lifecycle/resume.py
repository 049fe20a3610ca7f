"""What an agent resumes first: the tasks it holds, and why each task offered to it waits.

`prime` and `inbox` lead with these (as beads' `bd prime` does): the working tasks, the ones
waiting for an answer (with the question), and the ones canceled under the agent ("stop"),
then the questions and results waiting for it, then what it can claim, each blocked task with
its blocker named (`blocked by t06 (input_required)`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from taskfs import i18n
from taskfs.api.messages.inbox import Inbox
from taskfs.api.messages.threads import read_thread
from taskfs.core.lifecycle import HELD
from taskfs.core.lineage import Lineage
from taskfs.core.readiness import relations, rivals, unfinished_dependencies, waiting_on
from taskfs.readmodel.projection import Summary
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task


@dataclass(frozen=True)
class Held:
    """A task the agent holds (claimed), as it should resume it."""

    id: str
    state: str
    objective: str
    question: str = ""  # input_required: the open question the agent asked
    question_id: str = ""
    by: str = ""  # canceled: who canceled it
    reason: str = ""  # canceled: why


def held(repo: Repository, tasks: Mapping[str, Task], box: Inbox) -> list[Held]:
    """The open tasks `box.agent` holds, then those canceled under it that it has not yet
    acknowledged (the cancellation is unread, or it made no move since)."""
    agent = box.agent
    unread = {c.record.msg_id for c in box.unread}
    found: list[Held] = []
    stopped: list[Held] = []
    for task in tasks.values():
        if task.holder != agent:
            continue
        head = task.chain.head
        objective = task.envelope.objective
        if task.state in HELD:
            found.append(_open(repo, task, objective))
        elif task.state == "canceled" and head is not None and head.record.by != agent:
            message = head.record.message
            if message is None or message in unread:
                reason = (head.record.reason or "").strip()
                if not reason and message is not None:
                    reason = _message_text(repo, task.id, message)
                stopped.append(
                    Held(task.id, "canceled", objective, by=head.record.by, reason=reason)
                )
    found.sort(key=lambda held: HELD.index(held.state))  # working first
    return found + stopped


def _open(repo: Repository, task: Task, objective: str) -> Held:
    if task.state != "input_required":
        return Held(task.id, task.state, objective)
    head = task.chain.head
    asked = head.record.message if head is not None else None
    text = _message_text(repo, task.id, asked) if asked else ""
    return Held(task.id, task.state, objective, question=text, question_id=asked or "")


def _message_text(repo: Repository, task_id: str, msg_id: str) -> str:
    found = read_thread(repo, task_id).find(msg_id)
    return found.record.text if found is not None else ""


def blockers(task_id: str, summaries: Mapping[str, Summary]) -> list[str]:
    """Why the task cannot be claimed now, each as `ID (STATE)` (`blocking`)."""
    return [why for _id, why in blocking(task_id, summaries)]


def blocking(task_id: str, summaries: Mapping[str, Summary]) -> list[tuple[str, str]]:
    """What keeps the task from being claimed now, each as (the task in the way, why as people
    read it): its unfinished dependencies (`does not exist yet` when the task does not), else
    the open rivals owning what it owns (the claim's own gates, `taskfs.core.readiness`,
    decide both)."""
    task = summaries[task_id]
    lineage = Lineage(summaries)
    out = [
        (dep, waiting_on(dep, summaries, lineage))
        for dep in unfinished_dependencies(task, summaries, lineage)
    ]
    if out:
        return out
    graph, parents = relations(summaries)
    return [
        (r.id, i18n.say("{id} ({state}, same files)", id=r.id, state=r.state))
        for r in rivals(task, summaries, graph, parents)
    ]


def blocked(repo: Repository, agent: str | None = None) -> list[tuple[Summary, list[str]]]:
    """The submitted tasks offered to `agent` (anyone's, with no agent) that a claim would
    refuse now, each with what it waits for (`blockers`: dependencies, followed down
    their lineage, else rivals over the same files)."""
    from taskfs.api.tasks.listing import ready
    from taskfs.core.shown import offered_to
    from taskfs.store.index import summaries

    tasks = summaries(repo)
    ready_now = {t.id for t in ready(repo, agent)}
    return [
        (t, blockers(t.id, tasks) or [i18n.say("its files (unreadable or not taken in yet)")])
        for t in tasks.many(tasks.in_state("submitted"))
        if t.state == "submitted"
        and t.length
        and not t.intake
        and t.id not in ready_now
        and offered_to(t.envelope.recipient, agent)
    ]


def standing_of(
    repo: Repository, box: Inbox
) -> tuple[list[Held], dict[str, list[tuple[str, str]]]]:
    """What the JSON inbox adds to `box` (as the text inbox's first rows say it): the tasks
    `box.agent` holds (`held`), and for each task offered to it that a claim would refuse now,
    what it waits for (`blocking`)."""
    from taskfs.store.index import summaries

    waiting: dict[str, list[tuple[str, str]]] = {}
    if box.waiting_claims:
        known = summaries(repo)
        waiting = {t.id: blocking(t.id, known) if t.id in known else [] for t in box.waiting_claims}
    return held(repo, box.tasks, box), waiting


def row(label: str, rest: str) -> str:
    """A row of the text inbox: its kind in a column of its own, then what it is about."""
    return f"  {label:<7} {rest}"


def held_lines(repo: Repository, box: Inbox) -> list[str]:
    """The text inbox's first rows: what `box.agent` holds."""
    rows = []
    for task in held(repo, box.tasks, box):
        if task.state == "canceled":
            said = i18n.say(
                "{id}  canceled by {agent}: stop working on it", id=task.id, agent=task.by
            )
            rows.append(row(i18n.say("STOP"), said))
        elif task.state == "input_required":
            said = i18n.say("{id}  for an answer to {msg_id}", id=task.id, msg_id=task.question_id)
            rows.append(row(i18n.say("waiting"), said))
        else:
            rows.append(row(i18n.say("holding"), f"{task.id}  {task.state}"))
    return rows


def waiting_lines(repo: Repository, box: Inbox) -> list[str]:
    """The text inbox's rows for the tasks to claim that a claim would refuse now, each with
    what it waits on (`blockers`: the claim's own gates), where `claim` rows were offered."""
    if not box.waiting_claims:
        return []
    from taskfs.store.index import summaries

    known = summaries(repo)
    rows = []
    for task in box.waiting_claims:
        found = blockers(task.id, known) if task.id in known else []
        said = i18n.say("{id}  from {agent}", id=task.id, agent=task.envelope.sender or "-")
        if found:
            said += i18n.say(" (blocked by {ids})", ids=", ".join(found))
        rows.append(row(i18n.say("waits"), said))
    return rows


def unread_lines(box: Inbox, limit: int = 72) -> list[str]:
    """The unread messages, cancellations first, each with an excerpt of its text."""
    order = sorted(box.unread, key=lambda c: c.record.status != "canceled")
    rows = []
    for checked in order:
        record = checked.record
        flat = " ".join(record.text.split())
        excerpt = flat if len(flat) <= limit else flat[: limit - 3] + "..."
        said = i18n.say(
            "{id}  {kind} from {agent} on {task}: {text}",
            id=record.msg_id,
            kind=record.status or i18n.say("message"),
            agent=record.sender,
            task=record.task_id or "-",
            text=excerpt,
        )
        rows.append(row(i18n.say("unread"), said))
    return rows
