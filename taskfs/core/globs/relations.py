"""How two entries relate: overlap and containment, decided on the patterns alone.

`overlap` runs a dynamic programme over pairs of item positions (a DAG, memoised), in which two
segment patterns meet by a cheapest-path search over the product of their character automata
and a small automaton for name validity. Two literal paths are compared as strings, a literal
against a glob by matching, and segment patterns whose literal heads or tails disagree are told
apart without a search. `covers` searches the product of the inner glob's automaton with the
subset construction of the outer one, over whole paths, for a valid path the inner glob matches
and the outer does not.

Bounds. `overlap` runs its item programme over at most 33 * 33 * 2 pairs of positions; each
pair of segment patterns meets in a Dijkstra search over (position a, position b, validity)
whose states number at most (na + 1) * (nb + 1) * 48, where na + nb <= 128 by the limits (a
literal segment is only matched, never searched), and from each state it tries one character
per class that the state cannot tell apart (at most 64), so the whole of `overlap` is
O(na * nb) states: a few thousand at the limits. `covers` is inclusion, which is coNP-hard for
globs with `*` and `?`; it runs the subset construction lazily with antichain pruning (a set of
outer states holding one already met for the same inner state is dropped), which keeps the
common shapes (`*a???*` against `*a???`) linear, and stops after `COVER_BUDGET` steps (nodes,
moves followed, antichain comparisons), each O(states) work: past the budget it answers "not
shown to be inside" (`covers` is False), the cautious answer for a delegation. `WORK` counts
the states both searches take, for tests to bound.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from taskfs.core.globs.automata import (
    _ANY_SEG,
    _GLOBSTAR,
    _bits,
    _compile,
    _Item,
    _match_segments,
    _nfa,
    _nfa_moves,
    _Seg,
    _seg_moves,
    _segment,
    _step_set,
)
from taskfs.core.globs.classes import (
    _NAME,
    _V,
    _alphabet,
    _char_cost,
    _representatives,
    _union,
    _v_start,
    _v_step,
    _valid_name,
)
from taskfs.core.globs.syntax import INTERFACE_PREFIX, Entry

COVER_BUDGET = 1_000_000  # steps `covers` takes before it answers "not shown to be inside"


@dataclass
class Work:
    """What the searches did in this process, for tests and benchmarks to bound."""

    meet_states: int = 0  # states of the segment-meeting search taken from its queue
    cover_states: int = 0  # steps of the containment search (see `_search_uncovered`)


WORK = Work()


_Meet = tuple[int, int, _V]
_Moves = tuple[tuple[tuple[int, int], ...], ...]  # per position: (alphabet bitmask, target)


def _seg_meet(a: _Seg, b: _Seg, first: bool) -> str | None:
    """A valid name both segment patterns match, or None."""
    if a.literal is not None:
        return a.literal if b.match(a.literal) and _valid_name(a.literal, first) else None
    if b.literal is not None:
        return _seg_meet(b, a, first)
    if not (a.head.startswith(b.head) or b.head.startswith(a.head)):
        return None
    if not (a.tail.endswith(b.tail) or b.tail.endswith(a.tail)):
        return None
    lo, hi = sorted((a.text, b.text))
    return _meet_patterns(lo, hi, first)


@lru_cache(maxsize=65536)
def _meet_patterns(text_a: str, text_b: str, first: bool) -> str | None:
    """Cheapest name in both languages: Dijkstra over (position a, position b, validity).

    At most (len a + 1) * (len b + 1) * 48 states (48 bounds the validity automaton's states:
    4 name states times 12 prefix states, and only the first 10 characters of the first segment
    use the prefix). From each state only one character per class of characters that the state's
    moves and the validity step cannot tell apart is tried, the plainest of the class (the
    alphabet is sorted plainest first): at most 64 classes, so the work is O(len a * len b).
    """
    a, b = _segment(text_a), _segment(text_b)
    specials = "." + (INTERFACE_PREFIX if first else "")
    alphabet = _alphabet([cs for _, cs in a.toks + b.toks], specials, slash=False)
    moves_a, moves_b = _seg_moves(a, alphabet), _seg_moves(b, alphabet)
    dot = 1 << alphabet.index(".")
    prefix_bits = [1 << alphabet.index(ch) if first else 0 for ch in INTERFACE_PREFIX]
    start: _Meet = (0, 0, _v_start(first))
    best = {start: 0}
    parent: dict[_Meet, tuple[_Meet, str]] = {}
    order = itertools.count()
    heap = [(0, next(order), start)]
    done: set[_Meet] = set()
    while heap:
        cost, _, state = heapq.heappop(heap)
        if state in done:
            continue
        done.add(state)
        WORK.meet_states += 1
        i, j, v = state
        if len(a.toks) in a.closure[i] and len(b.toks) in b.closure[j] and v[0] == _NAME:
            return _trace(parent, state)
        ma, mb = moves_a[i], moves_b[j]
        splits = [m for m, _t in ma] + [m for m, _t in mb] + [dot]
        if v[1] < len(INTERFACE_PREFIX):
            splits.append(prefix_bits[v[1]])
        for bit in _representatives(_union(ma) & _union(mb), splits):
            ch = alphabet[bit]
            v2 = _v_step(v, ch)
            if v2 is None:
                continue
            step = cost + _char_cost(v, ch)
            for i2, j2 in _targets(ma, mb, bit):
                nxt = (i2, j2, v2)
                if step < best.get(nxt, step + 1):
                    best[nxt] = step
                    parent[nxt] = (state, ch)
                    heapq.heappush(heap, (step, next(order), nxt))
    return None


def _targets(
    ma: tuple[tuple[int, int], ...], mb: tuple[tuple[int, int], ...], bit: int
) -> Iterator[tuple[int, int]]:
    for mask_a, i2 in ma:
        if mask_a >> bit & 1:
            for mask_b, j2 in mb:
                if mask_b >> bit & 1:
                    yield i2, j2


_S = TypeVar("_S")


def _trace(parent: dict[_S, tuple[_S, str]], state: _S) -> str:
    chars: list[str] = []
    while state in parent:
        state, ch = parent[state]
        chars.append(ch)
    return "".join(reversed(chars))


def _overlap_items(a: tuple[_Item, ...], b: tuple[_Item, ...]) -> str | None:
    """A path both item sequences match: memoised search over (i, j, no segment yet)."""
    memo: dict[tuple[int, int, bool], tuple[str, ...] | None] = {}

    def moves(i: int, j: int, first: bool) -> Iterator[tuple[str | None, int, int]]:
        x = a[i] if i < len(a) else None
        y = b[j] if j < len(b) else None
        if isinstance(x, _Seg) and isinstance(y, _Seg):
            yield _seg_meet(x, y, first), i + 1, j + 1
        if x is _GLOBSTAR:
            yield "", i + 1, j
        if y is _GLOBSTAR:
            yield "", i, j + 1
        if x is _GLOBSTAR and isinstance(y, _Seg):
            yield _seg_meet(_ANY_SEG, y, first), i, j + 1
        if y is _GLOBSTAR and isinstance(x, _Seg):
            yield _seg_meet(x, _ANY_SEG, first), i + 1, j

    def solve(i: int, j: int, first: bool) -> tuple[str, ...] | None:
        if i == len(a) and j == len(b):
            return None if first else ()
        key = (i, j, first)
        if key not in memo:
            memo[key] = None
            for name, i2, j2 in moves(i, j, first):
                if name is None:
                    continue
                rest = solve(i2, j2, first and not name)
                if rest is not None:
                    memo[key] = (name, *rest) if name else rest
                    break
        return memo[key]

    found = solve(0, 0, True)
    return None if found is None else "/".join(found)


class CoverUndecided(Exception):
    """`covers` met a pair whose containment it could not decide within `COVER_BUDGET`."""


_Cover = tuple[int, _V, int]  # (inner state, validity, the set of outer states as a bitmask)


def _uncovered(outer: Entry, inner: Entry, budget: int | None = None) -> str | None:
    spent = [0]
    try:
        return _search_uncovered(outer, inner, COVER_BUDGET if budget is None else budget, spent)
    finally:
        WORK.cover_states += spent[0]


def _search_uncovered(outer: Entry, inner: Entry, limit: int, spent: list[int]) -> str | None:
    """A valid path `inner` matches and `outer` does not, or None when `outer` covers `inner`.

    Breadth-first over (one state of inner's automaton, validity, the set of outer's states):
    the subset construction, run lazily and pruned by antichains (a node whose set of outer
    states holds the set of one already met, for the same inner state and validity, cannot
    lead to a counterexample that one does not). Inclusion is hard in general (coNP for
    globs), so the search is bounded: it counts its steps in `spent` (a node taken, each move
    of an outer state followed, each set compared in an antichain) and past `limit` raises
    `CoverUndecided`. Everything else a step does is O(states of both automata).
    """
    o, i = _nfa(outer.text), _nfa(inner.text)
    alphabet = _alphabet(o.charsets + i.charsets, "." + INTERFACE_PREFIX, slash=True)
    o_moves, i_moves = _nfa_moves(o, alphabet), _nfa_moves(i, alphabet)
    fixed = [1 << alphabet.index("/"), 1 << alphabet.index(".")]
    prefix_bits = [1 << alphabet.index(ch) for ch in INTERFACE_PREFIX]
    parent: dict[_Cover, tuple[_Cover, str]] = {}
    kept: dict[tuple[int, _V], list[int]] = {}  # the antichains: minimal outer sets met

    def fresh(node: _Cover) -> bool:
        key, outer_states = (node[0], node[1]), node[2]
        sets = kept.setdefault(key, [])
        spent[0] += 1 + len(sets)
        if spent[0] > limit:
            raise CoverUndecided
        if any(not (old & ~outer_states) for old in sets):
            return False
        sets[:] = [old for old in sets if outer_states & ~old]
        sets.append(outer_states)
        return True

    queue: deque[_Cover] = deque()
    start_outer = sum(1 << q for q in o.closure[0])
    for s in sorted(i.closure[0]):
        node = (s, _v_start(True), start_outer)
        if fresh(node):
            queue.append(node)
    while queue:
        node = queue.popleft()
        if node[2] not in kept[(node[0], node[1])]:
            continue  # a smaller set of outer states was met since: that node does its work
        s, v, outer_states = node
        if s == i.accept and v[0] == _NAME and not outer_states >> o.accept & 1:
            return _trace(parent, node)
        outer_moves = [move for q in _bits(outer_states) for move in o_moves[q]]
        spent[0] += 1 + len(outer_moves)
        if spent[0] > limit:
            raise CoverUndecided
        splits = {mask for mask, _t in i_moves[s]}
        splits.update(mask for mask, _t in outer_moves)
        splits.update(fixed)
        if v[1] < len(INTERFACE_PREFIX):
            splits.add(prefix_bits[v[1]])
        for bit in _representatives(_union(i_moves[s]), sorted(splits)):
            ch = alphabet[bit]
            v2 = _v_step(v, ch)
            if v2 is None:
                continue
            outer2 = _step_set(outer_moves, bit)
            for t in _bits(_step_set(i_moves[s], bit)):
                nxt = (t, v2, outer2)
                if nxt not in parent and fresh(nxt):
                    parent[nxt] = (node, ch)
                    queue.append(nxt)
    return None


def overlap(a: Entry, b: Entry) -> str | None:
    """A path (or `interface:<name>`) that both entries match, or None when none can."""
    if a.kind != b.kind:
        return None
    if a.kind == "interface":
        return INTERFACE_PREFIX + a.text if a.text == b.text else None
    pa, pb = _compile(a.text), _compile(b.text)
    if pa.literal is not None:
        if pb.literal is not None:
            return pa.literal if pa.literal == pb.literal else None
        return pa.literal if _match_segments(pb.items, pa.literal.split("/")) else None
    if pb.literal is not None:
        return pb.literal if _match_segments(pa.items, pb.literal.split("/")) else None
    if a.text > b.text:  # the same witness whichever way round
        pa, pb = pb, pa
    return _overlap_items(pa.items, pb.items)


def covers(outer: Entry, inner: Entry) -> bool:
    """Whether every path that matches `inner` also matches `outer`."""
    if outer.kind != inner.kind:
        return False
    if outer.kind == "interface" or outer.text == inner.text:
        return outer.text == inner.text
    literal = _compile(inner.text).literal
    if literal is not None:
        return _match_segments(_compile(outer.text).items, literal.split("/"))
    try:
        return _uncovered(outer, inner) is None
    except CoverUndecided:
        return False  # not shown to be inside: the cautious answer for a delegation
