"""What to do next, added to a refusal by the adapters: the nearest task id to one not found.

The library raises `task_not_found` where it looks a task up, without the list of tasks at
hand; the adapters (the CLI's `refuse`, the MCP server's `answer`) pass every refusal through
`explain`, which looks the ids up only when a refusal needs them.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

from taskfs.errors import Problem, problem


def nearest(wanted: str, known: Sequence[str]) -> str | None:
    """The known id `wanted` most likely meant: the same but for case, else the closest."""
    lowered = wanted.lower()
    for task_id in known:
        if task_id.lower() == lowered:
            return task_id
    close = difflib.get_close_matches(lowered, list(known), n=1, cutoff=0.6)
    return close[0] if close else None


def task_ids(start: Path) -> list[str]:
    from taskfs.store.repository import Repository

    try:
        repo = Repository.open(start)
        return sorted(repo.task_ids())
    except Exception:  # a refusal is being printed: never fail while helping
        return []


def explain(problems: Sequence[Problem], start: Path | None = None) -> list[Problem]:
    """`problems`, each `task_not_found` naming the nearest existing id when there is one."""
    if not any(p.code == "task_not_found" and "suggestion" not in p.data for p in problems):
        return list(problems)
    known = task_ids(start or Path.cwd())
    out = []
    for found in problems:
        wanted = found.data.get("id")
        near = None
        if found.code == "task_not_found" and isinstance(wanted, str):
            near = nearest(wanted, known)
        if near is None or near == wanted or "suggestion" in found.data:
            out.append(found)
            continue
        data = {k: v for k, v in found.data.items() if k != "id"}
        near_text = f" (did you mean {near!r}?)"
        out.append(
            problem(
                "task_not_found",
                field=found.field,
                id=wanted,
                suggestion=near,
                near_text=near_text,
                **data,
            )
        )
    return out


def malformed(value: object, start: Path | None = None) -> Problem:
    """`invalid_task_id` for an id a command or tool was given (the doors refuse it before
    any lookup), naming the existing id it most likely meant (`T-FREE`: `t-free`)."""
    near = nearest(value, task_ids(start or Path.cwd())) if isinstance(value, str) else None
    if near is None:
        return problem("invalid_task_id", value=value)
    return problem(
        "invalid_task_id",
        value=value,
        suggestion=near,
        near_text=f" (did you mean {near!r}? `taskfs ls` lists the tasks)",
    )
