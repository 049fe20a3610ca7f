"""Ownership entries: parse, match, and decide overlap and containment on the patterns alone.

Pure: no file system, clock or processes. The functions take entries made by `parse_entry`.
The glob language and its limits are described in `syntax`; the concrete paths a glob can
match are the valid ones: segments that are non-empty and not `.` or `..`, and no path starting
with `interface:` (that string names an interface). Witnesses and containment are decided
within that set, and `parse_entry` refuses a glob that can match no valid path at all.

The modules, each importing only those above it:

* `syntax`: what an entry is (`Entry`, `EntryError`), the limits, the rules read off the text;
* `classes`: character sets, the alphabet cut into classes no pattern tells apart, the plainest
  witness characters, and the automaton for name validity;
* `automata`: compiled segment and path patterns, whole-path automata; `matches` and
  `reaches_below`;
* `relations`: `overlap` and `covers` (the searches, their bounds, `WORK` and `COVER_BUDGET`);
* `parse`: `parse_entry`, which also asks whether every segment can match a valid name;
* `index`: `OwnershipIndex`, the trie that finds the entries a query meets.

Callers use the names below, from `taskfs.core.globs`; the modules' `_` names are the package's
own.
"""

from taskfs.core.globs import automata as _automata
from taskfs.core.globs import parse as _parse
from taskfs.core.globs import relations as _relations
from taskfs.core.globs.automata import matches, reaches_below
from taskfs.core.globs.index import OwnershipIndex, placement
from taskfs.core.globs.parse import parse_entry
from taskfs.core.globs.relations import COVER_BUDGET, WORK, CoverUndecided, covers, overlap
from taskfs.core.globs.syntax import (
    INTERFACE_PREFIX,
    MAX_ENTRY_LENGTH,
    MAX_PATTERN_LENGTH,
    MAX_SEGMENTS,
    MAX_WILDCARDS,
    Entry,
    EntryError,
)

__all__ = [
    "COVER_BUDGET",
    "INTERFACE_PREFIX",
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
    "placement",
    "reaches_below",
]


def forget() -> None:
    """Drop what the memos of parsing, compiling and comparing entries hold: a process that
    reads every task of a large ledger once (a rebuild of the read model) keeps its memory
    flat instead of holding tens of thousands of them."""
    for memo in (
        _parse._parse_text,
        _automata._segment,
        _automata._compile,
        _relations._meet_patterns,
    ):
        memo.cache_clear()
