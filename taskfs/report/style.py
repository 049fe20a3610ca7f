"""The colours of the states, shared by the terminal, the graph and the board."""

from __future__ import annotations

# (fill, text) per state: open states cool, completed green, the ways of ending badly warm.
STATE_COLOURS: dict[str, tuple[str, str]] = {
    "intake": ("#fef9c3", "#713f12"),  # a request, not yet a task (contract section 12)
    "submitted": ("#e2e8f0", "#1e293b"),
    "working": ("#bfdbfe", "#1e3a8a"),
    "input_required": ("#fde68a", "#78350f"),
    "auth_required": ("#e9d5ff", "#581c87"),
    "completed": ("#bbf7d0", "#14532d"),
    "failed": ("#fecaca", "#7f1d1d"),
    "canceled": ("#e5e7eb", "#4b5563"),
    "rejected": ("#fed7aa", "#7c2d12"),
}
MISSING_COLOURS = ("#ffffff", "#6b7280")

# The same idea in the 16 terminal colours rich knows by name.
TERMINAL_STYLES: dict[str, str] = {
    "submitted": "white",
    "working": "bold blue",
    "input_required": "bold yellow",
    "auth_required": "bold magenta",
    "completed": "bold green",
    "failed": "bold red",
    "canceled": "dim",
    "rejected": "red",
    "pass": "bold green",
    "fail": "bold red",
    "invalid": "bold red",
}


def state_colours(state: str | None) -> tuple[str, str]:
    return STATE_COLOURS.get(state or "", MISSING_COLOURS)


def short_time(at: str, *, seconds: bool = False) -> str:
    """`2026-05-01T12:30:45.123456Z` as `2026-05-01 12:30` (or `12:30:45`): ledger times are
    UTC, to the microsecond; people need the minute. Anything else is shown as it is."""
    if len(at) >= 16 and at[10] == "T" and at[4] == at[7] == "-":
        return at[:10] + " " + at[11 : 19 if seconds else 16]
    return at


def duration(seconds: float) -> str:
    """A run's length as people read it: `0.3 s`, `12 s`, `2 min 5 s`, `1 h 4 min`."""
    from taskfs import i18n

    if seconds < 0.05:
        return i18n.say("<0.1 s")
    if seconds < 10:
        return i18n.say("{seconds} s", seconds=f"{round(seconds, 1):g}")
    whole = round(seconds)
    if whole < 60:
        return i18n.say("{seconds} s", seconds=whole)
    minutes, rest = divmod(whole, 60)
    if minutes < 60:
        if rest:
            return i18n.say("{minutes} min {seconds} s", minutes=minutes, seconds=rest)
        return i18n.say("{minutes} min", minutes=minutes)
    hours, minutes = divmod(minutes, 60)
    if minutes:
        return i18n.say("{hours} h {minutes} min", hours=hours, minutes=minutes)
    return i18n.say("{hours} h", hours=hours)


def age(seconds: float) -> str:
    """How long ago, or for how long, as people say it: `<1 min`, `12 min`, `5 h`, `3 d`."""
    from taskfs import i18n

    if seconds < 60:
        return i18n.say("<1 min")
    minutes = int(seconds // 60)
    if minutes < 60:
        return i18n.say("{minutes} min", minutes=minutes)
    hours = int(minutes // 60)
    if hours < 48:
        return i18n.say("{hours} h", hours=hours)
    return i18n.say("{days} d", days=hours // 24)
