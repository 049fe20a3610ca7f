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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from taskfs.core import globs
from taskfs.core.facts import EnvelopeFacts
from taskfs.core.lifecycle import TERMINAL
from taskfs.errors import Problem, problem


@dataclass(frozen=True)
class Known:
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


def check_child(
    child: EnvelopeFacts, known: Mapping[str, Known], grant: Grant, max_depth: int
) -> list[Problem]:
    """Every reason `child` may not be delegated from its parent; empty when it may."""
    if child.parent is None or child.id is None:
        return []
    chain = parent_chain(child.id, child.parent, known)
    if chain[-1] in chain[:-1]:
        return [
            problem(
                "delegation_loop",
                field="parent",
                id=chain[-1],
                chain=chain,
                chain_text=" -> ".join(chain),
            )
        ]
    parent = known.get(child.parent)
    if parent is None:
        return [problem("parent_not_found", field="parent", id=child.id, parent=child.parent)]
    problems: list[Problem] = []
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
