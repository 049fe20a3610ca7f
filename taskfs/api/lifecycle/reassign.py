"""`taskfs reassign ID --to B --agent A` and `taskfs retry ID [--to B] --agent A`: the sender
hands stuck work to someone else, or tries work that failed again.

Within the lifecycle, no new state. A reassign cancels the task (its reason names the new
task) and submits a new task with the same contract, addressed to B, whose envelope names the
old one (`x-reassignedFrom`); both in one commit, or neither. A retry does the same for a task
that failed or was rejected (which stays as it ended), naming it in `x-retriedFrom`, addressed
to B or to the same recipient. Only the task's sender may do either; a task is retried once
(then its successor is); when the repository requires signed messages, B must have a committed
key (`recipient_unknown` otherwise), since nobody
could talk to B about the work. What depended on the old task is satisfied by its completed
successor (`taskfs.core.lineage`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Literal

from taskfs import i18n
from taskfs.api.lifecycle.transitions import stage_transition, tell_peer
from taskfs.api.messages.openings import OpeningSigner
from taskfs.api.tasks import ids, rules
from taskfs.api.tasks.submit import stage_new_task
from taskfs.core.envelope import Envelope
from taskfs.core.lifecycle import TERMINAL, next_states
from taskfs.core.lineage import LINKS, REASSIGNED_FROM, RETRIED_FROM, Lineage
from taskfs.errors import TaskfsError, fail
from taskfs.readmodel.projection import Summary
from taskfs.store.index import summaries
from taskfs.store.repository import Repository
from taskfs.store.task_reader import load_task

FROM_KEY = REASSIGNED_FROM
MAX_ID = 64
RETRIED = frozenset({"failed", "rejected"})
Kind = Literal["reassign", "retry"]


@dataclass(frozen=True)
class Reassigned:
    id: str  # the task handed on (canceled by a reassign; left as it ended by a retry)
    new_id: str
    to: str | None
    commit: str
    kind: Kind = "reassign"


def reassign(
    repo: Repository,
    task_id: str,
    to: str,
    agent: str,
    *,
    reason: str | None = None,
    now: datetime | None = None,
) -> Reassigned:
    """The sender hands open work to `to`: the task is canceled, its contract submitted anew."""
    return _hand_on(repo, task_id, to, agent, "reassign", reason=reason, now=now)


def retry(
    repo: Repository,
    task_id: str,
    agent: str,
    *,
    to: str | None = None,
    now: datetime | None = None,
) -> Reassigned:
    """The sender tries a failed or rejected task again: its contract submitted anew, to `to`
    (default: the same recipient). What depended on the task follows it (`core.lineage`)."""
    return _hand_on(repo, task_id, to, agent, "retry", now=now)


def _hand_on(
    repo: Repository,
    task_id: str,
    to: str | None,
    agent: str,
    kind: Kind,
    *,
    reason: str | None = None,
    now: datetime | None = None,
) -> Reassigned:
    """One mechanism for both: a new task with the same contract, linked to the old one, in
    one commit (with the old one's cancellation, for a reassign), or nothing."""
    from taskfs.core.layout import is_agent_name

    if to is not None and not is_agent_name(to):
        raise fail("invalid_agent", field="to", value=to)  # never "anyone": that is no `to`
    with repo.writing() as writer:
        now = now or datetime.now(timezone.utc)
        task = load_task(repo, task_id, strict=True)
        sender = task.envelope.sender
        if agent != sender:
            raise fail(
                "agent_not_allowed",
                agent=agent,
                action=kind,
                action_text=(
                    i18n.say("reassign task {id!r}", id=task_id)
                    if kind == "reassign"
                    else i18n.say("retry task {id!r}", id=task_id)
                ),
                reason=i18n.said(
                    "only its sender ({sender}) may hand it to someone else",
                    sender=sender or i18n.said("none named"),
                ),
            )
        existing = summaries(repo)
        _refuse_unless_ready(repo, existing, task.id, task.state, kind)
        to = to if kind == "reassign" or to is not None else task.envelope.recipient
        if repo.config.require_signed_messages and to is not None:
            from taskfs.store.messages import agent_keys

            if to not in agent_keys(repo):
                raise fail("recipient_unknown", agent=to)
        new_id = _new_id(repo, task_id)
        link = REASSIGNED_FROM if kind == "reassign" else RETRIED_FROM
        envelope = _handed_on(task.envelope, new_id, to, task_id, link)
        before = task.state
        staged = None
        if kind == "reassign":
            said = f": {reason.strip()}" if reason and reason.strip() else ""
            # A reason for people, in the language of whoever hands the work on (as a reason
            # they type would be).
            why = i18n.say("reassigned to {agent} as {id}{said}", agent=to, id=new_id, said=said)
            staged = stage_transition(repo, writer, task_id, "canceled", agent, reason=why, now=now)
            # The holder hears of the cancel when it is a peer, as of any cancel.
            tell_peer(repo, writer, staged, agent, reason=why, now=now)
            # The new task owns what the old one owned: admit it as if the old one were closed.
            existing = existing.overlay({task_id: staged.after})
            before = staged.before
        problems = rules.Admission(repo, existing, pending=[envelope]).problems(envelope)
        if problems:
            raise TaskfsError(problems)
        # The new task opens as every task does: its signed opening, when keys allow, is what
        # reaches its recipient when that is a peer.
        stage_new_task(repo, writer, envelope, agent, now=now, signer=OpeningSigner(repo, agent))
        text = _message(task_id, new_id, to, agent, kind=kind, before=before)
        commit = writer.commit(text, agent, when=now)
    return Reassigned(task_id, new_id, to, commit, kind)


def _refuse_unless_ready(
    repo: Repository, tasks: Mapping[str, Summary], task_id: str, state: str, kind: Kind
) -> None:
    """A reassign takes open work, a retry a task that failed or was rejected, once."""
    if kind == "reassign" and state in TERMINAL:
        hint = (
            i18n.say(
                " ({state} is final: taskfs retry {id} submits its contract again)",
                state=state,
                id=task_id,
            )
            if state in RETRIED
            else i18n.say(
                " ({state} is final: submit a new task instead of reassigning)", state=state
            )
        )
        raise _not_allowed(task_id, state, "canceled", hint)
    if kind == "retry":
        if state not in RETRIED:
            hint = i18n.say(
                " (only a failed or rejected task is retried; open work is handed on with "
                "taskfs reassign)"
            )
            raise _not_allowed(task_id, state, "retried", hint)
        from taskfs.api.lifecycle.standing import vouched

        # A successor counts only from a submission that is the sender's own act: one written
        # in its name by anyone else does not take its retry away.
        done = vouched(repo, Lineage(tasks).successors(task_id))
        if done:
            hint = i18n.say(" (it was retried as {new}: retry that one)", new=done[-1])
            raise _not_allowed(task_id, state, "retried", hint)


def _not_allowed(task_id: str, state: str, target: str, why: str) -> TaskfsError:
    return fail(
        "transition_not_allowed",
        id=task_id,
        from_state=state,
        to_state=target,
        why_text=why,
        next_states=next_states(state) if state not in TERMINAL else "",
    )


def _message(
    task_id: str, new_id: str, to: str | None, agent: str, *, kind: Kind, before: str
) -> str:
    whom = to or "anyone"
    if kind == "reassign":
        return (
            f"taskfs: {task_id} reassigned by {agent} to {whom} as {new_id}\n\n"
            f"Taskfs-Task: {task_id}\nTaskfs-Task: {new_id}\n"
            f"Taskfs-Transition: {before} -> canceled\nTaskfs-Agent: {agent}\n"
        )
    return (
        f"taskfs: {task_id} retried by {agent} as {new_id} (to {whom})\n\n"
        f"Taskfs-Task: {task_id}\nTaskfs-Task: {new_id}\nTaskfs-Agent: {agent}\n"
    )


def _new_id(repo: Repository, old: str) -> str:
    """`<old>-r1`, `<old>-r2`, ... counted from the original, the first that no task, request
    or archived task takes (`ids.taken`); a fresh id when none is left or the name is too long."""
    base = re.sub(r"-r\d+$", "", old)
    candidates = [f"{base}-r{n}" for n in range(1, 100)]
    candidates = [c for c in candidates if len(c) <= MAX_ID]
    refused = ids.taken(repo, candidates)
    return next((c for c in candidates if c not in refused), None) or ids.fresh_id(repo)


def _handed_on(envelope: Envelope, new_id: str, to: str | None, old: str, link: str) -> Envelope:
    data = envelope.model_dump(by_alias=True, exclude_none=True)
    data["id"] = new_id
    if to is not None:
        data["to"] = to
    else:
        data.pop("to", None)
    # One link per task: a successor of a successor names only its own predecessor.
    kept = {k: v for k, v in envelope.extensions.items() if k not in LINKS}
    data["extensions"] = {**kept, link: old}
    return Envelope.model_validate(data)
