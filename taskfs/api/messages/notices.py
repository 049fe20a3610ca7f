"""What a lifecycle act tells a peer: every act that ends a task, or refuses it, reaches the
other party when that party is a peer (an agent reached over interlink's bus), as a signed
message in the act's own commit, which the bridge then carries.

interlink has five statuses; taskfs's acts map onto them so that an interlink agent branches on
them as on any peer's (docs/TASKS.md: `failed` and `canceled` close the task, `result` is the
executor's success):

| act (`transition`)                          | the message                                   |
| ------------------------------------------- | --------------------------------------------- |
| `refuse` (submitted -> rejected)            | `failed`, "refused: REASON"                   |
| `move failed`                               | `failed`, the reason                          |
| `move canceled`, and the cancel in `reassign` | `canceled`, the reason                      |
| `complete` by the holder                    | `result`: done, the check passed              |
| `complete` by the sender (its result taken) | no status: the result was accepted            |
| `claim` (submitted -> working)              | `update`, "claimed: AGENT is working on it"   |

Nothing is sent when the other party is no peer (a commit reaches an agent of this ledger), or
when the acting agent cannot sign here (a peer takes only signed messages).
"""

from __future__ import annotations

from datetime import datetime

from taskfs.api.messages import routing
from taskfs.api.messages.openings import wire_ms
from taskfs.api.tasks.filing import record_bytes
from taskfs.core import messages as rules
from taskfs.core import wire
from taskfs.core.layout import MESSAGES, stamped_name
from taskfs.core.lifecycle import State
from taskfs.core.records import MessageRecord, ms_time
from taskfs.store import keys
from taskfs.store.repository import Repository
from taskfs.store.writer import Writer


def notice(
    state: State,
    reason: str | None,
    *,
    by_holder: bool,
    evidence: str | None = None,
    by: str = "",
) -> tuple[str | None, str] | None:
    """(status, text) of the message an act into `state` sends, or None for no message (the
    only act into `working` that tells the peer is a claim: the caller asks only for it)."""
    why = reason.strip() if reason and reason.strip() else ""
    if state == "working":
        return "update", f"claimed: {by or 'its recipient'} is working on it"
    if state == "rejected":
        return "failed", f"refused: {why}" if why else "refused"
    if state in ("failed", "canceled"):
        return state, why or state
    if state == "completed":
        rests = f" (evidence {evidence})" if evidence else ""
        if by_holder:
            return "result", f"completed: the acceptance check passed{rests}"
        return None, f"accepted: the acceptance check passed on your result{rests}; completed"
    return None


def stage(  # noqa: PLR0917 (the act's own facts)
    repo: Repository,
    writer: Writer,
    task_id: str,
    agent: str,
    to: str | None,
    found: tuple[str | None, str] | None,
    now: datetime,
) -> MessageRecord | None:
    """Add the signed message `found` (status, text) from `agent` to peer `to` about the task
    to `writer`; the record, or None when nothing is sent (no peer, no key here)."""
    if found is None or to is None or to == agent or not routing.is_peer(repo, to):
        return None
    pair = keys.load_private("agent", agent)
    own = keys.public_key(repo.root, "agent", agent)
    peer = keys.public_key(repo.root, "agent", to)
    if pair is None or own != pair.public or peer is None:
        return None
    status, text = found
    ts = wire_ms(now)
    record = MessageRecord.model_validate(
        {
            k: v
            for k, v in {
                "msg_id": wire.new_msg_id(),
                "task_id": task_id,
                "from": agent,
                "to": to,
                "status": status,
                "at": ms_time(ts),
                "ts": ts,
                "kind": "message",
                "text": text,
            }.items()
            if v is not None
        }
    )
    signed = rules.signed(record, pair, peer)
    name = stamped_name(now)
    writer.add(repo.task_rel(task_id, MESSAGES, name), record_bytes(signed.to_document()))
    return signed
