"""`taskfs board`: the lead's board, three ways (issue 39).

- In a terminal, `taskfs board` keeps the board on the screen and draws it again as the ledger
  moves, until `q` (`taskfs.report.board_terminal`); under a pipe, or with `--once`, it prints
  it once; `--json` gives it as data.
- `--html FILE` writes it as one self-contained page (`taskfs.report.board`).
- `--serve` serves that page, live: it follows the ledger (`taskfs.report.board_live`), on
  loopback unless tokens are configured, behind the HTTP doors' guard, read-only.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from taskfs import i18n
from taskfs.cli.group import cli, json_option, listen_options
from taskfs.cli.output import act, open_repo, refuse
from taskfs.core import shapes
from taskfs.core.display import safe
from taskfs.errors import TaskfsError, fail

if TYPE_CHECKING:
    from taskfs.api.context import Repository
    from taskfs.api.views.board import Board

Shown = tuple[dict[str, Any], "str | Callable[[], str]"]
PORT = 9472


@cli.command()
@click.option(
    "--html",
    "target",
    metavar="FILE",
    help="Write the board as one self-contained HTML page to FILE (- for stdout).",
)
@click.option(
    "--serve",
    is_flag=True,
    help="Serve the board as a web page that updates itself as the ledger moves (read-only; "
    "--host, --port).",
)
@listen_options(PORT)
@click.option("--once", is_flag=True, help="Draw the board in the terminal once and exit.")
@click.option(
    "--repo-url",
    metavar="URL",
    help="The repository's web address (https://github.com/OWNER/NAME): commits and evidence "
    "files link to it.",
)
@click.option(
    "--label",
    "labels",
    multiple=True,
    metavar="LABEL",
    help="Only tasks carrying this label (repeated: every one of them).",
)
@json_option
def board(  # noqa: PLR0917 (click passes the options as arguments)
    target: str | None,
    serve: bool,
    host: str,
    port: int,
    once: bool,
    repo_url: str | None,
    labels: tuple[str, ...],
    as_json: bool,
) -> int:
    """What is stuck, what waits for whose decision, who is idle, what is next: a live board."""
    from click.core import ParameterSource

    where = click.get_current_context().get_parameter_source
    try:
        if target is not None and serve:
            raise fail("usage", reason="--html and --serve: choose one")
        if not serve and any(where(n) is not ParameterSource.DEFAULT for n in ("host", "port")):
            raise fail("usage", reason="--host and --port are where --serve listens: add --serve")
        if once and target is not None:
            raise fail(
                "usage", reason="--once draws the board in the terminal: drop --html/--serve"
            )
        if serve and (as_json or once):
            raise fail("usage", reason="--serve serves a page until interrupted: no --json, --once")
        if as_json and target == "-":
            raise fail(
                "usage", reason="--json needs --html FILE: with --html - the page is the output"
            )
    except TaskfsError as exc:
        refuse(as_json, exc.problems)
        return 2
    global _labels  # noqa: PLW0603 - one command line at a time: every drawing filters alike
    _labels = labels
    if serve:
        return _serve(host, port, repo_url)
    if target is not None:
        return _html(target, repo_url, as_json)
    return _terminal(once, as_json)


_labels: tuple[str, ...] = ()  # `--label`: the tasks every drawing of this board shows


def _board(repo: Repository) -> Board:
    """The board of `repo`, filtered as the command line asks (`--label`)."""
    from taskfs.api.views import board as board_view

    return board_view.board(repo, labels=_labels)


def _base(repo_url: str | None) -> str | None:
    from taskfs.api.views.board import repository_url

    return repository_url(repo_url) if repo_url is not None else None


def _generated(view: Board) -> str:
    return view.now.strftime("%Y-%m-%d %H:%M UTC")


def _html(target: str, repo_url: str | None, as_json: bool) -> int:
    from taskfs.api.views import board as board_view
    from taskfs.report import board as board_html

    def call() -> dict[str, Any]:
        base = _base(repo_url)
        repo = open_repo()
        view = _board(repo)
        page = board_html.page(
            view, title=repo.root.name, generated=_generated(view), repo_url=base
        )
        if target == "-":
            sys.stdout.write(safe(page))
        else:
            _write(Path(target), page.encode())
        return {"path": target, **board_view.document(view)}

    def show(result: dict[str, Any]) -> Shown:
        text = (
            ""
            if target == "-"
            else i18n.say("wrote {path}: {count} tasks", path=target, count=result["tasks"])
        )
        return shapes.document(True, **result), text

    return act(as_json, call, show)


def _terminal(once: bool, as_json: bool) -> int:
    from taskfs.api.views import board as board_view
    from taskfs.report import board_terminal
    from taskfs.report.terminal import is_terminal

    colour = is_terminal() and not os.environ.get("NO_COLOR")
    if as_json or once or not is_terminal():

        def call() -> tuple[Repository, Board]:
            repo = open_repo()
            return repo, _board(repo)

        def show(found: tuple[Repository, Board]) -> Shown:
            repo, view = found
            drawn = board_terminal.render(view, title=repo.root.name, generated=_generated(view))
            doc = shapes.document(True, **board_view.document(view))
            return doc, lambda: board_terminal.text(drawn, colour=colour)

        return act(as_json, call, show)
    try:
        repo = open_repo()
        # A ledger that cannot be read is refused before the screen is taken over.
        first = [_board(repo)]
    except TaskfsError as exc:
        return refuse(False, exc.problems)
    root = repo.root

    def draw() -> Any:
        try:
            view = first.pop() if first else _board(_open(root))
        except TaskfsError as exc:
            return board_terminal.trouble(exc.problems)
        return board_terminal.render(view, title=root.name, generated=_generated(view), live=True)

    return board_terminal.follow(draw, lambda: board_view.mark(repo))


def _open(root: Path) -> Repository:
    from taskfs.api import context

    return context.open(root).repo


def _serve(host: str, port: int, repo_url: str | None) -> int:
    from taskfs.api.doors.tokens import load_tokens
    from taskfs.api.views import board as board_view
    from taskfs.report import board as board_html
    from taskfs.report import board_live

    try:
        base = _base(repo_url)
        repo = open_repo()
        tokens = load_tokens(repo.root)
    except TaskfsError as exc:
        refuse(False, exc.problems)
        return 2 if "usage" in exc.codes else 1
    root = repo.root

    def build() -> dict[str, Any]:
        view = _board(_open(root))
        return board_html.parts(view, generated=_generated(view), repo_url=base)

    def page(parts: dict[str, Any] | None) -> str:
        return board_html.shell(parts, title=root.name, live=board_live.EVENTS.lstrip("/"))

    publisher = board_live.Publisher(build, lambda: board_view.mark(repo))
    try:
        return board_live.serve(publisher, page, tokens, host, port)
    except TaskfsError as exc:
        refuse(False, exc.problems)
        return 2 if "usage" in exc.codes else 1


def _write(path: Path, data: bytes) -> None:
    from taskfs.api.context import write_output

    if not os.path.isdir(path.parent):  # False, not an error, for a name too long to look at
        # A folder that is not there is a typo more often than a wish: say so, make nothing.
        raise fail("file_unwritable", path=str(path), reason=os.strerror(errno.ENOENT))
    try:
        # A FIFO, /dev/null or a link to either is written through, never replaced.
        write_output(path, data, mode=0o644)
    except OSError as exc:
        raise fail("file_unwritable", path=str(path), reason=exc.strerror or str(exc)) from None
