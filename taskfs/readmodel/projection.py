"""The projection of the ledger: a task as the rules and the listings see it.

`Summary` is what `load_task` says of a task, cut down to what the rules (dependencies,
ownership, delegation, readiness) and the listings read: the envelope's `Facts`, the state,
the holder, the head of its status chain, the codes of what is wrong with its files. The
read model's store keeps one per task (`taskfs.readmodel.db`, written by `taskfs.store.index`),
with its row in `ls` and `ready` rendered from it.

There is one converter from the full reader (`Summary.of`) and one serialisation to the plain
values the cache marshals (`encode` / `decode`): no other code reads a projection by position.
Both are tuples with names (`NamedTuple`) rather than dataclasses: the listings build
thousands per call, and a tuple's construction costs a fraction of a frozen dataclass's.
"""

from __future__ import annotations

from sys import intern
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from taskfs.core.envelope import Envelope
    from taskfs.core.intake import Intake
    from taskfs.store.task_reader import Task


class Facts(NamedTuple):
    """What the rules between tasks read of an envelope (`taskfs.core.facts.EnvelopeFacts`)."""

    id: str | None
    sender: str | None
    recipient: str | None
    context_id: str
    depends_on: tuple[str, ...]
    parent: str | None
    files_and_interfaces: tuple[str, ...]
    tools_allowed: tuple[str, ...] | None
    command: str  # acceptanceCheck.passFailCommand: what completion's evidence must have run
    follows: str | None = None  # the task it was reassigned or retried from (core.lineage)
    priority: int | None = None  # 0 (the most urgent) to 4; None: not said (`core.shown.rank`)
    labels: tuple[str, ...] = ()

    @classmethod
    def of(cls, envelope: Envelope) -> Facts:
        return cls(
            envelope.id,
            envelope.sender,
            envelope.recipient,
            envelope.context_id,
            tuple(envelope.depends_on),
            envelope.parent,
            tuple(envelope.files_and_interfaces),
            None if envelope.tools_allowed is None else tuple(envelope.tools_allowed),
            envelope.acceptance_check.pass_fail_command,
            envelope.follows,
            envelope.priority,
            tuple(envelope.labels),
        )


class Summary(NamedTuple):
    """A task as the rules and listings see it (the same attribute names as `Task`)."""

    id: str
    envelope: Facts
    state: str
    holder: str | None
    superseded: int  # transitions a fork left out of the chain
    problems: tuple[str, ...]  # codes of what is wrong with its files
    head: str | None  # the status file the next transition follows
    head_by: str | None  # who made the transition into the current state
    length: int  # status files in its history (0: an envelope no intake has taken yet)
    overlaps: tuple[str, ...] = ()  # tasks (any state) owning an entry that overlaps one of its
    # A request not yet a contract (`taskfs.core.intake`): state `intake` while open,
    # `canceled` once closed; it owns nothing and depends on nothing.
    intake: bool = False
    # A terminal task `taskfs archive` took out of the working tree: history keeps its files,
    # the archive's record keeps this projection (without its entries, which own nothing).
    archived: bool = False
    head_at: str | None = None  # when the transition into the current state was made (UTC)
    # The amendment of its envelope in force (`taskfs.core.amendments`: a claim names it),
    # and how many wait for its holder's acceptance.
    amended: str | None = None
    pending: int = 0
    # A follow-up found while working on another task (`taskfs discover`): that task. Said by
    # the request it was born from (an intake, or the task it became).
    discovered_from: str | None = None
    # What `ls --grep` searches (its objective, its request's words, its messages' texts),
    # case folded (`text_of`): carried by a projection on its way into the store (`texts`),
    # never stored in the row itself; None: not known, the stored text stands.
    text: str | None = None
    # Whether its completion stands (`taskfs.store.completions`): its holder's or sender's own
    # act, signed where that agent had a key when it was committed, on a passing run of its
    # command; only then does it count for what depends on it (`taskfs.core.lineage.done`).
    # Fixed once committed (the key rule is the key at the commit), so the row keeps it; False
    # for a task that is not completed, and wherever it was not asked (never in a task's favour).
    stands: bool = False

    @classmethod
    def of(cls, task: Task) -> Summary:
        """The one converter from the full reader: what `load_task` read, projected."""
        chain = task.chain
        version = task.version
        return cls(
            task.id,
            Facts.of(task.envelope),
            task.state,
            chain.holder,
            len(chain.superseded),
            tuple(p.code for p in task.problems),
            chain.head.name if chain.head else None,
            chain.head.record.by if chain.head else None,
            len(chain.links),
            head_at=chain.head.record.at if chain.head else None,
            amended=version.in_force.name if version and version.in_force else None,
            pending=len(version.pending) if version else 0,
        )

    @classmethod
    def of_intake(cls, intake: Intake) -> Summary:
        """An intake, projected: its requester and recipient, the context it named (if any),
        no files, no dependencies."""
        draft = intake.draft()
        context = draft.get("contextID")
        facts = Facts(
            intake.id,
            intake.requester,
            intake.recipient,
            context if isinstance(context, str) else "",
            (),
            None,
            (),
            None,
            "",
        )
        state = intake.state
        return cls(
            intake.id,
            facts,
            state,
            None,
            0,
            (),
            None,
            intake.requester,
            0,
            intake=True,
            discovered_from=intake.discovered_from,
        )

    @property
    def listed(self) -> bool:
        """Whether `ls` shows it (`ls --archived`, when archived): an envelope the watcher
        has not taken in yet is no task; an intake is listed."""
        return bool(self.length) or self.intake

    def row(self) -> dict[str, Any]:
        """Its row in `ls` and `ready` (contract section 4); an archived task's says so. The
        fields it may hold are `taskfs.core.shapes.ROW_FIELDS`."""
        from taskfs.core.shapes import task_row

        env = self.envelope
        row = task_row(
            self.id,
            self.state,
            sender=env.sender,
            recipient=env.recipient,
            context_id=env.context_id,
            holder=self.holder,
            superseded=self.superseded,
            priority=env.priority,
            labels=env.labels,
        )
        if self.archived:
            row["archived"] = True
        return row

    @property
    def rank(self) -> str:
        """Its place in `ready`: the most urgent first, then the oldest (`core.shown.rank`)."""
        from taskfs.core.shown import rank

        return rank(self.envelope.priority, self.head_at, self.id)


