"""Input taskfs reads from a user (issue 28, item 5): a file named on the command line or stdin
is read with a limit, and what cannot be a file (a FIFO, a device, a directory) is refused
before it is read. `/dev/zero` ends in a named error, not a MemoryError; a FIFO with no writer
ends at once; one byte over a documented limit is `input_too_large` (an envelope's is
`yaml_invalid`, as contract section 2 says).

Each command runs as its own process with its address space capped at 1 GiB, so that reading
an endless input whole fails fast instead of filling the machine; a hang fails on the timeout.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from taskfs.core import yamlio
from tests.helpers import submit, taskfs

GIB = 1024**3
MIB = 1024**2
# The documented limits (docs/errors.md, `input_too_large`), as taskfs.store.inputs holds them.
SEED_FILE_LIMIT = 4096
INTERLINK_IMPORT_LIMIT = 16 * MIB
MESSAGE_TEXT_LIMIT = MIB
pytestmark = pytest.mark.skipif(
    not (sys.platform == "linux" and os.path.exists("/dev/zero") and hasattr(os, "mkfifo")),
    reason="needs Linux, /dev/zero and FIFOs",
)


def run(
    repo: Path, args: Sequence[str], *, stdin: Any = subprocess.DEVNULL, data: bytes | None = None
) -> tuple[int, list[str]]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (GIB, GIB))

    done = subprocess.run(
        [sys.executable, "-m", "taskfs", *args, "--json"],
        cwd=repo,
        stdin=stdin if data is None else None,
        input=data,
        capture_output=True,
        timeout=60,
        preexec_fn=limit,
        check=False,
    )
    try:
        doc = json.loads(done.stdout)
        codes = [e["code"] for e in doc.get("errors", [])]
        codes += [e["code"] for report in doc.get("files", []) for e in report["errors"]]
    except ValueError:
        codes = [f"not JSON: {done.stdout[-200:]!r} {done.stderr[-300:]!r}"]
    return done.returncode, codes


@pytest.fixture
def fifo(tmp_path: Path) -> str:
    path = tmp_path / "no-writer.fifo"
    os.mkfifo(path)
    return str(path)


def _over(tmp_path: Path, limit: int) -> str:
    path = tmp_path / "one-byte-over"
    path.write_bytes(b"a" * (limit + 1))
    return str(path)


COMMANDS_READING_A_FILE = {
    "keys import": ["keys", "import", "--agent", "alice", "--seed-file"],
    "interlink import": ["interlink", "import", "--agent", "alice"],
    "new": ["new", "--agent", "planner"],
    "validate": ["validate"],
    "lint": ["lint"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS_READING_A_FILE))
def test_a_fifo_without_a_writer_is_refused_at_once(repo: Path, fifo: str, command: str) -> None:
    code, codes = run(repo, [*COMMANDS_READING_A_FILE[command], fifo])
    assert (code, codes) == (1, ["file_unreadable"])


@pytest.mark.parametrize("command", sorted(COMMANDS_READING_A_FILE))
def test_dev_zero_named_as_a_file_is_refused(repo: Path, command: str) -> None:
    code, codes = run(repo, [*COMMANDS_READING_A_FILE[command], "/dev/zero"])
    assert (code, codes) == (1, ["file_unreadable"])


def test_a_seed_file_one_byte_over_its_limit(repo: Path, tmp_path: Path) -> None:
    big = _over(tmp_path, SEED_FILE_LIMIT)
    assert run(repo, ["keys", "import", "--agent", "alice", "--seed-file", big]) == (
        1,
        ["input_too_large"],
    )


def test_interlink_import_one_byte_over_its_limit(repo: Path, tmp_path: Path) -> None:
    big = _over(tmp_path, INTERLINK_IMPORT_LIMIT)
    args = ["interlink", "import", "--agent", "alice"]
    assert run(repo, [*args, big]) == (1, ["input_too_large"])
    with open(big, "rb") as handle:
        assert run(repo, [*args, "-"], stdin=handle) == (1, ["input_too_large"])


def test_stdin_from_dev_zero_ends_in_a_named_error(repo: Path) -> None:
    task = submit(repo)
    commands = {
        "send": ["send", task, "-", "--agent", "planner"],
        "new": ["new", "-", "--agent", "planner"],
        "interlink import": ["interlink", "import", "-", "--agent", "alice"],
    }
    for name, args in commands.items():
        with open("/dev/zero", "rb") as zero:
            assert run(repo, args, stdin=zero) == (1, ["file_unreadable"]), name


def test_piped_input_over_the_limit_is_named(repo: Path) -> None:
    task = submit(repo)
    over = b"a" * (MESSAGE_TEXT_LIMIT + 1)
    assert run(repo, ["send", task, "-", "--agent", "planner"], data=over) == (
        1,
        ["input_too_large"],
    )
    envelope = b"objective: " + b"x" * yamlio.MAX_BYTES + b"\n"
    assert run(repo, ["new", "-", "--agent", "planner"], data=envelope) == (1, ["yaml_invalid"])
    assert not any((repo / "tasks").glob("*/messages/*"))


def test_input_within_the_limits_still_goes_in(repo: Path) -> None:
    task = submit(repo)
    code, codes = run(repo, ["send", task, "-", "--agent", "planner"], data=b"hello\nthere\n")
    assert (code, codes) == (0, [])
    shown = taskfs("messages", task, "--json").json["messages"]
    assert [m["text"] for m in shown] == ["hello\nthere\n"]


def test_the_limits_are_the_documented_ones() -> None:
    from taskfs.store import inputs

    assert (inputs.SEED_FILE_LIMIT, inputs.INTERLINK_IMPORT_LIMIT, inputs.MESSAGE_TEXT_LIMIT) == (
        SEED_FILE_LIMIT,
        INTERLINK_IMPORT_LIMIT,
        MESSAGE_TEXT_LIMIT,
    )
    errors = (Path(__file__).parents[2] / "docs" / "errors.md").read_text()
    row = next(line for line in errors.splitlines() if line.startswith("| `input_too_large`"))
    for limit in ("4 KiB", "16 MiB", "1 MiB"):
        assert limit in row
