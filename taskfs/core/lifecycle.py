"""The lifecycle table of contract section 3, as values: which edges exist, who may take them.

Pure: the acting agent and the task's parties are passed in; nothing here reads a file.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, NamedTuple

from taskfs import i18n
from taskfs.core.shown import offered_to
from taskfs.errors import Problem, problem

State = Literal[
    "submitted",
    "working",
    "input_required",
    "auth_required",
    "completed",
    "failed",
    "canceled",
    "rejected",
]

STATES: tuple[State, ...] = (
    "submitted",
    "working",
    "input_required",
    "auth_required",
    "completed",
    "failed",
    "canceled",
    "rejected",
)

TRANSITIONS: dict[State, frozenset[State]] = {
    "submitted": frozenset({"working", "failed", "canceled", "rejected"}),
    "working": frozenset({"input_required", "auth_required", "completed", "failed", "canceled"}),
    "input_required": frozenset({"working", "failed", "canceled"}),
    "auth_required": frozenset({"working", "failed", "canceled"}),
    "completed": frozenset(),
    "failed": frozenset(),
    "canceled": frozenset(),
    "rejected": frozenset(),
}

TERMINAL: frozenset[State] = frozenset(s for s, out in TRANSITIONS.items() if not out)
# What `ls --state` may name: the eight states, and `intake` for the requests that are not yet
# tasks (contract section 12; a canceled one lists as `canceled`).
LISTED_STATES: tuple[str, ...] = (*STATES, "intake")
OPEN: frozenset[State] = frozenset(STATES) - TERMINAL
# The states in which a task is its holder's (claimed, not ended): every open state a claim
# leads to, in the order of STATES.
HELD: tuple[State, ...] = tuple(s for s in STATES if s in OPEN and s != "submitted")
REASON_REQUIRED: frozenset[State] = frozenset({"rejected", "failed"})


def is_state(value: object) -> bool:
    return value in TRANSITIONS


class Parties(NamedTuple):
    """Who may act on a task: its sender, its recipient and the agent that claimed it."""

    sender: str | None
    recipient: str | None
    holder: str | None
    # The owner of the delegation chain, named only when it answers the task's open question:
    # it may then move the task from input_required back to working, and nothing else.
    owner: str | None = None
    # Whether the holder's `result` stands accepted: its latest signed result, and passing
    # evidence recorded after it. Then the sender may complete the task too: how work a peer
    # did (whose key signs nothing here) is completed by a signed act.
    accepted: bool = False

    def includes(self, agent: str) -> bool:
        return agent in (self.sender, self.recipient, self.holder)


# The authority table's rule these refusals cite (`taskfs.core.ledger_kinds`: status files).
RULE = "status"


def check_transition(
    task_id: str,
    current: State,
    target: State,
    *,
    agent: str,
    parties: Parties,
    reason: str | None,
) -> list[Problem]:
    """Every reason the edge `current -> target` by `agent` is refused; empty when allowed.

    An edge outside the table is `transition_not_allowed` whatever else is wrong, so that a
    caller learns first that no change of input could make this move possible.
    """
    if target not in TRANSITIONS[current]:
        why = i18n.say(" (it is a terminal state)") if current in TERMINAL else ""
        return [
            problem(
                "transition_not_allowed",
                id=task_id,
                from_state=current,
                to_state=target,
                why_text=why,
                next_states=next_states(current),
                rule=RULE,
            )
        ]
    problems: list[Problem] = []
    refusal = _agent_refusal(current, target, agent, parties)
    if refusal is not None:
        problems.append(
            problem(
                "agent_not_allowed",
                id=task_id,
                agent=agent,
                action=target,
                action_text=_describe(task_id, current, target),
                **refusal,
                rule=RULE,
            )
        )
    if target in REASON_REQUIRED and not (reason and reason.strip()):
        problems.append(
            problem("reason_required", id=task_id, to_state=target, how='--reason "why"', rule=RULE)
        )
    return problems


def _agent_refusal(
    current: State, target: State, agent: str, parties: Parties
) -> dict[str, str] | None:
    if current == "submitted" and target == "working":
        if offered_to(parties.recipient, agent):  # the rule `ready` offers by
            return None
        return {"reason": i18n.said("the task is addressed to {agent!r}", agent=parties.recipient)}
    if target == "completed":
        if agent == parties.holder or (parties.accepted and agent == parties.sender):
            return None
        return {
            "reason": i18n.said(
                "only the agent holding it ({holder!r}) may complete it, or its sender "
                "({sender!r}) on passing evidence recorded after the holder's result",
                holder=parties.holder,
                sender=parties.sender,
            )
        }
    if parties.includes(agent):
        return None
    if current == "input_required" and target == "working" and agent == parties.owner:
        return None
    named = ", ".join(repr(p) for p in _named(parties))
    return {"reason": i18n.said("only a party to the task may move it ({names})", names=named)}


def _named(parties: Parties) -> Iterable[str]:
    seen: list[str] = []
    for name in (parties.sender, parties.recipient, parties.holder):
        if name is not None and name not in seen:
            seen.append(name)
    return seen


def _describe(task_id: str, current: State, target: State) -> str:
    """What an agent attempted, as a refusal names it: going back to work on a task that
    waited for an answer is answering it, not claiming it."""
    if target == "working" and current != "submitted":
        return i18n.say(
            "answer task {id!r} (move it from {state} back to working)", id=task_id, state=current
        )
    return describe_action(task_id, target)


def describe_action(task_id: str, target: str) -> str:
    """`claim task 't1'`, `move task 't1' to failed`: an attempt, as a refusal names it."""
    if target == "working":
        return i18n.say("claim task {id!r}", id=task_id)
    if target == "completed":
        return i18n.say("complete task {id!r}", id=task_id)
    if target == "rejected":
        return i18n.say("refuse task {id!r}", id=task_id)
    return i18n.say("move task {id!r} to {state}", id=task_id, state=target)


# The `status` a task message may carry (contract section 6); none is plain conversation.
MESSAGE_STATUSES = ("update", "needs_input", "result", "failed", "canceled")
# What a sender may name: a status, or `none` (a conversation message, no status at all).
SEND_STATUSES = (*MESSAGE_STATUSES, "none")


def next_states(current: str) -> str:
    """The states `current` may go to, as a refusal names them ("none" from a terminal one)."""
    out = TRANSITIONS.get(current, frozenset())  # type: ignore[call-overload]
    return ", ".join(s for s in STATES if s in out) or i18n.said("none")
