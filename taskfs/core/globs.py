"""Ownership entries: parse, match, and decide overlap and containment on the patterns alone.

Pure: no file system, clock or processes. The functions take entries made by `parse_entry`.

An entry of `filesAndInterfaces` is either `interface:<name>` (compared exactly) or a path glob
relative to the repository root (contract section 5):

* `*` matches any run of characters and `?` one character, never `/`; `*` also matches a
  leading `.` (there are no hidden files here).
* `[...]` is a class and `[!...]` its negation, as in fnmatch: ranges `a-z`, a `]` first in the
  class is literal, `-` first or last is literal, `^` is an ordinary character. A class never
  matches `/`. There is no escape character: write `[*]` for a literal `*`.
* A `**` segment matches zero or more whole segments (`a/**/b` matches `a/b`), except that a
  trailing `**` matches one or more: `a/**` matches everything below `a` but not `a` itself
  (as in gitignore). `src/` is short for `src/**`.
* Matching is case-sensitive, and a path glob never matches an `interface:` entry.

The concrete paths a glob can match are the valid ones: segments that are non-empty and not `.`
or `..`, and no path starting with `interface:` (that string names an interface). Witnesses
and containment are decided within that set, and `parse_entry` refuses a glob that can match no
valid path at all (`[.]`, or `./interface:x`).

Algorithms. A glob is a sequence of items, each a segment pattern or `**` (zero or more
segments; a trailing `**` is stored as `**` followed by `*`). `overlap` runs a dynamic
programme over pairs of item positions (a DAG, memoised), in which two segment patterns meet
by a cheapest-path search over the product of their character automata and a small automaton
for name validity; the alphabet is cut into the classes of characters that no pattern tells
apart, each stood for by its plainest member, and leading dots cost extra, so witnesses read
like `src/auth/a.py`. Two literal paths are compared as strings, a literal against a glob by
matching, and segment patterns whose literal heads or tails disagree are told apart without a
search. `covers` searches the product of the inner glob's automaton with the
subset construction of the outer one, over whole paths, for a valid path the inner glob
matches and the outer does not. `OwnershipIndex` keeps entries in a trie on their leading
literal segments and walks the trie with the query glob's automaton, so a query only meets the
entries that could share its leading directories; entries given as text are placed without
being parsed, and parsed when a query first meets them.

Limits, and the bounds they give. An entry is refused (`EntryError`, which validation reports
as `files_and_interfaces_invalid`) when it holds a control character (NUL, newline, ...), or
when it is past one of these limits, checked before any search (`MAX_*` below):

* at most 512 characters as written (checked first, before anything else is done with it);
* at most 32 segments;
* at most 16 wildcards, each `*`, `?`, `[...]` and `**` counting one;
* at most 64 characters in the segments that hold a wildcard, together.

Matching a name against a segment pattern is greedy with a return to the last `*`: at most
len(pattern) * len(name) steps (never a backtracking regex). Matching a path walks a set of
at most 33 item positions per segment. `overlap` runs its item programme over at most
33 * 33 * 2 pairs of positions; each pair of segment patterns meets in a Dijkstra search over
(position a, position b, validity) whose states number at most (na + 1) * (nb + 1) * 48, where
na + nb <= 128 by the last limit (a literal segment is only matched, never searched), and from
each state it tries one character per class that the state cannot tell apart (at most 64), so
the whole of `overlap` is O(na * nb) states: a few thousand at the limits. `covers` is inclusion,
which is coNP-hard for globs with `*` and `?`; it runs the subset construction lazily with
antichain pruning (a set of outer states holding one already met for the same inner state is
dropped), which keeps the common shapes (`*a???*` against `*a???`) linear, and stops after
`COVER_BUDGET` steps (nodes, moves followed, antichain comparisons), each O(states) work:
past the budget it answers "not shown to be inside"
(`covers` is False), the cautious answer for a delegation. `WORK` counts the states both
searches take, for tests to bound.
"""

from __future__ import annotations

import heapq
import itertools
import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Generic, Literal, TypeAlias, TypeVar

__all__ = [
    "COVER_BUDGET",
    "MAX_ENTRY_LENGTH",
    "MAX_PATTERN_LENGTH",
    "MAX_SEGMENTS",
    "MAX_WILDCARDS",
    "WORK",
    "CoverUndecided",
    "Entry",
    "EntryError",
    "OwnershipIndex",
    "covers",
    "matches",
    "overlap",
    "parse_entry",
    "reaches_below",
]

