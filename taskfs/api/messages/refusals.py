"""What a peer hears when taskfs does not act on its message.

A message that passed interlink's inbound gate (its signature, its addressee, an admitted
sender, fresh, never seen) but that taskfs's rules refuse (a status on a task this ledger does
not have, a transition the task cannot make) used to be acked and dropped: interlink's agent
never learnt, and waited. Now its sender is answered, as the agent's signed plain message
`in_reply_to` it, naming the code and why, committed (and carried by the bridge) like every
message. It is about no task of this ledger, so it is conversation; the peer's words are not
kept (they moved nothing). It is answered once: a copy the bus delivers again finds the answer
already there and adds none. Nothing is said to a sender that failed the gate (a stranger, a
forgery, a replay): interlink drops those without a word, and so does taskfs.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

from taskfs.api.lifecycle.signing import act_pair
from taskfs.api.messages import sending as messages
from taskfs.api.messages.routing import is_peer
from taskfs.api.messages.threads import read_conversations
from taskfs.api.tasks.filing import record_bytes
from taskfs.core import wire
from taskfs.core.layout import stamped_name
from taskfs.errors import Problem
from taskfs.store.messages import conversation_rel
from taskfs.store.repository import Repository
from taskfs.store.writer import Writer


class Refused(NamedTuple):
    """A peer's message taskfs did not act on, and why."""

    message: wire.Message
    sender: str
    problems: tuple[Problem, ...]


def answer_text(refused: Refused) -> str:
    message = refused.message
    what = message.status or "message"
    about = f" on task {message.task_id!r}" if message.task_id else ""
    why = "; ".join(f"{p.code}: {p.message}" for p in refused.problems)
    return f"refused: your {what} {message.msg_id}{about} was not acted on here ({why})"


def answer(
    repo: Repository, writer: Writer, agent: str, refused: Sequence[Refused], now: datetime
) -> str | None:
    """Answer each refused message of a peer not answered yet, in one commit of `agent`'s; the
    commit, or None when there was nothing to say (or no key to sign it with)."""
    pair = act_pair(repo, agent)
    if pair is None or not refused:
        return None
    answered = {
        c.record.in_reply_to
        for c in read_conversations(repo).messages
        if c.record.sender == agent and c.record.in_reply_to
    }
    said = 0
    for placed, item in enumerate(refused, start=1):
        if item.message.msg_id in answered or not is_peer(repo, item.sender):
            continue
        answered.add(item.message.msg_id)
        record = messages.new_record(
            repo, agent, item.sender, answer_text(item), now=now, pair=pair, task_id=None,
            in_reply_to=item.message.msg_id,
        )  # fmt: skip
        name = stamped_name(now + timedelta(microseconds=placed))
        writer.add(conversation_rel(name), record_bytes(record.to_document()))
        said += 1
    if not said:
        return None
    subject = f"taskfs: {agent} answers {said} message(s) it did not act on"
    return writer.commit(f"{subject}\n\nTaskfs-Agent: {agent}\n", agent, when=now)
