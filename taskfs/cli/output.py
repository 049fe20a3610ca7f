"""Printing a library call's answer or its refusal, and the exit status: one place for all.

Everything printed goes through `taskfs.core.display.safe`: a control sequence in a peer's text
is shown escaped, never obeyed by the terminal; `--json` stays the same JSON.

Kept free of click so that the fast path of the hottest commands (`taskfs.cli.fast`) and the
click commands print exactly the same documents.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from taskfs.core.display import safe
from taskfs.errors import Problem, TaskfsError, problem

if TYPE_CHECKING:
    from taskfs.api.context import Repository

T = TypeVar("T")
# A renderer answers (JSON document, text for people). The text may be a function, called only
# when it is printed, so that `--json` never pays for rendering tables.
Renderer = Callable[[T], tuple[dict[str, Any], "str | Callable[[], str]"]]


def emit_json(doc: dict[str, Any]) -> None:
    sys.stdout.write(safe(json.dumps(doc, ensure_ascii=False)) + "\n")


def act(as_json: bool, call: Callable[[], T], show: Renderer[T]) -> int:
    """Call the library; print its answer or its refusal; return the exit status. Long work
    shows its progress on stderr while a person watches (`taskfs.cli.progress`)."""
    from taskfs.cli.progress import reporter
    from taskfs.core.progress import reporting

    try:
        with reporting(reporter(as_json)):
            result = call()
    except TaskfsError as exc:
        refuse(as_json, exc.problems)
        return 2 if "usage" in exc.codes else 1
    except Exception as exc:
        if os.environ.get("TASKFS_DEBUG"):
            import traceback

            traceback.print_exc()
        reason = f"{type(exc).__name__}: {exc}"
        return refuse(as_json, [problem("internal_error", reason=reason)])
    doc, text = show(result)
    if as_json:
        emit_json(doc)
    else:
        shown = text() if callable(text) else text
        if shown:
            sys.stdout.write(safe(shown) + "\n")
    return 0 if doc.get("ok", True) else 1


def refuse(as_json: bool, problems: Sequence[Problem]) -> int:
    from taskfs.api.tasks.suggest import explain

    problems = explain(problems)
    if as_json:
        from taskfs.core.shapes import refusal

        emit_json(refusal(problems))
    for found in problems:
        where = found.data.get("source") or found.data.get("path")
        prefix = f"{where}: " if where else ""
        sys.stderr.write(safe(f"error[{found.code}]: {prefix}{found.message}") + "\n")
    return 1


def open_repo() -> Repository:
    """The checkout the command runs in, opened the one way in (`taskfs.api.context`)."""
    from taskfs.api import context

    return context.open().repo


def repo_if_any() -> Repository | None:
    """The checkout the command runs in, or None outside one (or in one taskfs cannot open)."""
    try:
        return open_repo()
    except TaskfsError:
        return None
