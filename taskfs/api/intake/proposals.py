"""Proposals on an intake: the recipient's envelope drawn up from the requester's words, and the
requester's acceptance of one (contract section 12).

A proposal submits nothing. The requester accepts exactly the proposal waiting (by its id or
digest, as `show`, `inbox` and MCP give them), which then counts as the requester's own words:
a request (`taskfs.api.intake.requests.add_within`) that submits the task when it makes the
envelope whole. The proposal's writer must be the intake's recipient and sign it where it has a
key: the rule `audit` replays (`taskfs.api.review.intake_audit`).
"""

from __future__ import annotations

from datetime import datetime, timezone

from taskfs.api.intake.requests import (
    Answer,
    add_record,
    add_within,
    check_agent,
    open_intake,
    subject,
)
from taskfs.core import yamlio
from taskfs.core.intake import Entry, Intake, IntakeRecord, fields_of, proposal_digest, proposal_id
from taskfs.core.layout import INTAKE, format_time
from taskfs.errors import Problem, TaskfsError, fail
from taskfs.store.repository import Repository


def propose(
    repo: Repository, task_id: str, agent: str, text: str, *, now: datetime | None = None
) -> Answer:
    """The recipient's envelope drawn up from the words: kept for the requester to accept;
    it submits nothing."""
    now = now or datetime.now(timezone.utc)
    fields = fields_of(text)
    if fields is None:
        raise fail("yaml_invalid", reason="a proposal is an envelope: a YAML mapping of its keys")
    with repo.writing() as writer:
        intake = open_intake(repo, task_id)
        if agent == intake.requester or intake.recipient not in (None, agent):
            raise fail(
                "agent_not_allowed",
                agent=agent,
                action="propose",
                action_text=f"propose an envelope for intake {task_id!r}",
                reason=f"only its recipient ({intake.recipient or 'anyone but the requester'}) "
                "may; the requester sends its envelope itself",
            )
        intake.refuse_misaddressed(fields)
        record = IntakeRecord(
            intake=task_id, kind="proposal", by=agent, at=format_time(now), text=text
        )
        rel = add_record(repo, writer, record, now)
        proposed = Intake(task_id, (*intake.entries, Entry(rel.rsplit("/", 1)[1], record)))
        commit = writer.commit(subject(task_id, agent, "proposal"), agent, when=now)
    file = rel
    # How the proposal would stand as the requester's envelope.
    draft = proposed.draft()
    from taskfs.core.intake import draft_problems, merge_into

    merge_into(draft, fields)
    problems = draft_problems(task_id, intake.requester, intake.recipient, draft)
    return Answer(proposed, tuple(problems), False, commit, file)


def accept(
    repo: Repository,
    task_id: str,
    agent: str,
    *,
    proposal: str | None = None,
    to: str | None = None,
    now: datetime | None = None,
) -> Answer:
    """The requester takes a proposal as its own words (submitting the task when the envelope
    is whole): exactly the one it names (`proposal`: its id or its digest, as `show`, `inbox`
    and MCP give them), which must be the one waiting now; without a name, the one waiting,
    when no other came since the requester last spoke. A proposal does not say who the task is
    for: the intake's recipient does, or, when it named none, the requester's own word (`to`)."""
    if to is not None:
        check_agent(to, "to")
    with repo.writing() as writer:
        intake = open_intake(repo, task_id)
        chosen = _chosen(repo, intake, proposal)
        text = chosen.record.text or ""
        fields = fields_of(text) or {}
        intake.refuse_misaddressed(fields)
        named = fields.get("to")
        if intake.recipient is None and named is not None and named != to:
            why = (
                f"the proposal addresses the task to {named!r}; who it is for is the "
                f"requester's word: accept it with --to {named}"
            )
            raise fail("invalid_value", field="to", reason=why, rule="intake")
        if to is not None and intake.recipient not in (None, to):
            raise fail(
                "invalid_value",
                field="to",
                reason=f"the request is addressed to {intake.recipient!r}",
            )
        if to is not None and named != to:
            text = yamlio.dump({**fields, "to": to})
        done = add_within(repo, writer, task_id, agent, text, accepts=chosen.name, now=now)
    envelope = _submitted(repo, task_id) if done.submitted else None
    return done._replace(accepted=proposal_id(chosen), envelope=envelope)


def _chosen(repo: Repository, intake: Intake, named: str | None) -> Entry:
    """The proposal an acceptance takes (see `accept`), or the refusal that says why not."""
    waiting = intake.pending_proposal()
    if waiting is None:
        raise fail("proposal_not_found", id=intake.id, rule="intake")
    refused = _unauthorized(repo, intake, waiting)
    if refused is not None:
        raise TaskfsError(refused)
    why = None
    if named is not None:
        found = [e for e in intake.proposals() if named in (proposal_id(e), proposal_digest(e))]
        if not found:
            raise fail("proposal_not_found", id=intake.id, proposal=named, rule="intake")
        if found[-1].name != waiting.name:
            why = f" (not {named}, which came before it)"
    elif len(intake.proposals_since_request()) > 1:
        why = " (more than one came since you last spoke: name the one you read)"
    if why is not None:
        raise fail(
            "proposal_superseded",
            id=intake.id,
            proposal=proposal_id(waiting),
            why_text=why,
            rule="intake",
        )
    return waiting


def _unauthorized(repo: Repository, intake: Intake, entry: Entry) -> Problem | None:
    """Why a proposal is not its writer's to make, or not signed as its writer's acts are (the
    rule `audit` replays: `intake_audit`): nothing is accepted on it."""
    why = intake.refusal(entry)
    if why is None and entry.record.message is None:
        from taskfs.core import act_signing
        from taskfs.store import keys

        key = keys.standing_key(repo.root, entry.record.by)
        if key is not None and not act_signing.verifies("intake", entry.record.to_document(), key):
            why = f"{entry.record.by!r} has a key, and did not sign it"
    if why is None:
        return None
    from taskfs.errors import problem

    return problem(
        "intake_unauthorized",
        id=intake.id,
        path=repo.task_rel(intake.id, INTAKE, entry.name),
        by=entry.record.by,
        kind=entry.record.kind,
        reason=why,
        rule="intake",
    )


def _submitted(repo: Repository, task_id: str) -> dict[str, object] | None:
    from taskfs.store.task_reader import load_envelope

    try:
        return load_envelope(repo, task_id).to_document()
    except TaskfsError:
        return None
