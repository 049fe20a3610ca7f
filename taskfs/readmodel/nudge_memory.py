"""What the nudge hook remembers, read without the store: whether anything could be due.

The hook (`taskfs nudge --hook`) runs after every edit an agent makes. Its memory
(`<git dir>/taskfs/nudge/<agent>.json`, written by `taskfs.store.nudges`) says what the last
answer rested on (`inputs`: HEAD's commit and the settings file) and when the next reminder can
fall due. While both hold, there is nothing to say: this module answers that from the memory
file, HEAD read from git's files and one `stat`, importing nothing but `os`, `json` and the
read model's leaves (issue 38: the hook was 0.3-1.0 s on a loaded machine).
"""

from __future__ import annotations

import json
import os
import time

from taskfs.core.layout import CONFIG_PATH, STATE_DIR
from taskfs.readmodel import stamps


def memory_path(git_dir: str, agent: str) -> str:
    return f"{git_dir}/{STATE_DIR}/nudge/{agent}.json"


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
    try:
        with open(memory_path(git_dir, agent), "rb") as handle:
            data = json.loads(handle.read())
        due = data.get("due")
        remembered = str(data.get("fingerprint", ""))
    except (OSError, ValueError, AttributeError):
        return False
    return remembered == now_inputs and (due is None or time.time() < float(due))
