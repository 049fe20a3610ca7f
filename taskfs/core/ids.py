"""Task ids and agent names: what is path-safe, and ids no two offline clones can both make.

A generated id is 10 characters of lowercase Crockford base32 from 50 random bits (the OS's
CSPRNG), so no counter is ever shared through the repository. Among 100,000 tasks the chance
that any two ids collide is about n^2 / 2^51 = 4.4e-6; a collision brought in by a merge is
still detected (two envelopes under one id), never resolved silently.
"""

from __future__ import annotations

import re

TASK_ID_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
AGENT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
# Crockford's alphabet without i, l, o, u: nothing to misread when an id is typed by hand.
_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
GENERATED_LENGTH = 10


def is_task_id(value: object) -> bool:
    return isinstance(value, str) and TASK_ID_RE.fullmatch(value) is not None


def is_agent_name(value: object) -> bool:
    return isinstance(value, str) and AGENT_RE.fullmatch(value) is not None


def nonce(length: int) -> str:
    """`length` random characters of the id alphabet (5 bits each)."""
    import secrets  # only writers need random names

    bits = secrets.randbits(5 * length)
    return "".join(_ALPHABET[(bits >> (5 * i)) & 31] for i in range(length))


def new_task_id() -> str:
    return nonce(GENERATED_LENGTH)
