"""Compiled patterns: segment patterns and their matching, path patterns as item sequences,
and whole-path automata for containment; `matches` and `reaches_below` ask them of a path.

A glob is a sequence of items, each a segment pattern or `**` (zero or more segments; a
trailing `**` is stored as `**` followed by `*`). Matching a name against a segment pattern is
greedy with a return to the last `*`: at most len(pattern) * len(name) steps (never a
backtracking regex). Matching a path walks a set of at most 33 item positions per segment.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import NamedTuple, TypeAlias

from taskfs.core.globs.classes import _ANY, _CharSet, _charset, _parse_class
from taskfs.core.globs.syntax import _WILDCARD, INTERFACE_PREFIX, Entry

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


class _Pattern(NamedTuple):
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


# Whole-path automata, for containment. A move is taken on a character in its set, or on '/'
# when the set is None.
_Move: TypeAlias = "tuple[_CharSet | None, int]"


class _Nfa(NamedTuple):
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
