"""The document of a status file, as transitions write it.

Transitions are the hottest writes, so they build this plain mapping instead of loading the
models: `taskfs.core.records.StatusRecord` is what reads and validates status files, and a
test checks that every document built here is one it accepts unchanged, key order included.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any


def status_document(
    *,
    task: str,
    state: str,
    by: str,
    at: str,
    prev: str | None,
    reason: str | None = None,
    evidence: str | None = None,
    artifacts: Sequence[Mapping[str, str]] = (),
    message: str | None = None,
    amendment: str | None = None,
) -> dict[str, Any]:
    """The fields in `StatusRecord`'s order, absent ones left out."""
    fields: dict[str, Any] = {
        "task": task,
        "state": state,
        "by": by,
        "at": at,
        "prev": prev,
        "reason": reason,
        "evidence": evidence,
        "artifacts": [dict(a) for a in artifacts] or None,
        "message": message,
        "amendment": amendment,
    }
    return {key: value for key, value in fields.items() if value is not None}


# What PyYAML writes unquoted and reads back as the same string, decided without importing it.
# A plain scalar that starts with a letter resolves to a string unless it is one of YAML 1.1's
# booleans or nulls; one that starts with a digit could be an int, a float or a timestamp,
# whose forms use no letters but b, x, a-f, e, t and z (in either case): any other letter
# makes it a string. Everything else is left to the YAML library.
_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@/-]*")
_WORDS = {
    word
    for base in ("yes", "no", "true", "false", "on", "off", "null")
    for word in (base, base.capitalize(), base.upper())
}
_NOT_A_NUMBER = re.compile(r"[g-su-wyG-SU-WY]")
# What `names.format_time` writes; [0-9], not \d, which matches any script's digits.
_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")
# What `signing.sign` writes (a signed transition's `sig`): PyYAML writes it plain, since
# `ed25519:` starts with a letter and its colon is followed by no space.
_SIG = re.compile(r"ed25519:[A-Za-z0-9+/]{86}==")


def status_text(document: Mapping[str, Any]) -> str | None:
    """The YAML text of a status document whose values are all plain words (the common case:
    a claim, a move without a reason), exactly as `yamlio.dump` writes it; None otherwise."""
    lines = []
    for key, value in document.items():
        if not isinstance(value, str):
            return None
        if key == "at" and _TIME.fullmatch(value):
            lines.append(f"{key}: '{value}'")  # a timestamp to YAML: quoted to stay a string
        elif _plain(value) or (key == "sig" and _SIG.fullmatch(value)):
            lines.append(f"{key}: {value}")
        else:
            return None
    return "\n".join(lines) + "\n"


def _plain(value: str) -> bool:
    if not _SAFE.fullmatch(value) or value in _WORDS:
        return False
    return not value[0].isdigit() or _NOT_A_NUMBER.search(value) is not None


def written_at(text: str) -> str | None:
    """The `at` of a status file as `status_text` writes it (its `at: 'TIME'` line, at the
    start of a line: a block scalar's lines are indented); None when the file holds no such
    line, which a caller then reads as YAML. The fast path's reading of its own writing, for
    the one value a completion needs of its claim (`completion_warnings`)."""
    for line in text.splitlines():
        if line.startswith("at: '") and line.endswith("'") and _TIME.fullmatch(line[5:-1]):
            return line[5:-1]
    return None
