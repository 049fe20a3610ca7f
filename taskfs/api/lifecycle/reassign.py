"""`taskfs reassign ID --to B --agent A`: the sender hands stuck work to someone else.

Within the lifecycle, no new state: the task is canceled (its reason names the new task) and a
new task with the same contract, addressed to B, is submitted with `x-reassignedFrom` naming
the old one; both in one commit, or neither. Only the task's sender may do it; a terminal task
cannot be handed on; when the repository requires signed messages, B must have a committed
key (`recipient_unknown` otherwise), since nobody could talk to B about the work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

from taskfs import i18n
from taskfs.api.lifecycle.transitions import stage_transition
from taskfs.api.tasks import rules
from taskfs.api.tasks.filing import record_bytes
from taskfs.api.tasks.submit import envelope_bytes, fresh_id, new_task_row
from taskfs.core.envelope import Envelope
from taskfs.core.layout import ENVELOPE, STATUS, format_time, status_name
from taskfs.core.lifecycle import TERMINAL
from taskfs.core.records import StatusRecord
from taskfs.errors import TaskfsError, fail
from taskfs.store.index import summaries
from taskfs.store.repository import Repository
from taskfs.store.task_reader import load_task

FROM_KEY = "x-reassignedFrom"
MAX_ID = 64


@dataclass(frozen=True)
class Reassigned:
    id: str  # the canceled task
    new_id: str
    to: str
    commit: str


def reassign(
    repo: Repository,
    task_id: str,
    to: str,
    agent: str,
    *,
    reason: str | None = None,
    now: datetime | None = None,
) -> Reassigned:
    with repo.writing() as writer:
        now = now or datetime.now(timezone.utc)
        task = load_task(repo, task_id, strict=True)
        sender = task.envelope.sender
        if agent != sender:
            raise fail(
                "agent_not_allowed",
                agent=agent,
                action="reassign",
                action_text=i18n.say("reassign task {id!r}", id=task_id),
                reason=f"only its sender ({sender or 'none named'}) may hand it to someone else",
            )
        if task.state in TERMINAL:
            raise fail(
                "transition_not_allowed",
                id=task_id,
                from_state=task.state,
                to_state="canceled",
                why_text=i18n.say(
                    " ({state} is final: submit a new task instead of reassigning)",
                    state=task.state,
                ),
            )
        if repo.config.require_signed_messages:
            from taskfs.store.messages import agent_keys

            if to not in agent_keys(repo):
                raise fail("recipient_unknown", agent=to)
        new_id = _new_id(repo, task_id)
        envelope = _handed_on(task.envelope, new_id, to, task_id)
        said = f": {reason.strip()}" if reason and reason.strip() else ""
        staged = stage_transition(
            repo,
            writer,
            task_id,
            "canceled",
            agent,
            reason=f"reassigned to {to} as {new_id}{said}",
            now=now,
        )
        # The new task owns what the old one owned: admit it as if the old one were closed.
        existing = summaries(repo).overlay({task_id: staged.after})
        problems = rules.Admission(repo, existing, pending=[envelope]).problems(envelope)
        if problems:
            raise TaskfsError(problems)
        writer.add(repo.task_rel(new_id, ENVELOPE), envelope_bytes(repo, envelope))
        record = StatusRecord(task=new_id, state="submitted", by=agent, at=format_time(now))
        name = status_name(1, "submitted")
        writer.add(repo.task_rel(new_id, STATUS, name), record_bytes(record.to_document()))
        writer.project(new_task_row(envelope, name, agent, record.at))
        message = (
            f"taskfs: {task_id} reassigned by {agent} to {to} as {new_id}\n\n"
            f"Taskfs-Task: {task_id}\nTaskfs-Task: {new_id}\n"
            f"Taskfs-Transition: {staged.before} -> canceled\nTaskfs-Agent: {agent}\n"
        )
        commit = writer.commit(message, agent, when=now)
    return Reassigned(task_id, new_id, to, commit)


def _new_id(repo: Repository, old: str) -> str:
    """`<old>-r1`, `<old>-r2`, ... counted from the original (a fresh id when too long)."""
    base = re.sub(r"-r\d+$", "", old)
    for n in range(1, 100):
        candidate = f"{base}-r{n}"
        if len(candidate) > MAX_ID:
            break
        if not repo.task_dir(candidate).exists():
            return candidate
    return fresh_id(repo, ())


def _handed_on(envelope: Envelope, new_id: str, to: str, old: str) -> Envelope:
    data = envelope.model_dump(by_alias=True, exclude_none=True)
    data["id"] = new_id
    data["to"] = to
    data["extensions"] = {**envelope.extensions, FROM_KEY: old}
    return Envelope.model_validate(data)
