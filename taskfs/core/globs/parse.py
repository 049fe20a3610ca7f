"""`parse_entry`: the text rules of `syntax`, then a check on the compiled pattern that every
segment can match a valid name (non-empty, not `.` or `..`, and a first segment not starting
with `interface:`), so that a glob that can match no valid path at all (`[.]`, or
`./interface:x`) is refused. That check is a segment meeting itself, which is why parsing sits
above `relations` and not beside `syntax`.
"""

from __future__ import annotations

from functools import lru_cache

from taskfs.core.globs.automata import _compile, _Pattern, _Seg
from taskfs.core.globs.classes import _NICE, _valid_name
from taskfs.core.globs.relations import _seg_meet
from taskfs.core.globs.syntax import (
    INTERFACE_PREFIX,
    MAX_ENTRY_LENGTH,
    Entry,
    EntryError,
    _check_control,
    _check_limits,
    _normalise_path,
    _parse_interface,
)


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
