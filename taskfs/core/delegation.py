"""Delegation chains (contract section 8): what a child task may be, given its parents.

Pure: the tasks, their states and what each parent was granted arrive as values.

* The child's `from` is the parent's recipient (its `to`, or the agent holding it when it
  names none): `delegation_sender_mismatch`.
* Every child entry lies inside some entry of the parent (`globs.covers`), and a parent that is
  closed owns nothing any more: `ownership_not_held`.
* Every tool the child requests is among those the parent was granted: `tool_not_held`.
* Depth counts delegation hops: a task without parent is at depth 0, its child at 1; a task
  deeper than the limit is `delegation_too_deep`.
* A parent chain that comes back to a task already in it is `delegation_loop`; a parent that is
  not in the ledger (nor in the same submission) is `parent_not_found`, since ownership and
  tools cannot be checked against it.
* Ping-pong is a loop of agents rather than of tasks: a child addressed to an agent that
  already sent, received or held a task above it (B handing back to A, in a chain A started)
  is `delegation_loop` too. The child's own sender is left out: an agent splitting its work
  into sub-tasks for itself sends nothing back up the chain.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

from taskfs.core import globs
from taskfs.core.facts import EnvelopeFacts
from taskfs.core.lifecycle import TERMINAL
from taskfs.errors import Problem, problem


class Known(NamedTuple):
    """A task a child may be delegated from: its envelope, state and holder."""

    envelope: EnvelopeFacts
    state: str = "submitted"
    holder: str | None = None

    @property
    def recipient(self) -> str | None:
        return self.envelope.recipient or self.holder


# What the parent's recipient was granted for the parent task.
Grant = Callable[[Known], tuple[str, ...]]


def parent_chain(task_id: str, parent: str | None, known: Mapping[str, Known]) -> list[str]:
    """`task_id` followed by its ancestors, stopping at a task that is missing or repeats."""
    chain = [task_id]
    current = parent
    while current is not None and current not in chain:
        chain.append(current)
        found = known.get(current)
        current = found.envelope.parent if found is not None else None
    if current is not None:
        chain.append(current)
    return chain


def loop(child: EnvelopeFacts, known: Mapping[str, Known]) -> Problem | None:
    """`delegation_loop` when the parent chain of `child` comes back to a task already in it
    (its own parent being itself included), as far as `known` tells; else None. `new` and
    `validate` both ask this, so that an envelope one refuses the other refuses too."""
    if child.parent is None or child.id is None:
        return None
    return _looping(parent_chain(child.id, child.parent, known))


def _looping(chain: list[str]) -> Problem | None:
    if chain[-1] not in chain[:-1]:
        return None
    return problem(
        "delegation_loop", field="parent", id=chain[-1], chain=chain, chain_text=" -> ".join(chain)
    )


def check_child(
    child: EnvelopeFacts, known: Mapping[str, Known], grant: Grant, max_depth: int
) -> list[Problem]:
    """Every reason `child` may not be delegated from its parent; empty when it may."""
    if child.parent is None or child.id is None:
        return []
    chain = parent_chain(child.id, child.parent, known)
    looped = _looping(chain)
    if looped is not None:
        return [looped]
    parent = known.get(child.parent)
    if parent is None:
        return [problem("parent_not_found", field="parent", id=child.id, parent=child.parent)]
    problems: list[Problem] = ping_pong(child, chain, known)
    depth = len(chain) - 1
    if depth > max_depth:
        problems.append(
            problem(
                "delegation_too_deep", field="parent", id=child.id, depth=depth, limit=max_depth
            )
        )
    if child.sender != parent.recipient:
        problems.append(
            problem(
                "delegation_sender_mismatch",
                field="from",
                id=child.id,
                parent=child.parent,
                expected=parent.recipient,
                actual=child.sender,
            )
        )
    problems += _ownership(child, parent)
    held = set(grant(parent))
    for tool in child.tools_allowed or ():
        if tool not in held:
            problems.append(
                problem("tool_not_held", field="toolsAllowed", tool=tool, parent=child.parent)
            )
    return problems


def ping_pong(child: EnvelopeFacts, chain: list[str], known: Mapping[str, Known]) -> list[Problem]:
    """`delegation_loop` when `child` goes back to an agent already above it in `chain` (the
    child's id, then its ancestors, as `parent_chain` gives them)."""
    target = child.recipient
    if target is None or target == child.sender:
        return []
    ancestors = [(task_id, known[task_id]) for task_id in reversed(chain[1:]) if task_id in known]
    above = {
        agent
        for _, task in ancestors
        for agent in (task.envelope.sender, task.recipient, task.holder)
        if agent is not None
    }
    if target not in above:
        return []
    hops = [
        f"{task_id} ({task.envelope.sender} -> {task.recipient})" for task_id, task in ancestors
    ]
    hops.append(f"{child.id} ({child.sender} -> {target})")
    return [
        problem(
            "delegation_loop",
            field="to",
            id=target,
            agent=target,
            chain=[task_id for task_id, _ in ancestors] + [child.id],
            chain_text=" -> ".join(hops),
        )
    ]


def _ownership(child: EnvelopeFacts, parent: Known) -> list[Problem]:
    assert child.parent is not None
    closed = parent.state in TERMINAL
    owned = (
        [] if closed else [globs.parse_entry(raw) for raw in parent.envelope.files_and_interfaces]
    )
    return [
        problem(
            "ownership_not_held",
            field="filesAndInterfaces",
            entry=raw,
            parent=child.parent,
            parent_state=parent.state,
        )
        for raw in child.files_and_interfaces
        if not any(globs.covers(outer, globs.parse_entry(raw)) for outer in owned)
    ]