K = TypeVar("K")

INTERFACE_PREFIX = "interface:"


class EntryError(ValueError):
    """An ownership entry that cannot be used; `reason` says what to write instead."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Entry:
    """One parsed `filesAndInterfaces` entry."""

    raw: str
    kind: Literal["path", "interface"]
    text: str


# Limits on a path glob (see the module docstring for what they bound). Documented in the
# README beside the glob rules; an entry past one is refused when it is parsed.
MAX_ENTRY_LENGTH = 512  # characters of the entry as written
MAX_SEGMENTS = 32  # segments, after normalisation
MAX_WILDCARDS = 16  # each `*`, `?`, `[...]` and `**` counts one
MAX_PATTERN_LENGTH = 64  # characters of the segments that hold a wildcard, together
COVER_BUDGET = 1_000_000  # steps `covers` takes before it answers "not shown to be inside"


@dataclass
class Work:
    """What the searches did in this process, for tests and benchmarks to bound."""

    meet_states: int = 0  # states of the segment-meeting search taken from its queue
    cover_states: int = 0  # steps of the containment search (see `_search_uncovered`)


WORK = Work()


# ---------------------------------------------------------------------------------------------
# Characters


_SLASH = ord("/")
_WILDCARD = re.compile(r"[*?\[]")  # a segment without these is a literal name
_MAX_CODE_POINT = 0x110000


@dataclass(frozen=True)
class _CharSet:
    """A set of characters; '/' is kept out by construction (see `_charset`)."""

    ranges: tuple[tuple[int, int], ...]  # sorted, disjoint, inclusive code points
    negated: bool

    def __contains__(self, ch: str) -> bool:
        code = ord(ch)
        for lo, hi in self.ranges:
            if lo <= code <= hi:
                return not self.negated
        return self.negated

    def single(self) -> str | None:
        """The one character of a one-character class."""
        return self._single

    @cached_property
    def _single(self) -> str | None:
        if self.negated or len(self.ranges) != 1 or self.ranges[0][0] != self.ranges[0][1]:
            return None
        return chr(self.ranges[0][0])


def _charset(pairs: Iterable[tuple[int, int]], negated: bool) -> _CharSet:
    """Merge `pairs` and keep '/' out: removed from a class, added to a negated one."""
    cut: list[tuple[int, int]] = []
    for lo, hi in pairs:
        if lo <= _SLASH <= hi:
            cut.extend(p for p in ((lo, _SLASH - 1), (_SLASH + 1, hi)) if p[0] <= p[1])
        else:
            cut.append((lo, hi))
    if negated:
        cut.append((_SLASH, _SLASH))
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(cut):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return _CharSet(tuple(merged), negated)


_ANY = _charset((), negated=True)

# Witness characters, plainest first; anything else costs a little more.
_NICE = "abcdefghijklmnopqrstuvwxyz0123456789_-ABCDEFGHIJKLMNOPQRSTUVWXYZ."
_AVOID = frozenset("*?[]!/\\")


def _char_rank(ch: str) -> tuple[int, int]:
    index = _NICE.find(ch)
    return (index if index >= 0 else len(_NICE), ord(ch))


_DECENT = "+~=,@%&"


def _fallback(blocks: list[tuple[int, int]]) -> str:
    for ch in _DECENT:
        if any(lo <= ord(ch) < hi for lo, hi in blocks):
            return ch
    for lo, hi in blocks:
        for code in range(lo, min(hi, lo + 512)):
            ch = chr(code)
            if ch.isprintable() and not ch.isspace() and ch not in _AVOID:
                return ch
    return chr(blocks[0][0])


def _alphabet(charsets: Iterable[_CharSet], specials: str, slash: bool) -> tuple[str, ...]:
    """One character for each class of characters that nothing in the patterns tells apart.

    Single characters (literals and `specials`) stand for themselves; the rest of the code
    points are grouped by which classes hold them, each group stood for by its plainest member.
    """
    own = {ord(ch) for ch in specials} | {_SLASH}
    classes: list[_CharSet] = []
    for cs in dict.fromkeys(charsets):
        single = cs.single()
        if single is None:
            classes.append(cs)
        else:
            own.add(ord(single))
    points = {0, _MAX_CODE_POINT}
    for cs in classes:
        for lo, hi in cs.ranges:
            points.update((lo, hi + 1))
    for code in own:
        points.update((code, code + 1))
    bounds = sorted(points)
    reps = [chr(code) for code in own if code != _SLASH or slash]
    groups: dict[tuple[bool, ...], list[tuple[int, int]]] = {}
    for lo, hi in itertools.pairwise(bounds):
        if lo not in own:
            groups.setdefault(tuple(chr(lo) in cs for cs in classes), []).append((lo, hi))
    named: set[tuple[bool, ...]] = set()
    for ch in _NICE:
        code = ord(ch)
        if code not in own:
            signature = tuple(ch in cs for cs in classes)
            if signature not in named:
                named.add(signature)
                reps.append(ch)
    reps.extend(_fallback(blocks) for sig, blocks in groups.items() if sig not in named)
    return tuple(sorted(reps, key=_char_rank))


# ---------------------------------------------------------------------------------------------
# Name validity: non-empty, not '.' or '..', and the first segment not starting with
# 'interface:'. A small automaton, so the searches below can run it in step.

_EMPTY, _DOT, _DOTDOT, _NAME = 0, 1, 2, 3
_FREE = len(INTERFACE_PREFIX) + 1  # past the point where the prefix could still form
_V = tuple[int, int]  # (name state, characters of INTERFACE_PREFIX matched so far, or _FREE)


def _v_start(first: bool) -> _V:
    return (_EMPTY, 0 if first else _FREE)


def _v_step(v: _V, ch: str) -> _V | None:
    name, prefix = v
    if ch == "/":
        return (_EMPTY, _FREE) if name == _NAME else None
    if prefix < len(INTERFACE_PREFIX):
        prefix = prefix + 1 if ch == INTERFACE_PREFIX[prefix] else _FREE
        if prefix == len(INTERFACE_PREFIX):
            return None
    name = name + 1 if ch == "." and name in (_EMPTY, _DOT) else _NAME
    return (name, prefix)


def _valid_name(name: str, first: bool) -> bool:
    if name in ("", ".", ".."):
        return False
    return not (first and name.startswith(INTERFACE_PREFIX))


_DOT_PENALTY = 8
_ODD_CHAR_PENALTY = 2


def _char_cost(v: _V, ch: str) -> int:
    cost = 1 if ch in _NICE else 1 + _ODD_CHAR_PENALTY
    return cost + _DOT_PENALTY if ch == "." and v[0] == _EMPTY else cost


# ---------------------------------------------------------------------------------------------
# Segment patterns

_Tok = tuple[bool, _CharSet]  # (is `*`, the characters one step may take)
_STAR: _Tok = (True, _ANY)


@dataclass(frozen=True)
class _Seg:
    text: str
    toks: tuple[_Tok, ...]
    literal: str | None  # the one name it matches, when it has no wildcard
    head: str  # the literal characters before the first wildcard
    tail: str  # the literal characters after the last wildcard
    plain_star: bool  # the pattern is head*tail

    @cached_property
    def closure(self) -> tuple[frozenset[int], ...]:
        """For each position, the positions reachable by letting `*`s match nothing."""
        closure: list[frozenset[int]] = [frozenset({len(self.toks)})]
        for i in range(len(self.toks) - 1, -1, -1):
            closure.append(frozenset({i}) | (closure[-1] if self.toks[i][0] else frozenset()))
        return tuple(reversed(closure))

    def match(self, name: str) -> bool:
        """Whether the segment pattern matches `name`, a name without '/'."""
        if self.literal is not None:
            return name == self.literal
        if self.plain_star:
            return (
                len(name) >= len(self.head) + len(self.tail)
                and name.startswith(self.head)
                and name.endswith(self.tail)
            )
        return _wild_match(self.toks, name)


def _wild_match(toks: tuple[_Tok, ...], name: str) -> bool:
    """Greedy matching with a return to the last `*`: O(len(toks) * len(name)) steps.

    Every other token takes exactly one character, so when a later part fails it is enough to
    let the last `*` take one more character (a backtracking regex is exponential here)."""
    p = s = 0
    star_p, star_s = -1, 0
    while s < len(name):
        if p < len(toks) and toks[p][0]:
            star_p, star_s = p, s
            p += 1
        elif p < len(toks) and name[s] in toks[p][1]:
            p += 1
            s += 1
        elif star_p >= 0:
            star_s += 1
            p, s = star_p + 1, star_s
        else:
            return False
    while p < len(toks) and toks[p][0]:
        p += 1
    return p == len(toks)


class _Globstar:
    __slots__ = ()

    def __repr__(self) -> str:
        return "**"


_GLOBSTAR = _Globstar()
_Item: TypeAlias = "_Seg | _Globstar"


def _parse_class(seg: str, start: int) -> tuple[_CharSet, int]:
    j = start + 1
    negated = seg.startswith("!", j)
    j += negated
    body_start = j
    if seg.startswith("]", j):
        j += 1
    close = seg.find("]", j)
    if close < 0:
        raise EntryError(
            f"the '[' in {seg!r} has no closing ']' (a class cannot contain /); "
            "write [[] for a literal ["
        )
    body = seg[body_start:close]
    pairs: list[tuple[int, int]] = []
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            lo, hi = body[k], body[k + 2]
            if hi < lo:
                raise EntryError(f"the range {lo}-{hi} in {seg!r} is backwards: write {hi}-{lo}")
            pairs.append((ord(lo), ord(hi)))
            k += 3
        else:
            pairs.append((ord(body[k]), ord(body[k])))
            k += 1
    return _charset(pairs, negated), close + 1


@lru_cache(maxsize=1024)
def _literal_tok(ch: str) -> _Tok:
    return (False, _charset([(ord(ch), ord(ch))], negated=False))


def _tokenize(seg: str) -> tuple[_Tok, ...]:
    toks: list[_Tok] = []
    i = 0
    while i < len(seg):
        ch = seg[i]
        if ch == "[":
            chars, i = _parse_class(seg, i)
            toks.append((False, chars))
            continue
        if ch == "*":
            toks.append(_STAR)
        elif ch == "?":
            toks.append((False, _ANY))
        else:
            toks.append(_literal_tok(ch))
        i += 1
    return tuple(toks)


@lru_cache(maxsize=65536)
def _segment(text: str) -> _Seg:
    if _WILDCARD.search(text) is None:  # the common case, made cheap
        return _Seg(text, tuple(_literal_tok(ch) for ch in text), text, text, text, False)
    toks = _tokenize(text)
    singles = [None if star else cs.single() for star, cs in toks]
    head = _literal_run(singles)
    if len(head) == len(toks):
        return _Seg(text, toks, head, head, head, False)
    tail = _literal_run(singles[::-1])[::-1]
    plain_star = len(head) + len(tail) + 1 == len(toks) and toks[len(head)] == _STAR
    return _Seg(text, toks, None, head, tail, plain_star)


def _literal_run(singles: list[str | None]) -> str:
    run: list[str] = []
    for ch in singles:
        if ch is None:
            break
        run.append(ch)
    return "".join(run)


_ANY_SEG = _segment("*")


_Meet = tuple[int, int, _V]
_Moves = tuple[tuple[tuple[int, int], ...], ...]  # per position: (alphabet bitmask, target)


def _seg_moves(seg: _Seg, alphabet: tuple[str, ...]) -> _Moves:
    """For each position of the pattern, its moves: the characters of the alphabet (as a
    bitmask over its indices) on which it may go to a target position, `*`s matching nothing
    folded in."""
    full = (1 << len(alphabet)) - 1
    masks = [
        full if star else sum(1 << k for k, ch in enumerate(alphabet) if ch in chars)
        for star, chars in seg.toks
    ]
    return tuple(
        tuple(
            (masks[p], p if seg.toks[p][0] else p + 1)
            for p in sorted(seg.closure[pos])
            if p < len(seg.toks)
        )
        for pos in range(len(seg.toks) + 1)
    )


def _cells(allowed: int, masks: Iterable[int]) -> list[int]:
    """The characters of `allowed` cut into the classes that no mask tells apart."""
    cells = [allowed] if allowed else []
    for mask in masks:
        cells = [c for cell in cells for c in (cell & mask, cell & ~mask) if c]
    return cells


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


def _union(moves: Iterable[tuple[int, int]]) -> int:
    out = 0
    for mask, _target in moves:
        out |= mask
    return out


def _representatives(allowed: int, splits: Iterable[int]) -> list[int]:
    """One character (its alphabet index) per class of `allowed` that no split tells apart:
    the lowest index, the plainest, since the alphabet is sorted plainest first."""
    return sorted((c & -c).bit_length() - 1 for c in _cells(allowed, splits))


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


# ---------------------------------------------------------------------------------------------
# Path patterns


@dataclass(frozen=True)
class _Pattern:
    items: tuple[_Item, ...]
    prefix: tuple[str, ...]  # the leading segments that are literal names
    literal: str | None  # the one path it matches, when it has no wildcard


@lru_cache(maxsize=65536)
def _compile(text: str) -> _Pattern:
    items: list[_Item] = [_GLOBSTAR if s == "**" else _segment(s) for s in text.split("/")]
    if items[-1] is _GLOBSTAR:
        items.append(_ANY_SEG)  # a trailing ** matches one or more segments
    prefix: list[str] = []
    for item in items:
        if not isinstance(item, _Seg) or item.literal is None:
            break
        prefix.append(item.literal)
    literal = "/".join(prefix) if len(prefix) == len(items) else None
    return _Pattern(tuple(items), tuple(prefix), literal)


def _closure(items: tuple[_Item, ...], positions: Iterable[int]) -> set[int]:
    out: set[int] = set()
    for start in positions:
        p = start
        while p not in out:
            out.add(p)
            if p == len(items) or items[p] is not _GLOBSTAR:
                break
            p += 1
    return out


def _match_segments(items: tuple[_Item, ...], names: list[str]) -> bool:
    positions = _closure(items, [0])
    for name in names:
        nxt: list[int] = []
        for p in positions:
            if p == len(items):
                continue
            item = items[p]
            if isinstance(item, _Globstar):
                nxt.append(p)
            elif item.match(name):
                nxt.append(p + 1)
        positions = _closure(items, nxt)
        if not positions:
            return False
    return len(items) in positions


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


# Whole-path automata, for containment. A move is taken on a character in its set, or on '/'
# when the set is None.
_Move: TypeAlias = "tuple[_CharSet | None, int]"


@dataclass(frozen=True)
class _Nfa:
    moves: tuple[tuple[_Move, ...], ...]
    closure: tuple[frozenset[int], ...]
    accept: int
    charsets: tuple[_CharSet, ...]


@lru_cache(maxsize=4096)
def _nfa(text: str) -> _Nfa:
    items = _compile(text).items
    moves: list[list[_Move]] = [[]]
    eps: list[list[int]] = [[]]

    def new_state() -> int:
        moves.append([])
        eps.append([])
        return len(moves) - 1

    cur = 0
    for index, item in enumerate(items):
        if isinstance(item, _Globstar):  # (name '/')*
            after, inside = new_state(), new_state()
            eps[cur].append(after)
            moves[cur].append((_ANY, inside))
            moves[inside].extend(((_ANY, inside), (None, cur)))
            cur = after
            continue
        for star, chars in item.toks:
            if star:
                moves[cur].append((_ANY, cur))
            else:
                nxt = new_state()
                moves[cur].append((chars, nxt))
                cur = nxt
        if index + 1 < len(items):
            nxt = new_state()
            moves[cur].append((None, nxt))
            cur = nxt
    closure = tuple(frozenset(_reach(eps, s)) for s in range(len(moves)))
    charsets = tuple(cs for row in moves for cs, _ in row if cs is not None)
    return _Nfa(tuple(tuple(row) for row in moves), closure, cur, charsets)


def _reach(eps: list[list[int]], start: int) -> set[int]:
    seen = {start}
    todo = [start]
    while todo:
        for t in eps[todo.pop()]:
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return seen


def _nfa_moves(nfa: _Nfa, alphabet: tuple[str, ...]) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Each state's moves as (alphabet bitmask, bitmask of the states it reaches, closed)."""
    slash = 1 << alphabet.index("/")

    def mask(chars: _CharSet | None) -> int:
        if chars is None:
            return slash
        return sum(1 << k for k, ch in enumerate(alphabet) if ch != "/" and ch in chars)

    masks = {chars: mask(chars) for row in nfa.moves for chars, _ in row}
    closed = [sum(1 << t for t in nfa.closure[s]) for s in range(len(nfa.moves))]
    return tuple(
        tuple((masks[chars], closed[target]) for chars, target in row) for row in nfa.moves
    )


