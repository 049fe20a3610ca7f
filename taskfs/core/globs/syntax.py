"""The language of ownership entries, as text: what an entry is, and the rules read off the
text before anything is compiled (normalisation, control characters, the documented limits).

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

Limits. An entry is refused (`EntryError`, which validation reports as
`files_and_interfaces_invalid`) when it holds a control character (NUL, newline, ...), or when
it is past one of these limits, checked before any search (`MAX_*` below):

* at most 512 characters as written (checked first, before anything else is done with it);
* at most 32 segments;
* at most 16 wildcards, each `*`, `?`, `[...]` and `**` counting one;
* at most 64 characters in the segments that hold a wildcard, together.

Imports nothing from the rest of the package.
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

INTERFACE_PREFIX = "interface:"


class EntryError(ValueError):
    """An ownership entry that cannot be used; `reason` says what to write instead."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Entry(NamedTuple):
    """One parsed `filesAndInterfaces` entry."""

    raw: str
    kind: Literal["path", "interface"]
    text: str


# Limits on a path glob (`relations` says what they bound). Documented in the
# README beside the glob rules; an entry past one is refused when it is parsed.
MAX_ENTRY_LENGTH = 512  # characters of the entry as written
MAX_SEGMENTS = 32  # segments, after normalisation
MAX_WILDCARDS = 16  # each `*`, `?`, `[...]` and `**` counts one
MAX_PATTERN_LENGTH = 64  # characters of the segments that hold a wildcard, together

_WILDCARD = re.compile(r"[*?\[]")  # a segment without these is a literal name


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
