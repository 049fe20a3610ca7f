"""`taskfs watch`: the watcher's command line. Its log goes to stderr (or --log FILE); it
prints nothing on stdout."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import TextIO

import click

from taskfs.cli.group import cli
from taskfs.cli.output import refuse
from taskfs.errors import TaskfsError, fail


@cli.command()
@click.option("--once", is_flag=True, help="One pass over everything pending, then exit.")
@click.option(
    "--log", "log_file", metavar="FILE", help="Append the log to FILE (- stdout), not stderr."
)
@click.option("-v", "--verbose", is_flag=True, help="Also log each pass and what woke it.")
@click.option(
    "--settle",
    type=click.FloatRange(0, 60),
    default=0.25,
    show_default=True,
    help="Seconds between the two looks that must find a file unchanged before it is read.",
)
@click.option(
    "--debounce",
    type=click.FloatRange(0, 10),
    default=0.1,
    show_default=True,
    help="Quiet seconds after the last event before a pass.",
)
@click.option(
    "--rescan",
    type=click.FloatRange(0.1, 86400),
    default=30.0,
    show_default=True,
    help="Seconds between full rescans (events are only hints).",
)
@click.option(
    "--batch",
    type=click.IntRange(1, 10_000),
    default=200,
    show_default=True,
    help="Dropped files submitted per commit at most.",
)
@click.option("--polling", is_flag=True, help="Poll the folder instead of using inotify.")
def watch(
    *,
    once: bool,
    log_file: str | None,
    verbose: bool,
    settle: float,
    debounce: float,
    rescan: float,
    batch: int,
    polling: bool,
) -> int:
    """Submit envelopes dropped into tasks/, refuse bad ones with a report beside them, and
    answer check requests that the runner policy allows."""
    from taskfs.api import context
    from taskfs.watch.log import ActionLog
    from taskfs.watch.loop import Options, watch
    from taskfs.watch.reconcile import Settings

    options = Options(
        once=once,
        settings=Settings(settle=settle, batch=batch),
        debounce=debounce,
        rescan=rescan,
        polling=polling,
    )
    try:
        with _log_stream(log_file) as stream:
            return watch(context.open(), ActionLog(stream, verbose=verbose), options)
    except TaskfsError as exc:
        return refuse(False, exc.problems)


@contextlib.contextmanager
def _log_stream(path: str | None) -> Iterator[TextIO | None]:
    if path is None:
        yield None
        return
    if path == "-":
        yield sys.stdout  # the log is the output (`watch` prints nothing else there)
        return
    try:
        # Appending writes through a FIFO or a device as it is, and never replaces a file.
        handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise fail("file_unwritable", path=path, reason=exc.strerror or str(exc)) from None
    with handle:
        yield handle
