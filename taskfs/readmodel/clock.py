"""Durations in answers that are stored and printed later (`taskfs.readmodel.answers`).

An inbox or a `prime` says how long a holder has been quiet ("quiet for 25 min", `quietMinutes:
25`): a value of the moment it is printed, not of the moment it was computed. So the views say
each duration through this module: printed now, it is the number or the words; computed for a
stored answer (`deferred`), it is a placeholder naming the moment it counts from, which `fill`
turns into the number or the words of the moment the answer is printed. A view also says when a
list it shows would change by time alone (a holder turning quiet: `changes_at`); the stored
answer is not used past the earliest such moment.

A placeholder is `\\ue000NONCE:KIND:SECONDS\\ue000`, NONCE random per answer, so no text an agent
wrote (a message, an objective) can pass for one. KIND `m` is a JSON number of minutes (the
placeholder stands quoted, as a JSON string, and `fill` replaces the quotes too); `d` is a
duration for people in minutes up to two hours, then hours (`sent`), `s` one in minutes below
an hour, then hours (`stale`).

Imports nothing but the leaves (the fast path prints stored answers through `fill`).
"""

from __future__ import annotations

import re
import time

TYPE_CHECKING = False  # `typing` costs the hot path 3 ms to import
if TYPE_CHECKING:
    from collections.abc import Iterator
    from datetime import datetime

MARK = "\ue000"


class Recording:
    """What a stored answer is computed under: its nonce, and the earliest moment (epoch
    seconds) at which it would change by time alone (None: never)."""

    def __init__(self, nonce: str) -> None:
        self.nonce = nonce
        self.until: float | None = None


_recording: list[Recording] = []


class deferred:
    """`with deferred() as rec:` the durations said inside are placeholders of `rec`."""

    def __init__(self) -> None:
        from taskfs.core.layout import nonce

        self.recording = Recording(nonce(12))

    def __enter__(self) -> Recording:
        _recording.append(self.recording)
        return self.recording

    def __exit__(self, *_exc: object) -> None:
        _recording.remove(self.recording)


def _active() -> Recording | None:
    return _recording[-1] if _recording else None


def minutes(since: datetime, now: datetime) -> int | str:
    """Whole minutes from `since` to `now` (a JSON number), or its placeholder."""
    rec = _active()
    if rec is not None:
        return f"{MARK}{rec.nonce}:m:{since.timestamp():.6f}{MARK}"
    return round((now - since).total_seconds() / 60)


def duration(since: datetime, now: datetime, style: str = "d") -> str:
    """How long from `since` to `now`, for people (`style`: `d` or `s`, see the module), or
    its placeholder."""
    rec = _active()
    if rec is not None:
        return f"{MARK}{rec.nonce}:{style}:{since.timestamp():.6f}{MARK}"
    return said((now - since).total_seconds(), style)


def said(seconds: float, style: str = "d") -> str:
    """`seconds` as people read a duration, in their language."""
    from taskfs import i18n

    minutes_now = seconds / 60
    hours_from = 120 if style == "d" else 60
    if minutes_now >= hours_from:
        return i18n.say("{hours} h", hours=round(minutes_now / 60))
    return i18n.say("{minutes} min", minutes=round(minutes_now))


def changes_at(moment: datetime) -> None:
    """A list the answer shows changes at `moment` by time alone (a holder turns quiet)."""
    rec = _active()
    if rec is None:
        return
    at = moment.timestamp()
    if rec.until is None or at < rec.until:
        rec.until = at


_PLACE = re.compile(f'("?){MARK}([0-9a-z]+):([mds]):([0-9.]+){MARK}("?)')


def fill(text: str, nonce: str, now: float | None = None) -> str:
    """`text` with the placeholders of answer `nonce` said as of `now` (epoch seconds)."""
    if MARK not in text:
        return text
    when = time.time() if now is None else now

    def one(found: re.Match[str]) -> str:
        before, whose, kind, since, after = found.groups()
        if whose != nonce:
            return found.group(0)
        if kind == "m" and before and after:
            # A JSON number standing in a string's place: the quotes go too.
            return str(round((when - float(since)) / 60))
        return before + said(when - float(since), kind) + after

    return _PLACE.sub(one, text)


def placeholders(text: str) -> Iterator[str]:
    """The placeholders in `text` (tests)."""
    return (m.group(0) for m in _PLACE.finditer(text))