def _bits(mask: int) -> Iterator[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _step_set(moves: Iterable[tuple[int, int]], bit: int) -> int:
    out = 0
    for mask, targets in moves:
        if mask >> bit & 1:
            out |= targets
    return out


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


# ---------------------------------------------------------------------------------------------
# Parsing


def _normalise_path(raw: str) -> str:
    if "\\" in raw:
        raise EntryError("it contains a backslash: use / to separate directories")
    if raw.startswith("/"):
        raise EntryError("it is absolute: write it relative to the repository root, without the /")
    parts = raw.split("/")
    if ".." in parts:
        raise EntryError("'..' is not allowed: write the path from the repository root down")
    segments = [p for p in parts if p not in ("", ".")]
    if raw.endswith("/"):
        segments.append("**")
    if not segments:
        raise EntryError("it names the repository root itself: write ** to own everything")
    for seg in segments:
        if "**" in seg and seg != "**":
            raise EntryError(
                f"{seg!r} mixes ** with other characters: use * within a segment, "
                "or ** alone as a whole segment (as in src/**/x.py)"
            )
    collapsed = [
        s for k, s in enumerate(segments) if not (s == "**" and segments[k - 1 : k] == [s])
    ]
    return "/".join(collapsed)


def _quick_name(seg: _Seg) -> str | None:
    """A name the segment pattern matches, found without search, or None."""
    if seg.literal is not None:
        return seg.literal
    chars: list[str] = []
    for star, cs in seg.toks:
        ch = "a" if star else cs.single() or next((c for c in _NICE if c in cs), None)
        if ch is None:
            return None
        chars.append(ch)
    return "".join(chars)


def _matchable(seg: _Seg, first: bool) -> bool:
    quick = _quick_name(seg)
    if quick is not None and _valid_name(quick, first):
        return True
    return _seg_meet(seg, seg, first) is not None


def _check_matchable(pattern: _Pattern) -> None:
    for index, item in enumerate(pattern.items):
        if not isinstance(item, _Seg) or _matchable(item, index == 0):
            continue
        if index == 0 and _matchable(item, False):
            raise EntryError(
                "a path cannot start with 'interface:', which names an interface: "
                "write interface:<name> on its own"
            )
        raise EntryError(
            f"the segment {item.text!r} can never match a file name "
            "(names are not empty, '.' or '..')"
        )


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _check_control(raw: str) -> None:
    control = _CONTROL.search(raw)
    if control is not None:
        raise EntryError(
            f"it contains the control character U+{ord(control.group()):04X} "
            "(a NUL, newline or the like): paths and interface names are printable text"
        )


def _check_limits(text: str) -> None:
    """Refuse a normalised path glob past the documented limits, before it is compiled."""
    segments = text.split("/")
    if len(segments) > MAX_SEGMENTS:
        raise EntryError(
            f"it has {len(segments)} segments, over the limit of {MAX_SEGMENTS}: "
            "own a folder higher up (dir/**)"
        )
    wild = [seg for seg in segments if _WILDCARD.search(seg) is not None]
    count = sum(1 if seg == "**" else _wildcards(seg) for seg in wild)
    if count > MAX_WILDCARDS:
        raise EntryError(
            f"it has {count} wildcards (* ? [...] **), over the limit of {MAX_WILDCARDS}: "
            "list a few simpler entries instead"
        )
    length = sum(len(seg) for seg in wild)
    if length > MAX_PATTERN_LENGTH:
        raise EntryError(
            f"its segments with wildcards have {length} characters together, over the limit "
            f"of {MAX_PATTERN_LENGTH}: write the long names out as literal segments"
        )


def _wildcards(seg: str) -> int:
    """The `*`, `?` and `[...]` of a segment (a '[' without its ']' counts as a class)."""
    count = i = 0
    while i < len(seg):
        ch = seg[i]
        if ch == "[":  # as `_parse_class` reads it: [!]...] and []...] hold the first ]
            j = i + 1 + seg.startswith("!", i + 1)
            j += seg.startswith("]", j)
            close = seg.find("]", j)
            count += 1
            i = len(seg) if close < 0 else close + 1
            continue
        count += ch in "*?"
        i += 1
    return count


def _parse_interface(raw: str) -> Entry:
    name = raw[len(INTERFACE_PREFIX) :]
    if not name.strip():
        raise EntryError("the interface has no name: write it as interface:<name>")
    if name != name.strip():
        raise EntryError("the interface name starts or ends with white space: remove it")
    return Entry(raw=raw, kind="interface", text=name)


def parse_entry(raw: object) -> Entry:
    """Parse and normalise one `filesAndInterfaces` entry; raise `EntryError` when unusable.

    Memoised: an envelope's entries are parsed when it is validated and again by every rule
    that compares tasks, and a process meets the same entries many times.
    """
    if not isinstance(raw, str):
        raise EntryError(f"expected a string, got {type(raw).__name__}")
    return _parse_text(raw)


@lru_cache(maxsize=65536)
def _parse_text(raw: str) -> Entry:
    if len(raw) > MAX_ENTRY_LENGTH:  # first, so that no work is spent on a huge entry
        raise EntryError(
            f"it is {len(raw)} characters long, over the limit of {MAX_ENTRY_LENGTH}: "
            "own a folder (dir/**) or a shorter glob"
        )
    if not raw.strip():
        raise EntryError("the entry is empty: write a path glob or interface:<name>")
    if raw.startswith(INTERFACE_PREFIX):
        entry = _parse_interface(raw)
        _check_control(raw)
        return entry
    if raw != raw.strip():
        raise EntryError("it starts or ends with white space: remove it")
    _check_control(raw)
    text = _normalise_path(raw)
    _check_limits(text)
    _check_matchable(_compile(text))
    return Entry(raw=raw, kind="path", text=text)


# ---------------------------------------------------------------------------------------------
# Questions about entries


def matches(entry: Entry, path: str) -> bool:
    """Whether a concrete repository path (or `interface:<name>`) matches `entry`.

    Paths are taken as git writes them: a path with an empty, `.` or `..` segment matches
    nothing.
    """
    if entry.kind == "interface":
        return path == INTERFACE_PREFIX + entry.text
    if path.startswith(INTERFACE_PREFIX):
        return False
    names = path.split("/")
    if any(name in ("", ".", "..") for name in names):
        return False
    return _match_segments(_compile(entry.text).items, names)


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


def reaches_below(entry: Entry, folder: str) -> bool:
    """Whether the path glob can match a path below `folder` (a literal path such as `tasks`
    or `.git`), where a segment written as a bare `*` or `**` is not taken to match one of the
    folder's names: `tasks/**`, `t*/x`, `**/.git/**` and `.taskfs/*` reach below their folders;
    `**`, `*/x` and `**/*.py` do not (they own everything else). Matching `folder` itself is not
    reaching below it (`.git*` stays allowed).

    Linear in the folder's depth times the glob's items."""
    if entry.kind != "path":
        return False
    items = _compile(entry.text).items
    positions = _closure(items, [0])  # a `**` matching no segment
    for name in folder.split("/"):
        nxt = [
            p + 1
            for p in positions
            if p < len(items)
            and isinstance(item := items[p], _Seg)
            and item.text != "*"
            and item.match(name)
        ]
        positions = _closure(items, nxt)
        if not positions:
            return False
    return any(p < len(items) for p in positions)


# ---------------------------------------------------------------------------------------------
# The index


# (order added, key, raw text, the entry when it was given parsed). A plain tuple of strings
# and numbers, which the garbage collector stops tracking: an index holds tens of thousands.
_Record: TypeAlias = "tuple[int, K, str, Entry | None]"


def _entry_of(record: _Record[K]) -> Entry:
    return record[3] or parse_entry(record[2])  # parse_entry is memoised


def _order(record: _Record[K]) -> int:
    return record[0]


class _Node(Generic[K]):
    """A trie node. Thousands are built per check, so they hold nothing until they need to."""

    __slots__ = ("children", "exact", "open")

    def __init__(self) -> None:
        self.children: dict[str, _Node[K]] | None = None
        self.exact: list[_Record[K]] | None = None  # literal paths ending here
        self.open: list[_Record[K]] | None = None  # entries whose literal prefix ends here

    def child(self, name: str) -> _Node[K]:
        if self.children is None:
            self.children = {}
        found = self.children.get(name)
        if found is None:
            found = self.children[name] = _Node()
        return found


def _placement(text: str) -> tuple[list[str], bool]:
    """The leading segments of a path entry with no wildcard character, and whether that is
    all of it (a literal path), read off the text without parsing it.

    Works on a raw entry as on a normalised one. A class of one character (`[a]`) counts as a
    wildcard here, so such an entry sits higher in the trie than it could: it then meets more
    queries, never fewer, and `overlap` decides.
    """
    wildcard = _WILDCARD.search(text)
    if wildcard is None:
        names, literal = text.split("/"), not text.endswith("/")
    else:
        names, literal = text[: wildcard.start()].split("/")[:-1], False
    return [name for name in names if name and name != "."], literal


class OwnershipIndex(Generic[K]):
    """Entries of many tasks, for finding the ones a new entry overlaps or a path matches.

    Path entries sit in a trie on their leading literal segments; a query walks the trie with
    its own glob and meets only the entries whose literal prefix it can match. Adding is cheap:
    an entry given as text is placed by its literal prefix alone and parsed only when a query
    first reaches it, so a check against thousands of open tasks pays for the few entries
    near the query, not for all of them. Text given to `add` must be a valid entry (as in
    every envelope that passed validation); a broken one raises `EntryError` when met.
    """

    def __init__(self) -> None:
        self._root: _Node[K] = _Node()
        self._interfaces: dict[str, list[_Record[K]]] = {}
        self._count = 0

    def add(self, key: K, entry: Entry | str) -> None:
        raw, parsed = (entry, None) if isinstance(entry, str) else (entry.raw, entry)
        record: _Record[K] = (self._count, key, raw, parsed)
        self._count += 1
        if raw.startswith(INTERFACE_PREFIX):
            name = parsed.text if parsed is not None else raw[len(INTERFACE_PREFIX) :]
            self._interfaces.setdefault(name, []).append(record)
            return
        prefix, literal = _placement(parsed.text if parsed is not None else raw)
        node = self._root
        for name in prefix:
            node = node.child(name)
        if literal:
            if node.exact is None:
                node.exact = []
            node.exact.append(record)
        else:
            if node.open is None:
                node.open = []
            node.open.append(record)

    def conflicts(self, entry: Entry) -> Iterator[tuple[K, Entry, str]]:
        """(key, indexed entry, witness) for every indexed entry that overlaps `entry`."""
        if entry.kind == "interface":
            for record in self._interfaces.get(entry.text, ()):
                yield record[1], _entry_of(record), INTERFACE_PREFIX + entry.text
            return
        for record in sorted(self._candidates(_compile(entry.text)), key=_order):
            other = _entry_of(record)
            witness = overlap(entry, other)
            if witness is not None:
                yield record[1], other, witness

    def matching(self, path: str) -> Iterator[tuple[K, Entry]]:
        """(key, indexed entry) for every indexed entry that matches the concrete `path`
        (a repository path as git writes it, or `interface:<name>`), in the order added."""
        if path.startswith(INTERFACE_PREFIX):
            for record in self._interfaces.get(path[len(INTERFACE_PREFIX) :], ()):
                yield record[1], _entry_of(record)
            return
        found: list[_Record[K]] = []
        node: _Node[K] | None = self._root
        for name in path.split("/"):
            assert node is not None
            found += node.open or ()
            node = node.children.get(name) if node.children else None
            if node is None:
                break
        else:
            assert node is not None
            found += (node.open or []) + (node.exact or [])
        for record in sorted(found, key=_order):
            other = _entry_of(record)
            if matches(other, path):
                yield record[1], other

    def _candidates(self, pattern: _Pattern) -> list[_Record[K]]:
        items = pattern.items
        # positions from which the rest of the glob can match no further segment
        done = {p for p in range(len(items) + 1) if all(i is _GLOBSTAR for i in items[p:])}
        found: list[_Record[K]] = []
        met: set[int] = set()
        seen: set[tuple[int, int]] = set()
        todo: list[tuple[_Node[K], int]] = [(self._root, 0)]
        while todo:
            node, pos = todo.pop()
            if (id(node), pos) in seen:
                continue
            seen.add((id(node), pos))
            if id(node) not in met:
                met.add(id(node))
                found.extend(node.open or ())
            if pos in done:
                found.extend(node.exact or ())
            if pos < len(items) and items[pos] is _GLOBSTAR:
                todo.append((node, pos + 1))  # ** matching no segment
            if node.children:
                todo.extend(_descend(node.children, items, pos))
        return list({r[0]: r for r in found}.values())


def _descend(
    children: dict[str, _Node[K]], items: tuple[_Item, ...], pos: int
) -> Iterator[tuple[_Node[K], int]]:
    if pos == len(items):
        return
    item = items[pos]
    if isinstance(item, _Globstar):
        yield from ((child, pos) for child in children.values())
        return
    if item.literal is not None:
        found = children.get(item.literal)
        if found is not None:
            yield found, pos + 1
    else:
        for name, child in children.items():
            if item.match(name):
                yield child, pos + 1
