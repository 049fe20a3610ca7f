"""Output for a person at a terminal: tables and timelines, coloured by state.

Used only when stdout is a terminal; under a pipe the plain text renderers answer, and `--json`
never comes here. `rich` is imported inside the functions so that pipes, scripts and `--json`
do not pay for loading it. `NO_COLOR` is honoured (by rich).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from taskfs.core.display import Styled, safe
from taskfs.report.style import TERMINAL_STYLES, short_time

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from taskfs.api.views.reports import TimelineRow


def is_terminal() -> bool:
    """Whether people are reading: stdout is a terminal (and TERM is not `dumb`)."""
    try:
        return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


def _console() -> Console:
    from rich.console import Console

    width = shutil.get_terminal_size((100, 24)).columns
    return Console(force_terminal=True, width=width, highlight=False, soft_wrap=False)


def _render(renderable: RenderableType) -> str:
    """The renderable drawn with rich's colours; every value in it was made safe (`_cell`)."""
    console = _console()
    with console.capture() as captured:
        console.print(renderable)
    return Styled(captured.get().rstrip("\n"))


def _cell(value: str) -> Any:
    """A value as a table shows it: escaped (`display.safe`), and never read as rich markup."""
    from rich.text import Text

    return Text(safe(value))


def _styled(value: str) -> Any:
    from rich.text import Text

    return Text(safe(value), style=TERMINAL_STYLES.get(value, ""))


def priority_mark(row: Mapping[str, Any]) -> str:
    """A row's priority as beads writes it (`P0`), or nothing when its envelope has none."""
    return f"P{row['priority']}" if row.get("priority") is not None else ""


def task_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """`ls` and `ready`: one row per task."""
    from rich.table import Table

    if not rows:
        return "no tasks"
    table = Table(box=None, header_style="bold", pad_edge=False)
    marked = any("priority" in row or "labels" in row for row in rows)
    names = ("id", "state", "from", "to", "holder", "context") + (("", "labels") if marked else ())
    for name in names:
        table.add_column(name, no_wrap=name in ("id", "state"))
    for row in rows:
        cells = [
            _cell(row["id"]),
            _styled(row["state"]),
            _cell(row.get("from") or "-"),
            _cell(row.get("to") or "-"),
            _cell(row.get("holder") or "-"),
            _cell(row.get("contextID") or ""),
        ]
        if marked:
            cells += [_cell(priority_mark(row)), _cell(",".join(row.get("labels", ())))]
        table.add_row(*cells)
    return _render(table)


LOG_TAIL_LINES = 5  # of each stream of a failing run, in `log`: the reason, not the whole log


def row_output_lines(row: TimelineRow) -> list[str]:
    """A failing run's last lines under its row in `log` (the JSON row has the longer tail)."""
    from taskfs.api.views.checks import said_lines, tail

    said = {name: tail(text, lines=LOG_TAIL_LINES) for name, text in (row.output or {}).items()}
    return said_lines(said)


def timeline(task_id: str, state: str, rows: Iterable[TimelineRow]) -> str:
    """`log`: what happened to a task, oldest first."""
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column("at", style="dim", no_wrap=True)
    table.add_column("mark", no_wrap=True)
    table.add_column("what", no_wrap=True)
    table.add_column("who")
    table.add_column("detail")
    marks = {"transition": "●", "evidence": "▶", "message": "✉"}
    for row in rows:
        what = _styled(row.what)
        if row.superseded:
            lost = f"superseded by {row.superseded_by}" if row.superseded_by else "superseded"
            what = Text(safe(f"{row.what} ({lost})"), style="strike dim")
        said = "\n".join(row_output_lines(row))
        table.add_row(
            _cell(short_time(row.at, seconds=True)),
            marks.get(row.kind, "·"),
            what,
            _cell(row.actor),
            _cell(row.detail + ("\n" + said if said else "")),
        )
    title = Text.assemble((safe(task_id), "bold"), "  ", _styled(state))
    return Styled(_render(title) + "\n" + _render(table))
