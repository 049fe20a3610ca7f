"""`taskfs board` in a terminal: the board a lead keeps open in a shell, drawn with rich, drawn
again as the ledger moves, until `q` (issue 39).

At the top the summary line and the day's counts, then a row per agent (what it holds, what
needs its decision, what is next for it, what it did today, when it last acted), then a column
per state that has tasks, a card per task: its id, its markers, what waits on it for whose
decision, its objective. Done and canceled work shows its latest few.

Every value from the ledger is made inert (`taskfs.core.display.safe`: control characters and
bidirectional overrides shown as escapes) and set as rich `Text`, never read as markup. rich is
imported only here, when the board is drawn.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from taskfs import i18n
from taskfs.core.display import Styled, safe
from taskfs.core.lifecycle import STATES
from taskfs.report.board_cards import LABELS, count_words, decision_word
from taskfs.report.style import TERMINAL_STYLES, age

if TYPE_CHECKING:
    from rich.console import RenderableType

    from taskfs.api.views.board import AgentRow, Board, Card
    from taskfs.errors import Problem

POLL = 0.25  # seconds between looks at the ledger (a stat of HEAD and the index)
REDRAW = 30.0  # seconds: the ages are drawn again even when nothing moved
SHOWN_DONE = 5  # of a column of work that is over, the latest few
OBJECTIVE = 90  # characters of an objective on a card


def _text(value: object, style: str = "") -> Any:
    from rich.text import Text

    return Text(safe(str(value)), style=style)


def render(view: Board, *, title: str, generated: str, live: bool = False) -> RenderableType:
    """The board as one rich renderable."""
    from rich.console import Group
    from rich.text import Text

    head = Text.assemble((safe(title), "bold"), "  ", (f"taskfs board · {safe(generated)}", "dim"))
    if live:
        head.append("   " + i18n.say("live; q quits"), style="green")
    return Group(
        head,
        _summary(view),
        _agents(view),
        _columns(view),
    )


def _summary(view: Board) -> Any:
    from rich.text import Text

    counts = view.counts
    failed = counts.get("failed_open", 0)
    line = Text(
        safe(
            i18n.say(
                "{done} of {total} done, {failed} failed",
                done=counts.get("completed", 0),
                total=counts.get("tasks", 0),
                failed=failed,
            )
        ),
        style="bold red" if failed else "bold green",
    )
    for key, said in count_words(counts).items():
        if counts.get(key):
            style = "red" if key in ("dead", "stale") else "yellow" if key == "needs" else ""
            line.append(" · ")
            line.append(safe(said), style=style)
    if view.periods is not None:
        line.append("\n")
        line.append(
            safe(i18n.say("{count} completed today", count=view.periods.today)), style="green"
        )
        line.append(" · " + safe(i18n.say("{count} this week", count=view.periods.week)))
    return line


def _agents(view: Board) -> Any:
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False, expand=False)
    for word in (
        i18n.say("agent"),
        i18n.say("holds"),
        i18n.say("needs you"),
        i18n.say("next"),
        i18n.say("done today"),
        i18n.say("last acted"),
    ):
        table.add_column(safe(word))
    for row in view.agents:
        table.add_row(*_agent(row, view.now))
    return table


def _agent(row: AgentRow, now: datetime) -> list[Any]:
    held = _text(", ".join(row.held)) if row.held else _text(i18n.say("idle"), "yellow")
    needs = _text(
        f"{len(row.needs)} " + ", ".join(f"{decision_word(d.kind)} {d.task}" for d in row.needs)
        if row.needs
        else "0",
        "bold yellow" if row.needs else "dim",
    )
    last = i18n.say("{age} ago", age=age((now - row.last).total_seconds())) if row.last else "-"
    return [
        _text(row.name, "bold"),
        held,
        needs,
        _text(row.next or "-", "bold" if row.next else "dim"),
        _text(row.done_today),
        _text(last, "dim"),
    ]


def _columns(view: Board) -> Any:
    from rich.console import Group
    from rich.table import Table

    shown = [s for s in STATES if any(c.state == s for c in view.cards)]
    table = Table(box=None, pad_edge=False, expand=True, show_edge=False, padding=(0, 1))
    cells: list[Any] = []
    if view.requests:
        table.add_column(safe(f"{i18n.say('requests')} ({len(view.requests)})"), style="", ratio=1)
        cells.append(Group(*(_request(i, view) for i in view.requests)))
    for state in shown:
        cards = sorted((c for c in view.cards if c.state == state), key=lambda c: c.id)
        table.add_column(
            safe(f"{LABELS[state]} ({len(cards)})"),
            header_style=TERMINAL_STYLES.get(state, "bold") or "bold",
            ratio=1,
        )
        if state in ("completed", "canceled") and len(cards) > SHOWN_DONE:
            latest = sorted(cards, key=lambda c: c.since or view.now)[-SHOWN_DONE:]
            more = _text(i18n.say("and {count} more", count=len(cards) - SHOWN_DONE), "dim")
            cells.append(Group(*(_card(c) for c in latest), more))
        else:
            cells.append(Group(*(_card(c) for c in cards)))
    if not shown and not view.requests:
        return _text(i18n.say("no tasks"), "dim")
    table.add_row(*cells)
    return table


def _card(card: Card) -> Any:
    from rich.console import Group
    from rich.text import Text

    env = card.report.task.envelope
    head = Text()
    head.append("● ", style=TERMINAL_STYLES.get(card.state, ""))
    head.append(safe(card.id), style="bold")
    for marker in card.markers:
        style = {"ready": "green", "dead": "red", "stale": "yellow", "settled": "green"}
        head.append(f" [{safe(i18n.say(marker))}]", style=style.get(marker, "dim"))
    lines: list[Any] = [head]
    if card.settled_by:
        lines.append(_text(f"  {card.id} → {card.settled_by} {i18n.say('done')}", "green"))
    for decision in card.needs:
        lines.append(
            _text(
                "  "
                + i18n.say("needs {agent}", agent=decision.agent)
                + f": {decision_word(decision.kind)} · {decision.command}",
                "yellow",
            )
        )
    objective = " ".join(env.objective.split())
    if len(objective) > OBJECTIVE:
        objective = objective[: OBJECTIVE - 1] + "…"
    lines.append(_text("  " + objective, "dim"))
    return Group(*lines)


def _request(intake: Any, view: Board) -> Any:
    from rich.console import Group

    lines: list[Any] = [_text(intake.id, "bold")]
    for decision in view.request_needs.get(intake.id, ()):
        lines.append(
            _text(
                "  "
                + i18n.say("needs {agent}", agent=decision.agent)
                + f": {decision_word(decision.kind)} · {decision.command}",
                "yellow",
            )
        )
    words = " ".join(" ".join(intake.words()).split())[:OBJECTIVE]
    lines.append(_text("  " + (words or i18n.say("(fields only)")), "dim"))
    return Group(*lines)


def trouble(problems: Sequence[Problem]) -> RenderableType:
    """What the board shows while the ledger cannot be read (caught mid-write, say)."""
    from rich.text import Text

    shown = Text()
    for found in problems:
        shown.append(safe(f"error[{found.code}]: {found.message}") + "\n", style="bold red")
    return shown


def text(renderable: RenderableType, *, colour: bool) -> str:
    """The board drawn once, as text: with rich's colours for a terminal (taskfs's own
    sequences, every value in it made safe first), plain and 160 columns wide for a pipe."""
    import shutil

    from rich.console import Console

    width = shutil.get_terminal_size((160, 45)).columns if colour else 160
    console = Console(
        force_terminal=colour,
        no_color=not colour,
        color_system="auto" if colour else None,
        width=width,
        highlight=False,
        soft_wrap=False,
    )
    with console.capture() as captured:
        console.print(renderable)
    drawn = captured.get().rstrip("\n")
    return Styled(drawn) if colour else drawn


@contextlib.contextmanager
def _keys() -> Iterator[Callable[[float], str]]:
    """Keys typed at the terminal, one at a time, without echo (stdin in cbreak mode); a
    stdin that is not a terminal gives none."""
    fd = sys.stdin.fileno() if sys.stdin is not None else -1
    if fd < 0 or not os.isatty(fd):

        def wait(timeout: float) -> str:
            time.sleep(timeout)
            return ""

        yield wait
        return
    import termios
    import tty

    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd)

    def read(timeout: float) -> str:
        ready, _w, _x = select.select([fd], [], [], timeout)
        if not ready:
            return ""
        return os.read(fd, 32).decode("utf-8", "replace")

    try:
        yield read
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def follow(draw: Callable[[], RenderableType], moved: Callable[[], object]) -> int:
    """Keep the board on the screen, drawn again when `moved()` changes (and every so often,
    for the ages), until `q` (or an interrupt)."""
    from rich.console import Console
    from rich.live import Live

    console = Console(highlight=False)
    seen = moved()
    with (
        _keys() as key,
        Live(
            draw(), console=console, screen=True, auto_refresh=False, redirect_stderr=False
        ) as live,
    ):
        drawn, size = time.monotonic(), console.size
        try:
            while True:
                typed = key(POLL)
                if "q" in typed.lower():
                    return 0
                now = moved()
                stale = time.monotonic() - drawn >= REDRAW
                if now != seen or stale or "r" in typed.lower() or console.size != size:
                    seen, drawn, size = now, time.monotonic(), console.size
                    live.update(draw(), refresh=True)
        except KeyboardInterrupt:
            return 0
