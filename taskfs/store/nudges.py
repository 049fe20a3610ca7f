"""What the nudge hook remembers between tool calls, per checkout and agent, under the git
directory (`.git/taskfs/cache/nudge/<agent>`, sealed, never committed:
`taskfs.readmodel.nudge_memory`): when it last reminded the agent of each task, and when the
next reminder can fall due for the ledger as it last read it.

The hook runs after every tool call, so it reads the ledger only when it could say something:
when HEAD or the settings changed since it last looked (a claim, a message, a pull), or when
the next reminder is due. Otherwise it answers from this file in milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from taskfs.readmodel import nudge_memory
from taskfs.store.git import Git


@dataclass
class Memory:
    inputs: str = ""  # what the last answer rested on (`nudge_memory.inputs`)
    due: float | None = None
    reminded: dict[str, float] = field(default_factory=dict)


def recall(git: Git, agent: str) -> Memory:
    """What the hook remembers for `agent`; nothing when no memory unseals."""
    found = nudge_memory.recall(str(git.git_dir), agent)
    return Memory() if found is None else Memory(*found)


def remember(git: Git, agent: str, memory: Memory) -> None:
    nudge_memory.remember(str(git.git_dir), agent, memory.inputs, memory.due, memory.reminded)


def answer_inputs(git: Git, root: Path) -> str:
    """What the answer depends on besides the clock: HEAD and the settings file, as the hook
    reads them without the store (`taskfs.readmodel.nudge_memory`); empty when that cannot
    tell, so that nothing is taken on trust."""
    return nudge_memory.inputs(str(root), str(git.git_dir)) or ""
