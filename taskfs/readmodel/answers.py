"""Stored answers of the agent views: `inbox`, `prime` (and its hook), MCP's `agent_inbox`
(issue 38: an agent runs them on every turn, and its host runs `prime` at every session start).

Whoever computes one through the full path stores what it printed in
`<git dir>/taskfs/cache/answers/<key>` (sealed, as every file of the cache is:
`taskfs.readmodel.cache`), with what it was derived from: the commit HEAD names (the
ledger as HEAD holds it, as `ls --json` answers from it), the settings file and the tasks folder
(a folder taken away or added by hand), the language, and git's configuration file (a remote
added by hand: `prime` then names sync). `answer` takes those again (HEAD read
from git's files, two `stat` calls) and prints the stored text when they hold, and when no time
has passed that would change a list in it (a holder turning quiet: `until`). Durations in it are
said as of the moment it is printed (`taskfs.readmodel.clock`). Anything else, or a file that
cannot be read, answers None, and the full path runs (and stores it again). Deleting it changes
no answer, and neither does any other damage to it (a file cut short, garbage, a text rewritten
by hand: its seal does not hold). It imports nothing but `os`, `hashlib` and the read model's
leaves.
"""

from __future__ import annotations

import os
import time

from taskfs import __version__
from taskfs.core import layout
from taskfs.readmodel import cache, clock, stamps

TYPE_CHECKING = False  # `typing` costs the hot path 3 ms to import
if TYPE_CHECKING:
    from typing import Any

FORMAT = 1
FOLDER = "answers"


def identity(root: str, git_dir: str, tasks_rel: str) -> tuple[Any, ...]:
    """What an agent view is derived from, besides the question (see the module docstring)."""
    from taskfs import i18n

    return (
        stamps.file_key(f"{root}/{stamps.CONFIG}"),
        tasks_rel,
        stamps.file_key(f"{root}/{tasks_rel}"),
        stamps.head_commit(git_dir),
        i18n.languages(),
        # git's own settings: a remote added or removed changes what `prime` says (its sync).
        stamps.file_key(f"{stamps.common_dir(git_dir)}/config"),
    )


def _name(request: tuple[Any, ...]) -> str:
    import hashlib

    return hashlib.sha1(repr(request).encode(), usedforsecurity=False).hexdigest()


def store(
    root: str,
    git_dir: str,
    request: tuple[Any, ...],
    *,
    before: tuple[Any, ...],
    stamp: int,
    text: str,
    recording: clock.Recording,
) -> None:
    """Remember the answer to `request`, derived from `before` (taken at `stamp`, before the
    ledger was read); nothing is stored when it changed meanwhile, or names no commit."""
    if before[3] is None or identity(root, git_dir, before[1]) != before:
        return
    fields = ((FORMAT, __version__), request, before, stamp, recording.nonce, recording.until, text)
    cache.remember(git_dir, FOLDER, _name(request), (), fields)


def answer(request: tuple[Any, ...], start: str | None = None) -> str | None:
    """The stored answer to `request` in the checkout at `start` (the working directory),
    said as of now; None when it is not there or no longer holds."""
    try:
        found = layout.checkout(start or os.getcwd())
        if found is None:
            return None
        root, git_dir = found
        fields = cache.recall(git_dir, FOLDER, _name(request), ())
        if fields is None:
            return None
        header, asked, before, stamp, nonce, until, text = fields
        if header != (FORMAT, __version__) or asked != request:
            return None
        now = time.time()
        if until is not None and now >= until:
            return None  # a list in it has changed by time alone
        if _newest(before) >= stamp - stamps.racy_margin():
            return None  # a file as young as the stat: its key may hide a change
        if identity(root, git_dir, before[1]) != before:
            return None
        return clock.fill(str(text), str(nonce), now)
    except Exception:  # a file that cannot be read is made again, never trusted
        return None


def where(start: str | None = None) -> tuple[str, str] | None:
    """(root, git dir) of the checkout at `start`, for a caller about to store."""
    return layout.checkout(start or os.getcwd())


def _newest(found: tuple[Any, ...]) -> int:
    latest = 0
    for item in found:
        if type(item) is tuple and len(item) == 4 and all(type(x) is int for x in item):
            latest = max(latest, stamps.newest(item))
    return latest
