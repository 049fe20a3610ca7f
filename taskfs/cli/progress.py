"""Progress bars on stderr for a person watching a long command (`taskfs.core.progress`).

`act` installs one (`reporter`) only when stderr is a terminal (and TERM is not `dumb`) and the
command was not asked for `--json`: under a pipe, in a script or for a model, nothing extra is
printed. rich draws the bars; it is imported when a step is first shown, so a command whose
work is short never loads it. The bars are transient: when the work is done they make way
for the answer.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from taskfs.core.display import safe

if TYPE_CHECKING:
    from taskfs.core.progress import Reporter


def watched() -> bool:
    """Whether a person sees stderr: a terminal that is not `dumb`."""
    try:
        return sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


def reporter(as_json: bool) -> Reporter | None:
    """The reporter for a command: None under `--json` or when nobody watches stderr."""
    if as_json or not watched():
        return None
    return Bars()


class Bars:
    """rich's progress display on stderr; steps nest (a read of the ledger inside an archive),
    each with its own bar, and the display goes away with the last one."""

    def __init__(self) -> None:
        self._progress: Any = None
        self._steps: list[Any] = []

    def begin(self, label: str, total: int | None) -> None:
        if self._progress is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            console = Console(stderr=True, highlight=False)
            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            self._progress.start()
        self._steps.append(self._progress.add_task(safe(label), total=total))
        self._progress.refresh()  # drawn now, even when the step ends before the next tick

    def advance(self, count: int = 1) -> None:
        if self._progress is not None and self._steps:
            self._progress.advance(self._steps[-1], count)

    def end(self) -> None:
        if self._progress is None or not self._steps:
            return
        self._progress.refresh()  # the step as it ended, before it makes way
        self._progress.remove_task(self._steps.pop())
        if not self._steps:
            self._progress.stop()
            self._progress = None
