"""A request's links to tasks (issue 38): the follow-up an agent found while working on one
(`taskfs discover`, `agent_discover`), and the request a task was born from (`show`'s origin).
A follow-up is an intake like any other (`taskfs.api.intake.requests`), linked by
`discoveredFrom`; only a party to the task it names files one (`audit` holds it to that too)."""

from __future__ import annotations

from datetime import datetime

from taskfs import i18n
from taskfs.api.intake.requests import Answer, open_request
from taskfs.core import layout
from taskfs.core.intake import Door, Intake
from taskfs.core.layout import INTAKE
from taskfs.errors import TaskfsError, fail
from taskfs.store.intake_reader import load_intake
from taskfs.store.repository import Repository


def discover(
    repo: Repository,
    source: str,
    agent: str,
    text: str,
    *,
    to: str | None = None,
    task_id: str | None = None,
    door: Door = "cli",
    now: datetime | None = None,
) -> Answer:
    """A follow-up `agent` found while working on task `source`, in its words: an intake
    linked to `source` (`discoveredFrom`), addressed to `source`'s sender unless `to` names
    another. Only a party to `source` (its sender, recipient or holder) files one; the contract
    is still reached through the intake (a proposal, the requester's acceptance)."""
    from taskfs.store.task_reader import load_task

    task = load_task(repo, source)  # task_not_found, intake_open: by name
    env = task.envelope
    if agent not in (env.sender, env.recipient, task.holder):
        raise fail(
            "agent_not_allowed",
            agent=agent,
            action="discover",
            action_text=i18n.say("file a follow-up of task {id!r}", id=source),
            reason=i18n.said("only a party to it (its sender, recipient or holder) files one"),
        )
    addressed = to if to is not None else (env.sender if env.sender != agent else None)
    return open_request(
        repo,
        agent,
        text,
        to=addressed,
        task_id=task_id,
        door=door,
        context=env.context_id,
        now=now,
        discovered_from=source,
    )


def origin(repo: Repository, task_id: str) -> Intake | None:
    """The request task `task_id` was born from (its intake, submitted), or None when its
    envelope came whole, or its intake files cannot be read (`validate` names them)."""
    if not layout.is_task_id(task_id) or not repo.list_dir(task_id, INTAKE):
        return None
    try:
        intake, _problems = load_intake(repo, task_id)
    except TaskfsError:
        return None
    return intake if intake.entries else None
