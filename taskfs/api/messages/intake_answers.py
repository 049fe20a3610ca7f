"""The answer a peer gets over interlink when its opening is not yet a contract: a signed
message from this agent on the request's `task_id`, `in_reply_to` the peer's message,
`needs_input` naming what the envelope lacks and how to send it (contract section 12); an
`update` once the request became a task. Committed with the request it answers
(`taskfs.api.intake.requests.Reply`), carried out by the bridge like any message."""

from __future__ import annotations

from datetime import datetime

from taskfs.api.intake.requests import Answer, Extra, Reply
from taskfs.api.lifecycle.signing import act_pair
from taskfs.api.messages.sending import new_record
from taskfs.api.tasks.filing import record_bytes
from taskfs.api.views import intake as views
from taskfs.core.layout import MESSAGES, stamped_name
from taskfs.store.repository import Repository


def reply_to(repo: Repository, agent: str, msg_id: str, now: datetime) -> Reply:
    """How `agent` answers the request that arrived as message `msg_id`."""

    def answer(done: Answer) -> Extra:
        intake = done.intake
        text = views.text(intake, done.problems, "interlink", submitted=done.submitted)
        record = new_record(
            repo,
            agent,
            intake.requester,
            text,
            now=now,
            pair=act_pair(repo, agent),
            task_id=intake.id,
            status="update" if done.submitted else "needs_input",
            in_reply_to=msg_id,
        )
        rel = repo.task_rel(intake.id, MESSAGES, stamped_name(now))
        return Extra(rel, record_bytes(record.to_document()), agent)

    return answer
