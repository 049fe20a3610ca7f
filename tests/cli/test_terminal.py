"""Output for people: tables and timelines with colour on a terminal, plain text under a pipe,
and `--json` clean everywhere. The terminal is a real pseudo-terminal around a real process."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import submit, taskfs, taskfs_process

ANSI = re.compile(r"\x1b\[[0-9;]*m")
BLUE = re.compile(r"\x1b\[[0-9;]*34m")


def on_terminal(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run taskfs with its stdout on a pseudo-terminal; return what the terminal received."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: stdout is the terminal
        os.chdir(cwd)
        os.environ.update({"TERM": "xterm-256color", "COLUMNS": "120", **(env or {})})
        os.execv(sys.executable, [sys.executable, "-m", "taskfs", *args])
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    _pid, status = os.waitpid(pid, 0)
    os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


@pytest.fixture
def two(repo: Path) -> Path:
    submit(repo, id="alpha", filesAndInterfaces=["a.py"])
    submit(repo, id="beta", filesAndInterfaces=["b.py"], contextID="other")
    assert taskfs("claim", "alpha", "--agent", "builder").code == 0
    return repo


def test_ls_is_a_coloured_table_on_a_terminal(two: Path) -> None:
    out = on_terminal(two, "ls")
    assert BLUE.search(out), "working is coloured"
    plain = ANSI.sub("", out)
    header, *rows = [line.split() for line in plain.strip().splitlines()]
    assert header == ["id", "state", "from", "to", "holder", "context"]
    assert rows == [
        ["alpha", "working", "planner", "builder", "builder", "auth-hardening"],
        ["beta", "submitted", "planner", "builder", "-", "other"],
    ]


def test_ls_is_plain_under_a_pipe_and_json_is_clean_on_a_terminal(two: Path) -> None:
    piped = taskfs_process("ls", cwd=two)
    assert not ANSI.search(piped.stdout)
    assert piped.stdout.splitlines()[0].split() == [
        "alpha",
        "working",
        "planner",
        "builder",
        "auth-hardening",
    ]
    raw = on_terminal(two, "ls", "--json")
    assert not ANSI.search(raw)
    assert [t["id"] for t in json.loads(raw)["tasks"]] == ["alpha", "beta"]


def test_no_color_keeps_the_table_and_drops_the_colour(two: Path) -> None:
    out = on_terminal(two, "ready", env={"NO_COLOR": "1"})
    assert not BLUE.search(out)
    assert ANSI.sub("", out).split()[:6] == ["id", "state", "from", "to", "holder", "context"]
    assert "beta" in out
    assert "alpha" not in out


def test_log_is_a_timeline_on_a_terminal(two: Path) -> None:
    out = ANSI.sub("", on_terminal(two, "log", "alpha"))
    title, first, second = out.strip().splitlines()
    assert title.split() == ["alpha", "working"]
    assert first.split()[2:] == ["●", "submitted", "planner"]
    assert second.split()[2:] == ["●", "working", "builder"]
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ", first)


def test_json_and_pipes_do_not_load_rich(two: Path) -> None:
    code = (
        "import sys, io, contextlib\n"
        "from taskfs.cli.app import run\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    run(['ls', '--json']); run(['ls']); run(['log', 'alpha'])\n"
        "print('rich' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=two, capture_output=True, text=True, check=True
    )
    assert proc.stdout.strip() == "False"
