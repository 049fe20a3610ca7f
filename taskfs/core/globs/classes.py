"""Characters: sets of them (the `[...]` classes), the alphabet of the classes of characters
that no pattern tells apart, which of them make plain witnesses, and the small automaton for
name validity that the searches run in step.

The alphabet is cut into the classes of characters that no pattern tells apart, each stood for
by its plainest member, and leading dots cost extra, so witnesses read like `src/auth/a.py`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from taskfs.core.globs.syntax import INTERFACE_PREFIX, EntryError

_SLASH = ord("/")
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
# 'interface:'. A small automaton, so the searches of `relations` can run it in step.

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


def _cells(allowed: int, masks: Iterable[int]) -> list[int]:
    """The characters of `allowed` cut into the classes that no mask tells apart."""
    cells = [allowed] if allowed else []
    for mask in masks:
        cells = [c for cell in cells for c in (cell & mask, cell & ~mask) if c]
    return cells


def _union(moves: Iterable[tuple[int, int]]) -> int:
    out = 0
    for mask, _target in moves:
        out |= mask
    return out


def _representatives(allowed: int, splits: Iterable[int]) -> list[int]:
    """One character (its alphabet index) per class of `allowed` that no split tells apart:
    the lowest index, the plainest, since the alphabet is sorted plainest first."""
    return sorted((c & -c).bit_length() - 1 for c in _cells(allowed, splits))