def text_of(*parts: str) -> str:
    """The searchable text of a task's parts (`ls --grep`): each case folded, one a line."""
    return "\n".join(part.casefold() for part in parts if part)


# -- the one serialisation: a projection <-> the plain values the cache marshals ---------------
# `marshal` stores plain tuples only (not their named subclasses). The encoded form is the
# fields in the classes' order, the facts nested: `decode(encode(s)) == s`.

Encoded = tuple[Any, ...]


def encode(summary: Summary, files: tuple[str, ...] = ()) -> Encoded:
    """`summary` as plain values, each string that repeats within it (or across the rows, as
    names of agents and states do) stored as one object: marshal writes a repeat as a
    reference, which a writer reading every row unmarshals in a third less time than a copy.
    The task's id is stored once; names of agents, contexts and states are interned; the head
    is the last of `files` (its status files' names) when it is that file."""
    f = summary.envelope
    task_id = summary.id
    head = summary.head
    if files and files[-1] == head:
        head = files[-1]
    facts = (
        task_id if f.id == task_id else f.id,
        _shared(f.sender),
        _shared(f.recipient),
        intern(f.context_id),
        *f[4:],
    )
    return (
        task_id,
        facts,
        intern(summary.state),
        _shared(summary.holder),
        summary.superseded,
        summary.problems,
        head,
        _shared(summary.head_by),
        *summary[8:],
    )


def _shared(name: str | None) -> str | None:
    return None if name is None else intern(name)


_SUMMARY_WIDTH = len(Summary._fields)
_FACTS_WIDTH = len(Facts._fields)


def decode(fields: Encoded) -> Summary:
    """The projection `encode` stored; TypeError or ValueError when `fields` is not one."""
    if type(fields) is not tuple or len(fields) != _SUMMARY_WIDTH:
        raise ValueError("not an encoded summary")
    facts = fields[1]
    if type(facts) is not tuple or len(facts) != _FACTS_WIDTH:
        raise ValueError("not encoded facts")
    # `_make` takes the fields as they are, without a call by name: a third of the cost of
    # decoding the thousands of rows a writer reads.
    return Summary._make((fields[0], Facts._make(facts), *fields[2:]))
