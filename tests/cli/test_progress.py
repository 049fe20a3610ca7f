"""Long commands show their progress to a person at a terminal, on stderr, and to nobody else
(issue 39, item 5): a bulk `new`, `archive` and the first read of a ledger into the read model
draw rich's bars on a terminal's stderr, while their answer on stdout stays what it always was;
under `--json`, or when stderr is not a terminal, nothing extra is printed at all.

A step is shown from `taskfs.core.progress.SHOWN_FROM` items: these ledgers are that large.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from taskfs.core import progress
from tests.helpers import git, taskfs, write_envelope
from tests.terminal import plain, spawn

COUNT = progress.SHOWN_FROM + 5


def envelopes(folder: Path, prefix: str) -> list[str]:
    folder.mkdir()
    return [
        str(
            write_envelope(
                folder / f"{prefix}-{n:03d}.yaml",
                id=f"{prefix}-{n:03d}",
                filesAndInterfaces=[f"{prefix}/{n}/**"],
                acceptanceCheck={
                    "passFailCommand": f"test -d {prefix}/{n}",
                    "endToEndVerification": "Look at the folder.",
                },
            )
        )
        for n in range(COUNT)
    ]


def run_in_terminal(repo: Path, *args: str) -> tuple[int, str, str]:
    """`taskfs ARGS` with stderr on a terminal and stdout a pipe: (exit, stderr seen, stdout)."""
    with spawn(args, repo, stdout_tty=False) as terminal:
        code = terminal.finish()
        return code, terminal.text, terminal.stdout()


def run_in_pipes(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "taskfs", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_bulk_new_shows_progress_on_a_terminal_and_nothing_under_json(
    repo: Path, tmp_path: Path
) -> None:
    code, seen, out = run_in_terminal(repo, "new", *envelopes(tmp_path / "a", "a"))
    assert code == 0, plain(seen)
    shown = plain(seen)
    assert f"reading {COUNT} envelopes" in shown
    assert f"writing {COUNT} tasks" in shown
    assert f"{COUNT}/{COUNT}" in shown  # the bar counted them all
    assert "a-000" in out  # the answer, unchanged, on stdout
    assert "\x1b" not in out

    code, seen, out = run_in_terminal(repo, "new", *envelopes(tmp_path / "b", "b"), "--json")
    assert code == 0, seen
    assert seen == ""  # nothing on the terminal's stderr
    assert len(json.loads(out)["tasks"]) == COUNT  # one clean document

    piped = run_in_pipes(repo, "new", *envelopes(tmp_path / "c", "c"))
    assert piped.returncode == 0, piped.stderr
    assert piped.stderr == ""  # not a terminal: no bars
    assert len(taskfs("ls", "--json").json["tasks"]) == 3 * COUNT


def test_the_first_read_of_a_ledger_into_the_read_model_shows_progress(
    repo: Path, tmp_path: Path
) -> None:
    assert taskfs("new", *envelopes(tmp_path / "a", "a")).code == 0
    store = Path(git(repo, "rev-parse", "--git-dir")).resolve() / "taskfs"

    shutil.rmtree(store)
    code, seen, out = run_in_terminal(repo, "ls", "--json")
    assert code == 0
    assert seen == ""
    assert len(json.loads(out)["tasks"]) == COUNT

    shutil.rmtree(store)
    code, seen, out = run_in_terminal(repo, "ls")
    assert code == 0, plain(seen)
    assert f"reading {COUNT} tasks into the read model" in plain(seen)
    assert out.count("a-") == COUNT


def test_archive_shows_progress_on_a_terminal_and_nothing_under_json(
    repo: Path, tmp_path: Path
) -> None:
    def refused(prefix: str) -> None:
        assert taskfs("new", *envelopes(tmp_path / prefix, prefix)).code == 0
        for n in range(COUNT):
            result = taskfs("refuse", f"{prefix}-{n:03d}", "--agent", "builder", "--reason", "no")
            assert result.code == 0, result.stderr

    refused("a")
    code, seen, out = run_in_terminal(repo, "archive", "--older-than", "0s", "--json")
    assert code == 0, seen
    assert seen == ""
    assert json.loads(out)["count"] == COUNT

    refused("b")
    code, seen, out = run_in_terminal(repo, "archive", "--older-than", "0s")
    assert code == 0, plain(seen)
    shown = plain(seen)
    assert f"archiving {COUNT} tasks" in shown
    assert f"removing {COUNT} task folders" in shown
    assert f"archived {COUNT} tasks" in out
    assert len(taskfs("ls", "--archived", "--json").json["tasks"]) == 2 * COUNT
