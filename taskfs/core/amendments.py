"""Amending a contract: a new version of a task's envelope, its old one kept (issue 38).

`envelope.yaml` is written once and never edited. Its sender may amend the contract: each
amendment is a file of its own, `<task>/amendments/<stamp>-<nonce>.yaml`, append-only like every
ledger file, holding the whole new envelope (`envelope`) and why (`reason`). Its authority rule,
which the readers and `audit` share:

- an **amendment** is written by the task's sender (the original envelope's `from`), while the
  task is not in a terminal state; it keeps the task's `id`, `from`, `parent` and lineage links
  (`x-reassignedFrom`, `x-retriedFrom`), and, once the task was claimed, its `to`;
- before anyone claimed the task, the latest amendment (by name) is the contract in force;
- once the task was claimed, the holder claimed the version in force then: its claim names
  that amendment (`amendment` in the status file). An amendment the claim did not see (written
  after it, or in another clone at the same time) is **pending** until the holder accepts it:
  an **acceptance** (`accepts`: the amendment's file), written by the holder while it holds the
  task. The contract in force is the latest accepted amendment, else the claimed version;
- each is signed by its writer where the writer has a key (`taskfs.core.act_signing`,
  `taskfs-amendment-v1`), as every act of such an agent is;
- anything else (an amendment by someone else, an acceptance by someone else or of no
  amendment, a file unsigned or badly signed where its `by` has a key) counts for nothing, and
  `audit` names it (`amendment_unauthorized`). The authority table has its row
  (`taskfs.core.ledger_kinds.AMENDMENT`).

Pure: values in, values out; reading the files is `taskfs.store.task_reader`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import Field, Strict

from taskfs.core.lineage import LINKS
from taskfs.core.records import AgentText, TaskIdText, UtcTime, _Record

Kind = Literal["amendment", "accepted"]
# What an amendment may never change, and what it may not change once the task is claimed.
FIXED = ("id", "from", "parent", *LINKS)
FIXED_ONCE_CLAIMED = ("to",)


class AmendmentRecord(_Record):
    """One file of a task's `amendments/` folder (see the module's account)."""

    task: TaskIdText
    kind: Kind
    by: AgentText
    at: UtcTime
    envelope: dict[str, Any] | None = Field(
        default=None, description="amendment: the whole new envelope, as its YAML keys."
    )
    reason: Annotated[str, Strict()] | None = Field(default=None, description="amendment: why.")
    accepts: Annotated[str, Strict()] | None = Field(
        default=None, description="accepted: the amendment (its file name) the holder accepts."
    )
    sig: Annotated[str, Strict()] | None = Field(
        default=None,
        description="The Ed25519 signature of `by` over the other fields "
        "(taskfs.core.act_signing, taskfs-amendment-v1), where `by` has a key.",
    )


class Entry(NamedTuple):
    """A record with the name of its file (`<stamp>-<nonce>.yaml`)."""

    name: str
    record: AmendmentRecord


class Version(NamedTuple):
    """Where a task's contract stands: the amendment in force (None: the original envelope),
    and the amendments waiting for the holder's acceptance, oldest first."""

    in_force: Entry | None
    pending: tuple[Entry, ...] = ()
    accepted: frozenset[str] = frozenset()
    void: frozenset[str] = frozenset()  # the files that count for nothing


def standing(
    entries: Sequence[Entry],
    *,
    sender: str | None,
    claimed: bool,
    claimed_version: str | None,
    holder: str | None,
    unsigned: Collection[str] = (),
) -> Version:
    """The version in force of a task whose amendment files are `entries` (in name order):
    see the module's account. `claimed`: whether its chain holds a claim; `claimed_version`:
    the amendment that claim names (None: the original); `holder`: who claimed it;
    `unsigned`: the files not signed as their writer's acts are (they count for nothing)."""
    void = {e.name for e in entries if e.name in unsigned}
    void |= {e.name for e in entries if e.record.kind == "amendment" and not by_sender(e, sender)}
    amendments = [e for e in entries if e.record.kind == "amendment" and e.name not in void]
    if not claimed:  # nothing to accept yet: an acceptance counts for nothing
        void |= {e.name for e in entries if e.record.kind == "accepted"}
        return Version(amendments[-1] if amendments else None, void=frozenset(void))
    names = {e.name: e for e in amendments}
    in_force = names.get(claimed_version or "")
    accepted: set[str] = set()
    for entry in entries:
        record = entry.record
        taken = names.get(record.accepts or "")
        if record.kind != "accepted" or entry.name in void:
            continue
        if record.by == holder and taken is not None:
            accepted.add(taken.name)
            in_force = taken
        else:
            void.add(entry.name)
    seen = in_force.name if in_force is not None else None
    pending = tuple(
        e
        for e in amendments
        if e.name not in accepted and e.name != claimed_version and (seen is None or e.name > seen)
    )
    return Version(in_force, pending, frozenset(accepted), frozenset(void))


def by_sender(entry: Entry, sender: str | None) -> bool:
    return sender is not None and entry.record.by == sender


def changed_keys(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """The envelope keys an amendment changes (added, removed or given another value), in the
    order of the new envelope, then the removed ones."""
    keys = [k for k in after if before.get(k) != after[k]]
    return keys + [k for k in before if k not in after]


def fixed_changes(
    before: Mapping[str, Any], after: Mapping[str, Any], *, claimed: bool
) -> list[str]:
    """The keys an amendment may not change that it does change."""
    fixed: Iterable[str] = (*FIXED, *FIXED_ONCE_CLAIMED) if claimed else FIXED
    return [k for k in fixed if before.get(k) != after.get(k)]
