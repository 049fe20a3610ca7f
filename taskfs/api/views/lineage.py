"""Lineage as people see it: which task took another's work over, and how.

`taskfs reassign` (and `taskfs retry`) submit a new task with the old one's contract and name
the old one in the new envelope, under a key `x-<how>From` (`x-reassignedFrom`,
`x-retriedFrom`). The views read every key of that shape, so a board, a graph or a review
shows a new way of handing work on as soon as its command records the link the same way.

An `x-` key is anyone's to write: a link is shown only when the task it names is in the
ledger, was sent by the same agent and has the same acceptance command, since only that
sender could have handed its own task on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from taskfs.core.layout import is_task_id

if TYPE_CHECKING:
    from taskfs.core.envelope import Envelope

_KEY = re.compile(r"x-([a-z][A-Za-z]*)From")


@dataclass(frozen=True)
class Link:
    kind: str  # how the work was handed on: the word of its key (reassigned, retried, ...)
    source: str  # the task whose work was taken over
    target: str  # the task that took it over

    @property
    def key(self) -> str:
        return f"x-{self.kind}From"


def named(envelope: Envelope) -> list[tuple[str, str]]:
    """(kind, task id) of every earlier task an envelope says it takes over."""
    return _named(envelope.extensions)


def _named(extensions: Mapping[str, Any]) -> list[tuple[str, str]]:
    out = []
    for key, value in extensions.items():
        match = _KEY.fullmatch(key)
        if match and isinstance(value, str) and is_task_id(value):
            out.append((match.group(1), value))
    return out


class Lineage:
    """The links among a set of tasks (envelopes by id), both ways."""

    def __init__(self, envelopes: Mapping[str, Envelope]) -> None:
        self.before: dict[str, list[Link]] = {}
        self.after: dict[str, list[Link]] = {}
        for task_id, envelope in envelopes.items():
            for kind, source in named(envelope):
                earlier = envelopes.get(source)
                if earlier is None or source == task_id or not _genuine(envelope, earlier):
                    continue
                link = Link(kind, source, task_id)
                self.before.setdefault(task_id, []).append(link)
                self.after.setdefault(source, []).append(link)

    def replaces(self, task_id: str) -> tuple[Link, ...]:
        return tuple(self.before.get(task_id, ()))

    def replaced_by(self, task_id: str) -> tuple[Link, ...]:
        return tuple(sorted(self.after.get(task_id, ()), key=lambda link: link.target))

    def links(self) -> list[Link]:
        return sorted(
            (link for found in self.before.values() for link in found),
            key=lambda link: (link.source, link.target),
        )

    def line(self, task_id: str) -> list[str]:
        """The tasks that carried `task_id`'s work on, each after the one it replaced."""
        out: list[str] = []
        todo = [link.target for link in self.replaced_by(task_id)]
        while todo:
            current = todo.pop(0)
            if current in out or current == task_id:
                continue
            out.append(current)
            todo += [link.target for link in self.replaced_by(current)]
        return out


def _genuine(successor: Envelope, earlier: Envelope) -> bool:
    """Only the earlier task's sender hands its own contract on (the rule dependencies follow,
    `taskfs.core.lineage.same_contract`, asks the same of a link)."""
    return (
        earlier.sender is not None
        and successor.sender == earlier.sender
        and successor.acceptance_check.pass_fail_command
        == earlier.acceptance_check.pass_fail_command
    )


def of(envelopes: Iterable[tuple[str, Envelope]]) -> Lineage:
    return Lineage(dict(envelopes))
