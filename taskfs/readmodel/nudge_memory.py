"""What the nudge hook remembers, read without the store: whether anything could be due.

The hook (`taskfs nudge --hook`) runs after every edit an agent makes. Its memory
(`<git dir>/taskfs/cache/nudge/<agent>`, written by `taskfs.store.nudges`, sealed as every file
of the cache is: `taskfs.readmodel.cache`) says what the last answer rested on (`inputs`: HEAD's
commit and the settings file), when the next reminder can fall due, and when it last reminded
the agent of each task. While the first two hold, there is nothing to say: this module answers
that from the memory, HEAD read from git's files and one `stat`, importing nothing but `os` and
the read model's leaves (issue 38: the hook was 0.3-1.0 s on a loaded machine). A memory that
does not unseal (deleted, cut short, rewritten by hand) is none: the hook reads the ledger, as
on a fresh clone (issue 36).
"""

from __future__ import annotations

import os
import time

from taskfs.core.layout import CONFIG_PATH
from taskfs.readmodel import cache, stamps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FOLDER = "nudge"


def memory_path(git_dir: str, agent: str) -> str:
    return cache.path(git_dir, FOLDER, agent)


def recall(git_dir: str, agent: str) -> tuple[str, float | None, dict[str, float]] | None:
    """(inputs, when a reminder is next due, when each task was last reminded of) as the
    memory of `agent` holds them; None when there is none that unseals."""
    found: Any = cache.recall(git_dir, FOLDER, agent, ())
    if type(found) is not tuple or len(found) != 3:
        return None
    inputs, due, reminded = found
    if type(inputs) is not str or type(reminded) is not dict:
        return None
    if due is not None and type(due) is not float:
        return None
    return inputs, due, {str(k): float(v) for k, v in reminded.items()}


def remember(
    git_dir: str, agent: str, inputs: str, due: float | None, reminded: dict[str, float]
) -> None:
    cache.remember(git_dir, FOLDER, agent, (), (inputs, due, dict(reminded)))


def inputs(root: str, git_dir: str) -> str | None:
    """What a nudge's answer depends on besides the clock: HEAD's commit and the settings
    file; None when HEAD cannot be read from git's files (then nothing is taken on trust)."""
    head = stamps.head_commit(git_dir)
    if head is None:
        return None
    try:
        stat = os.stat(f"{root}/{CONFIG_PATH}")
        settings = f"{stat.st_mtime_ns}:{stat.st_size}"
    except OSError:
        settings = "-"
    return f"{head}:{settings}"


def nothing_due(root: str, git_dir: str, agent: str) -> bool:
    """Whether the memory says no reminder can be due now and nothing it rests on changed."""
    now_inputs = inputs(root, git_dir)
    if now_inputs is None:
        return False
    found = recall(git_dir, agent)
    if found is None:
        return False
    remembered, due, _reminded = found
    return remembered == now_inputs and (due is None or time.time() < due)
