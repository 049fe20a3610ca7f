"""A path the user names for output is written through when it is not a regular file (issue 35,
item 9): a FIFO, a device node or a link to one keeps being what it is; only a regular file (or
nothing) is replaced, atomically; `-` is stdout.

/dev/null itself is never a target here: a link to it, and a device node made in a temporary
folder (where the machine allows `mknod`), stand in for it."""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import submit, taskfs


def _reading(path: Path) -> tuple[threading.Thread, list[bytes]]:
    """A reader of the FIFO at `path`, in a thread: what it read lands in the list."""
    got: list[bytes] = []

    def read() -> None:
        with open(path, "rb") as handle:
            got.append(handle.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader, got


def _release(fifo: Path) -> None:
    """Let a reader still waiting for a writer (nothing was written) see the end."""
    with contextlib.suppress(OSError):  # no reader waits: it read what was written
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "board.fifo"
    os.mkfifo(path)
    return path


def _board(path: Path) -> list[str]:
    return ["board", "--html", str(path)]


def _watch_log(path: Path) -> list[str]:
    return ["watch", "--once", "--log", str(path)]


COMMANDS: dict[str, Callable[[Path], list[str]]] = {"board": _board, "watch": _watch_log}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_fifo_is_written_through_and_stays_a_fifo(
    repo: Path, tmp_path: Path, command: str
) -> None:
    submit(repo, id="one")
    (tmp_path / "drop.yaml").write_text("")  # nothing for the watcher; it logs its pass anyway
    fifo = _fifo(tmp_path)
    reader, got = _reading(fifo)
    result = (
        taskfs(*COMMANDS[command](fifo), "-v")
        if command == "watch"
        else taskfs(*COMMANDS[command](fifo))
    )
    assert result.code == 0, result.stdout + result.stderr
    _release(fifo)
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert got, "the reader got nothing"
    assert got[0], "the reader got nothing"
    if command == "board":
        assert got[0].startswith(b"<!DOCTYPE html>")


def test_a_link_to_dev_null_stays_a_link_and_dev_null_stays_a_device(
    repo: Path, tmp_path: Path
) -> None:
    submit(repo, id="one")
    link = tmp_path / "null-link"
    link.symlink_to("/dev/null")
    result = taskfs("board", "--html", str(link), "--json")
    assert result.code == 0, result.stdout
    assert os.readlink(link) == "/dev/null"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not list(tmp_path.glob(".null-link.*"))  # no temporary file left beside it


def test_a_device_node_is_written_through(repo: Path, tmp_path: Path) -> None:
    node = tmp_path / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the device /dev/null is
    except PermissionError:
        pytest.skip("this machine does not let the test make a device node")
    submit(repo, id="one")
    assert taskfs("board", "--html", str(node)).code == 0
    assert stat.S_ISCHR(os.lstat(node).st_mode)


def test_a_link_to_a_regular_file_replaces_the_file_and_keeps_the_link(
    repo: Path, tmp_path: Path
) -> None:
    submit(repo, id="one")
    real = tmp_path / "real.html"
    real.write_text("old")
    link = tmp_path / "board.html"
    link.symlink_to(real)
    assert taskfs("board", "--html", str(link)).code == 0
    assert link.is_symlink()
    assert real.read_text().startswith("<!DOCTYPE html>")


def test_a_regular_file_is_replaced_whole_and_a_folder_is_refused(
    repo: Path, tmp_path: Path
) -> None:
    submit(repo, id="one")
    page = tmp_path / "board.html"
    page.write_text("x" * 10_000_000)
    assert taskfs("board", "--html", str(page)).code == 0
    assert page.read_text().startswith("<!DOCTYPE html>")
    folder = tmp_path / "folder"
    folder.mkdir()
    refused = taskfs("board", "--html", str(folder), "--json")
    assert (refused.code, refused.codes) == (1, ["file_unwritable"])
    assert folder.is_dir()


def test_the_watchers_log_to_dash_is_stdout(repo: Path, tmp_path: Path) -> None:
    result = taskfs("watch", "--once", "--log", "-", "-v")
    assert result.code == 0, result.stderr
    assert result.stdout
    assert not (repo / "-").exists()
