"""What the nudge hook remembers between tool calls, per checkout and agent, under the git
directory (`.git/taskfs/nudge/<agent>.json`, never committed): when it last reminded the agent
of each task, and when the next reminder can fall due for the ledger as it last read it.

The hook runs after every tool call, so it reads the ledger only when it could say something:
when HEAD or the settings changed since it last looked (a claim, a message, a pull), or when
the next reminder is due. Otherwise it answers from this file in milliseconds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from taskfs.readmodel import nudge_memory
from taskfs.store import fs
from taskfs.store.git import Git


@dataclass
class Memory:
    inputs: str = ""  # stored as "fingerprint" (older memories stay readable)
    due: float | None = None
    reminded: dict[str, float] = field(default_factory=dict)


def memory_path(git: Git, agent: str) -> Path:
    return Path(nudge_memory.memory_path(str(git.git_dir), agent))


def answer_inputs(git: Git, root: Path) -> str:
    """What the answer depends on besides the clock: HEAD and the settings file, as the hook
    reads them without the store (`taskfs.readmodel.nudge_memory`); empty when that cannot
    tell, so that nothing is taken on trust."""
    return nudge_memory.inputs(str(root), str(git.git_dir)) or ""


def load(path: Path) -> Memory:
    try:
        data = json.loads(path.read_bytes())
        reminded = {str(k): float(v) for k, v in dict(data.get("reminded") or {}).items()}
        due = data.get("due")
        when = float(due) if due is not None else None
        return Memory(str(data.get("fingerprint", "")), when, reminded)
    except (OSError, ValueError, TypeError, AttributeError):
        return Memory()


def save(path: Path, memory: Memory) -> None:
    data = {"fingerprint": memory.inputs, "due": memory.due, "reminded": memory.reminded}
    fs.replace(path, (json.dumps(data, sort_keys=True) + "\n").encode(), 0o644)
