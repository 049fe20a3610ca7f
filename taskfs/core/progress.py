"""Progress of long work, as a hook: the code that does the work says what it is doing and how
far it got; whoever runs it decides whether anyone is shown (issue 39).

`taskfs archive` of tens of thousands of tasks, a `new` of a thousand envelopes and the first
read of a large ledger into the read model take seconds to minutes. The command line installs
a reporter (`reporting`) only when a person watches (stderr is a terminal, and not under
`--json`); the work opens a `step` wherever it loops, and with no reporter installed a step
costs one context-variable read. A step of fewer than `SHOWN_FROM` items is never shown: the
work it counts is quick, and a bar that flashes by is noise.

Values in, nothing out: no clock, no terminal here. The reporter (`taskfs.cli.progress`, on
rich) draws.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

TYPE_CHECKING = False  # `typing` costs the listings' hot path 3 ms; type checkers know this
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Protocol

    Advance = Callable[[int], None]

    class Reporter(Protocol):
        def begin(self, label: str, total: int | None) -> None:
            """A step starts: `label` for people, `total` items (None: not counted)."""

        def advance(self, count: int = 1) -> None:
            """`count` more items of the latest step are done."""

        def end(self) -> None:
            """The latest step is over."""


SHOWN_FROM = 100  # items; a step counting fewer is not shown

_current: ContextVar[Reporter | None] = ContextVar("taskfs_progress", default=None)


@contextmanager
def reporting(reporter: Reporter | None) -> Iterator[None]:
    """Report the steps of the work done inside to `reporter` (None: to nobody)."""
    token = _current.set(reporter)
    try:
        yield
    finally:
        _current.reset(token)


def _ignored(count: int = 1) -> None:
    return None


@contextmanager
def step(label: Callable[[], str], size: int, *, counted: bool = True) -> Iterator[Advance]:
    """A step of long work over `size` items: yields the function to call as items get done.
    `counted=False`: the step is one piece of work on all of them at once (git committing
    them), shown without a count. `label` is called only when someone is shown the step (its
    text goes through i18n there)."""
    reporter = _current.get()
    if reporter is None or size < SHOWN_FROM:
        yield _ignored
        return
    reporter.begin(label(), size if counted else None)
    try:
        yield reporter.advance
    finally:
        reporter.end()
