"""Ages as people write them in settings and on the command line: `30d`, `12h`, `90m`, `45s`,
`2w` (a bare number counts days)."""

from __future__ import annotations

import re
from datetime import timedelta

_AGE = re.compile(r"(?P<n>[0-9]{1,6})(?P<unit>[smhdw]?)")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "": 86400}


def parse_age(text: str) -> timedelta:
    """The age `text` names; ValueError saying what an age looks like otherwise."""
    found = _AGE.fullmatch(text.strip())
    if found is None:
        raise ValueError(f"{text!r} is not an age such as 30d, 12h, 90m or 2w")
    return timedelta(seconds=int(found["n"]) * _UNITS[found["unit"]])
