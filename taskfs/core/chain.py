"""A task's history: its status files linked by `prev` into a chain, forks settled one way.

Two clones can each append a transition after the same status file (two claims of one task).
Every clone must then pick the same winner from the files alone: self-reported times differ
and can be forged, and the order in which clones merged differs too. The rule: among status
files with the same `prev`, the one whose name's nonce sorts first wins (the full name breaks
a tie); the others and everything that follows them are superseded. The rule is stable: once
both files are seen, later history can never change who won.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from taskfs.core.layout import STATUS_NAME_RE
from taskfs.core.lifecycle import TRANSITIONS, State, next_states
from taskfs.core.records import StatusRecord
from taskfs.errors import Problem, problem


class Link(NamedTuple):
    name: str
    record: StatusRecord


class Chain(NamedTuple):
    links: tuple[Link, ...]
    superseded: tuple[Link, ...] = ()
    problems: tuple[Problem, ...] = ()

    @property
    def head(self) -> Link | None:
        return self.links[-1] if self.links else None

    @property
    def state(self) -> State | None:
        return self.links[-1].record.state if self.links else None

    @property
    def holder(self) -> str | None:
        """The agent that claimed the task (took it from submitted to working)."""
        for before, after in zip(self.links, self.links[1:], strict=False):
            if before.record.state == "submitted" and after.record.state == "working":
                return after.record.by
        return None

    def winner_after(self, name: str | None) -> Link | None:
        """The winning transition that follows `name` (None: the first), if any."""
        for before, after in zip((None, *self.links), self.links, strict=False):
            if (before.name if before else None) == name:
                return after
        return None


def fork_key(link: Link) -> tuple[str, str]:
    match = STATUS_NAME_RE.fullmatch(link.name)
    return (match.group("nonce") if match else "~", link.name)


def resolve(task_id: str, links: Iterable[Link]) -> Chain:
    """The winning chain of a task's status files, what it superseded, and what is wrong."""
    children: dict[str | None, list[Link]] = {}
    for link in links:
        children.setdefault(link.record.prev, []).append(link)
    for siblings in children.values():
        siblings.sort(key=fork_key)
    chain: list[Link] = []
    superseded: list[Link] = []
    problems: list[Problem] = []
    reached: set[str] = set()
    parent: str | None = None
    while parent in children:
        first, *losers = children[parent]
        chain.append(first)
        reached.add(first.name)
        for loser in losers:
            superseded += _descendants(loser, children, reached)
        parent = first.name
    for link in _unreached(children, reached):
        problems.append(
            problem(
                "chain_broken",
                id=task_id,
                path=link.name,
                reason_text=f"its prev {link.record.prev!r} is not a status file of the task",
            )
        )
    problems += _edge_problems(task_id, chain)
    return Chain(tuple(chain), tuple(superseded), tuple(problems))


def _descendants(
    start: Link, children: dict[str | None, list[Link]], reached: set[str]
) -> list[Link]:
    out: list[Link] = []
    stack = [start]
    while stack:
        link = stack.pop()
        if link.name in reached:
            continue
        reached.add(link.name)
        out.append(link)
        stack.extend(children.get(link.name, ()))
    return sorted(out, key=lambda link: link.name)


def _unreached(children: dict[str | None, list[Link]], reached: set[str]) -> list[Link]:
    return sorted(
        (link for group in children.values() for link in group if link.name not in reached),
        key=lambda link: link.name,
    )


def _edge_problems(task_id: str, chain: list[Link]) -> list[Problem]:
    problems: list[Problem] = []
    previous: State | None = None
    for seq, link in enumerate(chain, start=1):
        state = link.record.state
        allowed = state == "submitted" if previous is None else state in TRANSITIONS[previous]
        if not allowed:
            problems.append(
                problem(
                    "transition_not_allowed",
                    id=task_id,
                    path=link.name,
                    from_state=previous or "(nothing)",
                    to_state=state,
                    next_states=next_states(previous) if previous else "submitted",
                )
            )
        match = STATUS_NAME_RE.fullmatch(link.name)
        if match and (int(match.group("seq")) != seq or match.group("state") != state):
            problems.append(
                problem(
                    "chain_broken",
                    id=task_id,
                    path=link.name,
                    reason_text=f"its name does not match position {seq} and state {state}",
                )
            )
        previous = state
    return problems
