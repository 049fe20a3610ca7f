"""An intake as every door answers it: what it is, what it lacks, field by field, and how the
requester completes it in that door's own terms (contract section 12).

The document is the same everywhere (the CLI's `--json`, MCP's structured result, A2A's
status message data); the text names the door's way of sending the envelope on that id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from taskfs import i18n
from taskfs.core import shapes
from taskfs.core.intake import Door, Intake, missing_fields
from taskfs.core.layout import SCHEMA_DIR
from taskfs.errors import Problem

SCHEMA = f"{SCHEMA_DIR}/envelope.schema.json"
# Where an A2A client finds the envelope's schema: an extension of the agent card
# (taskfs.a2a.server.ENVELOPE_EXTENSION).
A2A_EXTENSION = "urn:taskfs:a2a:envelope:v1"


def document(
    intake: Intake, problems: Sequence[Problem], *, submitted: bool = False
) -> dict[str, Any]:
    """The intake's fields for a JSON answer (no `ok`: the caller's document carries it)."""
    state = "submitted" if submitted else intake.state
    out: dict[str, Any] = {
        "id": intake.id,
        "state": state,
        "intake": True,
        "from": intake.requester,
        "to": intake.recipient,
        "door": intake.door,
        "openedAt": intake.opening.at,
    }
    if state == "intake":
        out["missing"] = missing_fields(problems)
        out["problems"] = [p.to_json() for p in problems]
        out["schema"] = SCHEMA
        proposal = intake.pending_proposal()
        out["proposal"] = None if proposal is None else proposal.record.text
        if proposal is not None:
            # What the requester names to accept exactly these words (`intake accept`).
            from taskfs.core.intake import proposal_digest, proposal_id

            out["proposalId"] = proposal_id(proposal)
            out["proposalDigest"] = proposal_digest(proposal)
            out["proposedBy"] = proposal.record.by
    if intake.words():
        out["words"] = intake.words()
    if intake.discovered_from is not None:
        out["discoveredFrom"] = intake.discovered_from
    canceled = intake.canceled
    if canceled is not None and not submitted:
        out["canceledBy"] = canceled.record.by
        out["reason"] = canceled.record.reason
    return out


def answer_document(
    intake: Intake,
    problems: Sequence[Problem],
    *,
    submitted: bool = False,
    accepted: str | None = None,
    envelope: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A whole JSON document: the request was kept (`ok`), whatever it still lacks; for an
    acceptance, the proposal it accepted and the envelope it submitted."""
    doc = document(intake, problems, submitted=submitted)
    if accepted is not None:
        doc["accepted"] = accepted
    if envelope is not None:
        doc["envelope"] = envelope
    return shapes.document(True, **doc)


def text(
    intake: Intake,
    problems: Sequence[Problem],
    door: Door,
    *,
    submitted: bool = False,
    words: bool = False,
) -> str:
    """The answer for people and models: kept, what is missing, how to complete it; with
    `words` (`show`), what the requester said first."""
    if submitted:
        return i18n.say(
            "{id}: submitted (the request from {requester} is now a task)",
            id=intake.id,
            requester=intake.requester,
        )
    if not intake.is_open:
        return i18n.say(
            "{id}: request {state} (by {by})",
            id=intake.id,
            state=intake.state,
            by=intake.canceled.record.by if intake.canceled else "-",
        )
    lines = [
        i18n.say(
            "{id}: kept as a request from {requester} to {to}, not a task yet",
            id=intake.id,
            requester=intake.requester,
            to=intake.recipient or i18n.say("anyone"),
        )
    ]
    if intake.discovered_from is not None:
        lines.append(i18n.say("a follow-up found while working on {id}", id=intake.discovered_from))
    if words and intake.words():
        lines.append(i18n.say("its words:"))
        lines += [f"    {line}" for said in intake.words() for line in said.splitlines()]
    proposal = intake.pending_proposal()
    if intake.discovered_from is not None and proposal is None and not intake.draft_given():
        # A follow-up in prose: its recipient draws the contract up; the list of every field
        # the words are not would only repeat that.
        lines.append(
            i18n.say(
                "{to} proposes an envelope from its words ({how}); {requester} may send one "
                "itself too",
                to=intake.recipient or i18n.say("its recipient"),
                how="agent_propose(task_id, envelope)"
                if door == "mcp"
                else f"taskfs intake propose {intake.id} FILE",
                requester=intake.requester,
            )
        )
        return "\n".join(lines)
    if problems:
        lines.append(i18n.say("what keeps its envelope from being a task:"))
    lines += [f"  {p.code}: {p.message}" for p in problems]
    if proposal is not None:
        lines.append(
            i18n.say(
                "{by} proposed an envelope; {requester} accepts it as its own with: {accept}",
                by=proposal.record.by,
                requester=intake.requester,
                accept=accept_hint(intake, door),
            )
        )
        # The requester reads what it would accept as its word.
        lines += [f"    {line}" for line in (proposal.record.text or "").rstrip().splitlines()]
    else:
        lines.append(how(intake, door))
    return "\n".join(lines)


