"""`taskfs board` in a terminal (issue 39): it stays on the screen, draws the board again when
another process moves the ledger (a claim appears in the working column), shows a hostile
title with its escapes instead of obeying them, and quits on `q`, giving the terminal back.
Under a pipe it prints the board once; `--json` gives it as data.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers import submit, taskfs, taskfs_process
from tests.terminal import plain, spawn

HOSTILE = "Fix it \x1b]0;pwned\x07\x1b[2J\u202eexe.txt"


def test_the_terminal_board_follows_a_claim_and_quits_on_q(repo: Path) -> None:
    task = submit(repo, id="t-login")
    other = submit(repo, id="t-hostile", objective=HOSTILE, filesAndInterfaces=["other/**"])
    with spawn(["board"], repo) as terminal:
        first = terminal.wait_for(lambda seen: "submitted (2)" in plain(seen))
        assert "working (" not in plain(first)
        assert "builder" in plain(first)  # a row per agent
        mark = len(terminal.seen)
        claimed = taskfs_process("claim", task, "--agent", "builder", cwd=repo)
        assert claimed.code == 0, claimed.stderr
        after = terminal.wait_for(lambda seen: "working (1)" in plain(seen), since=mark)
        assert "submitted (1)" in plain(after)
        assert task in plain(after)
        # The hostile title's escapes are shown, not obeyed: no title change, no clearing.
        shown = terminal.text
        assert "\x1b]0;pwned" not in shown
        assert "\u202e" not in shown
        assert "\\u001b]0;pwned\\u0007" in plain(shown).replace("\n", "")
        assert other in plain(shown)
        terminal.type(b"q")
        assert terminal.finish() == 0
    # The alternate screen it drew on was left: the shell's screen is back.
    assert "\x1b[?1049l" in terminal.text


def test_under_a_pipe_the_board_is_printed_once_and_json_is_data(repo: Path) -> None:
    submit(repo, id="t-login")
    printed = taskfs("board")
    assert printed.code == 0, printed.stderr
    assert "submitted (1)" in printed.stdout
    assert "\x1b" not in printed.stdout
    doc = taskfs("board", "--json").json
    assert doc["columns"] == {"submitted": ["t-login"]}
    assert doc["markers"] == {"ready": ["t-login"]}
    assert re.fullmatch(r"\d+", str(doc["completed"]["today"]))
