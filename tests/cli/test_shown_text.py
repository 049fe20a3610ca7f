"""What a peer writes is shown, never obeyed (issue 28, item 4). A message, an objective, a
reason carrying terminal control sequences (clear the screen, retitle the window, carriage
return over a line, the one-character CSI of C1) and bidirectional overrides is printed by
`messages`, `inbox`, `conversation`, `show`, `log` with each such character escaped (`\\u001b`),
on a pipe and on a terminal (a real pseudo-terminal, where `log` draws its coloured table); the
stored text stays as sent, and `--json` stays exact JSON of it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import send, submit, taskfs

HOSTILE = "fine\x1b[2J\x1b]0;pwned\x07\rcanceled by alice\x9b31m\u202eevil\u2066 \x08done"
# Characters that steer a terminal or reorder text: none may reach the output raw.
RAW = ("\x1b", "\x07", "\r", "\x08", "\x9b", "\u202e", "\u2066")


def strings(value: object) -> list[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def assert_safe(out: str) -> None:
    assert not [ch for ch in RAW if ch in out], repr(out[:400])


@pytest.fixture
def hostile_task(repo: Path) -> str:
    task = submit(repo, objective=f"Fix the login bug. {HOSTILE}")
    assert taskfs("claim", task, "--agent", "builder").code == 0
    send(task, "planner", "builder", HOSTILE)
    reason = f"stop {HOSTILE}"
    assert taskfs("send", task, reason, "--agent", "planner", "--status", "canceled").code == 0
    return task


@pytest.mark.parametrize(
    "args",
    [
        ["messages", "{task}"],
        ["inbox", "--agent", "builder"],
        ["conversation", "planner", "--agent", "builder"],
        ["show", "{task}"],
        ["log", "{task}"],
        ["ls"],
        ["show", "{task}", "--format", "markdown"],
    ],
    ids=" ".join,
)
def test_text_output_shows_control_characters_escaped(hostile_task: str, args: list[str]) -> None:
    argv = [a.format(task=hostile_task) for a in args]
    result = taskfs(*argv)
    assert result.code == 0, result.stderr
    assert_safe(result.stdout + result.stderr)
    if argv[0] in ("messages", "inbox", "log"):
        assert "\\u001b]0;pwned\\u0007" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["messages", "{task}"],
        ["show", "{task}"],
        ["log", "{task}"],
        ["inbox", "--agent", "builder"],
    ],
    ids=lambda a: a[0],
)
def test_json_stays_exact_and_safe(hostile_task: str, args: list[str]) -> None:
    result = taskfs(*[a.format(task=hostile_task) for a in args], "--json")
    assert result.code == 0
    assert_safe(result.stdout)
    assert any(HOSTILE in text for text in strings(result.json))  # the same text, parsed back


def test_the_stored_message_is_the_text_as_sent(repo: Path, hostile_task: str) -> None:
    shown = taskfs("messages", hostile_task, "--json").json["messages"]
    assert HOSTILE in [m["text"] for m in shown]


def test_a_refusal_echoing_hostile_input_is_safe(repo: Path) -> None:
    result = taskfs("show", f"x{HOSTILE}")
    assert result.code == 1
    assert_safe(result.stdout + result.stderr)


@pytest.mark.skipif(sys.platform != "linux", reason="a pseudo-terminal")
def test_on_a_terminal_the_coloured_tables_escape_the_values(repo: Path, hostile_task: str) -> None:
    import pty

    for args in (["log", hostile_task], ["ls"]):
        main, child = pty.openpty()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "taskfs", *args],
                cwd=repo,
                stdin=subprocess.DEVNULL,
                stdout=child,
                stderr=subprocess.PIPE,
                env={**os.environ, "TERM": "xterm", "COLUMNS": "400"},
            )
            os.close(child)
            child = -1
            out = b""
            while True:
                try:
                    chunk = os.read(main, 65536)
                except OSError:  # the terminal closed with the process
                    break
                if not chunk:
                    break
                out += chunk
            assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
        finally:
            os.close(main)
            if child != -1:
                os.close(child)
            if proc.stderr:
                proc.stderr.close()
        text = out.decode("utf-8", "replace")
        # rich colours the table (its own escapes); the peer's sequences are shown, not sent.
        for sequence in ("\x1b[2J", "\x1b]0;", "\x07", "\r" + "canceled", "\x9b", "\u202e"):
            assert sequence not in text, (args, sequence)
        if args[0] == "log":
            assert "\\u001b]0;pwned" in text