def next_step(intake: Intake, door: Door, agent: str | None) -> str:
    """What `agent` does next with the open intake, in its door's terms: the requester sends
    what it lacks or accepts the proposal waiting; anyone else (its recipient, who proposed)
    waits for that acceptance, or proposes again."""
    proposal = intake.pending_proposal()
    if agent is not None and agent != intake.requester:
        if proposal is None:
            return i18n.say(
                "Propose an envelope for it: {how}",
                how="agent_propose(task_id, envelope)"
                if door == "mcp"
                else f"taskfs intake propose {intake.id} FILE",
            )
        return i18n.say(
            "Nothing to do now: {requester} accepts the proposal with {accept} (a better one "
            "replaces it: propose again)",
            requester=intake.requester,
            accept=accept_hint(intake, door),
        )
    if proposal is not None:
        return i18n.say(
            "Accept {by}'s proposal: {accept}",
            by=proposal.record.by,
            accept=accept_hint(intake, door),
        )
    if intake.discovered_from is not None and not intake.draft_given():
        return i18n.say(
            "{to} proposes an envelope from its words ({how}); {requester} may send one itself too",
            to=intake.recipient or i18n.say("its recipient"),
            how="agent_propose(task_id, envelope)" if door == "mcp" else "taskfs intake propose",
            requester=intake.requester,
        )
    return how(intake, door)


def how(intake: Intake, door: Door) -> str:
    """How the requester completes the intake, in its door's terms."""
    fields = ", ".join(missing_fields(intake.missing())) or i18n.say("nothing")
    if door == "a2a":
        return i18n.say(
            "Send the envelope (a data part, or YAML text) with taskId {id}; the missing fields "
            "alone are enough. The envelope's JSON Schema is in the agent card (extension "
            "{extension}, params.schema). Missing: {fields}",
            id=intake.id,
            extension=A2A_EXTENSION,
            fields=fields,
        )
    if door == "interlink":
        return i18n.say(
            "Reply on task_id {id} with the envelope as YAML text (the missing fields alone "
            "are enough): {fields}. Its schema: {schema}",
            id=intake.id,
            fields=fields,
            schema=SCHEMA,
        )
    if door == "mcp":
        return i18n.say(
            "Complete it with agent_send(envelope, task_id={id}): the whole envelope, or only "
            "the missing fields ({fields}). Schema: {schema}",
            id=intake.id,
            fields=fields,
            schema=SCHEMA,
        )
    return i18n.say(
        "Complete it with `taskfs intake add {id} FILE --agent {requester}` (the missing "
        "fields, or the whole envelope) or `taskfs new FILE` with `id: {id}`. Missing: "
        "{fields}. Schema: {schema}",
        id=intake.id,
        requester=intake.requester,
        fields=fields,
        schema=SCHEMA,
    )


def accept_hint(intake: Intake, door: Door) -> str:
    from taskfs.core.intake import proposal_id

    waiting = intake.pending_proposal()
    named = proposal_id(waiting) if waiting is not None else ""
    if door == "mcp":
        return f"agent_accept(task_id={intake.id!r}, proposal={named!r})"
    if door in ("a2a", "interlink"):
        return i18n.say("send the proposed envelope back on {id}", id=intake.id)
    return f"taskfs intake accept {intake.id} --proposal {named} --agent {intake.requester}"


def origin(intake: Intake) -> dict[str, Any]:
    """Where a task came from, when it was a request first (contract section 12): who asked
    whom, through which door and when, in what words, who proposed its envelope, and who
    accepted that proposal (the requester: only its acceptance submits one)."""
    out: dict[str, Any] = {
        "from": intake.requester,
        "to": intake.recipient,
        "door": intake.door,
        "openedAt": intake.opening.at,
        "words": intake.words(),
    }
    if intake.discovered_from is not None:
        out["discoveredFrom"] = intake.discovered_from
    by_name = {entry.name: entry.record for entry in intake.entries}
    for entry in intake.requests():
        taken = by_name.get(entry.record.accepts or "")
        if taken is not None and taken.kind == "proposal":
            out.update(proposedBy=taken.by, acceptedBy=entry.record.by, acceptedAt=entry.record.at)
    return out


def origin_lines(said: dict[str, Any]) -> list[str]:
    """`origin` for people: one line of who and when, then the words as they were sent."""
    how = (
        i18n.say(
            "asked by {requester} of {to} ({door}); {proposer} proposed the envelope, accepted "
            "by {acceptor}",
            requester=said["from"],
            to=said["to"] or i18n.say("anyone"),
            door=said["door"] or "-",
            proposer=said["proposedBy"],
            acceptor=said["acceptedBy"],
        )
        if said.get("proposedBy")
        else i18n.say(
            "asked by {requester} of {to} ({door}), who sent the envelope itself",
            requester=said["from"],
            to=said["to"] or i18n.say("anyone"),
            door=said["door"] or "-",
        )
    )
    return [how, *said["words"]]
