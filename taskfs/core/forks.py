"""Forks between clones: who lost to whom, and keeping published transitions from being overturned.

`chain.resolve` settles a fork by the content rule (the smallest nonce wins). Applied alone it
would let a transition that was never pushed overturn one that was already pushed and acted on.
So before a clone publishes, each of its unpublished transitions that forks a published one and
would win by that rule is made to lose it: its file gets a nonce that sorts after the published
winner (its content and its place in the chain stay), and the transitions that follow it point
at the new name. Only when no free name sorts after the winner (its nonce is at the very top
of the space) is the transition dropped instead, with what follows it. Both happen to
unpublished history only. Pure: the random draw can be passed in.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from taskfs.core.chain import Chain, Link, fork_key
from taskfs.core.layout import NONCE_LENGTH, STATUS_NAME_RE
from taskfs.core.lifecycle import TERMINAL
from taskfs.core.records import StatusRecord

# Every character a status file's nonce may hold (records.STATUS_NAME_RE), in sorting order.
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
_SPACE = len(_DIGITS) ** NONCE_LENGTH


@dataclass(frozen=True)
class Loss:
    """A superseded transition and the winning transition it lost to."""

    link: Link
    winner: Link | None


@dataclass
class Settlement:
    """What publishing must change in a task's unpublished status files."""

    renamed: dict[str, str] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    new_prev: dict[str, StatusRecord] = field(default_factory=dict)
    losses: list[Loss] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.renamed or self.dropped or self.new_prev)


def losses(chain: Chain) -> list[Loss]:
    """Every superseded transition of a chain with the winner at the fork where its branch left."""
    by_name = {link.name: link for link in chain.superseded}
    out = []
    for link in chain.superseded:
        prev = link.record.prev
        while prev in by_name:
            prev = by_name[prev].record.prev
        out.append(Loss(link, chain.winner_after(prev)))
    return out


def news(chain: Chain, known: Collection[str]) -> list[Loss]:
    """The losses of `chain` worth telling: not among `known` (the names either side of a merge
    already held superseded: a fork settled elsewhere arrives as old news), and not of a state
    the task has reached anyway (a cancel that lost to a claim, then made again ended the task):
    nothing its loser must act on."""
    head = chain.head
    return [
        loss
        for loss in losses(chain)
        if loss.link.name not in known and not (head is not None and _reached(head.record, loss))
    ]


def _reached(now: StatusRecord, loss: Loss) -> bool:
    """Whether the task stands where the lost transition would have taken it: the same
    terminal state, or the same state by the same agent."""
    lost = loss.link.record
    return now.state == lost.state and (lost.state in TERMINAL or now.by == lost.by)


def late_siblings(
    links: Iterable[Link],
    commit_of: Mapping[str, str],
    precedes: Callable[[str, str], bool],
) -> list[Loss]:
    """Siblings that were not concurrent: each link whose commit already held a sibling (the
    same `prev`), with that sibling as `winner`. Such a link was written by someone who could
    see the task had moved on; it is an illegal transition, never a fork to settle by the
    nonce rule. `commit_of` names the commit that added each file (links it does not name are
    left out); `precedes(a, b)` says whether commit `a` is in the history of commit `b`. Two
    siblings added by one commit were not concurrent either: the one the nonce rule would pick
    stands, the others are late."""
    groups: dict[str | None, list[Link]] = {}
    for link in links:
        if link.name in commit_of:
            groups.setdefault(link.record.prev, []).append(link)
    out: list[Loss] = []
    for siblings in groups.values():
        if len(siblings) < 2:
            continue
        siblings.sort(key=fork_key)
        for late in siblings:
            for earlier in siblings:
                if earlier is late:
                    continue
                a, b = commit_of[earlier.name], commit_of[late.name]
                same = a == b and fork_key(earlier) < fork_key(late)
                if same or (a != b and precedes(a, b)):
                    out.append(Loss(late, earlier))
                    break
    return out


def settle(
    published: Iterable[Link],
    unpublished: Sequence[Link],
    *,
    drop: Collection[str] = (),
    draw: Callable[[int], int] = secrets.randbelow,
) -> Settlement:
    """Make every unpublished link that forks a published one lose to it.

    A link in `drop` that forks a published one is dropped rather than renamed (a claim made to
    be pushed at once is withdrawn, not kept as a superseded record).
    """
    first_published: dict[str | None, Link] = {}
    for link in published:
        best = first_published.get(link.record.prev)
        if best is None or fork_key(link) < fork_key(best):
            first_published[link.record.prev] = link
    children: dict[str | None, list[Link]] = {}
    for link in unpublished:
        children.setdefault(link.record.prev, []).append(link)
    taken = {link.name for link in unpublished} | {link.name for link in first_published.values()}
    result = Settlement()
    for link in sorted(unpublished, key=lambda link: link.name):
        winner = first_published.get(link.record.prev)
        if winner is None or link.name in result.dropped:
            continue
        if link.name in drop:
            _drop(link, children, result, winner)
            continue
        if fork_key(winner) < fork_key(link):
            result.losses.append(Loss(link, winner))
            continue
        new_name = _name_after(link.name, fork_key(winner)[0], taken, draw)
        if new_name is None:
            _drop(link, children, result, winner)
            continue
        taken.add(new_name)
        result.renamed[link.name] = new_name
        result.losses.append(Loss(Link(new_name, link.record), winner))
        for child in children.get(link.name, ()):
            result.new_prev[child.name] = StatusRecord.model_validate(
                {**child.record.to_document(), "prev": new_name}
            )
    return result


def _drop(
    link: Link, children: dict[str | None, list[Link]], result: Settlement, winner: Link
) -> None:
    stack = [link]
    while stack:
        current = stack.pop()
        result.dropped.append(current.name)
        result.new_prev.pop(current.name, None)
        stack.extend(children.get(current.name, ()))
    result.losses.append(Loss(link, winner))


def _name_after(
    name: str, nonce: str, taken: Collection[str], draw: Callable[[int], int]
) -> str | None:
    """The name `name` with a random nonce that sorts after `nonce` and is not taken; None
    when none is to be found."""
    match = STATUS_NAME_RE.fullmatch(name)
    assert match is not None
    floor = _value(nonce) + 1
    if floor >= _SPACE:
        return None
    for _ in range(64):  # only near the top of the space can the draws keep meeting taken names
        nonce_text = _text(floor + draw(_SPACE - floor))
        candidate = f"{match.group('seq')}-{match.group('state')}-{nonce_text}.yaml"
        if candidate not in taken:
            return candidate
    return None


def _value(nonce: str) -> int:
    value = 0
    for char in nonce:
        value = value * len(_DIGITS) + _DIGITS.index(char)
    return value


def _text(value: int) -> str:
    chars = []
    for _ in range(NONCE_LENGTH):
        value, digit = divmod(value, len(_DIGITS))
        chars.append(_DIGITS[digit])
    return "".join(reversed(chars))
