"""`evidence add --file`: a judgement file is streamed under the output cap of a check, and
anything that is not a regular file is refused before it is read."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from taskfs.core import yamlio
from taskfs.core.evidence import EVIDENCE_OUTPUT_CAP
from tests.cli.test_evidence import make_task
from tests.helpers import git, taskfs

GIB = 1024**3


def add(task: str, path: str, **kwargs: bytes) -> tuple[int, str]:
    result = taskfs(
        "evidence", "add", task, "--verdict", "pass", "--source", "alice", "--file", path,
        "--json", **kwargs,
    )  # fmt: skip
    return result.code, ",".join(result.codes)


def add_process(
    repo: Path, task: str, path: str, *, stdin: int | None = None, memory: int | None = None
) -> subprocess.CompletedProcess[str]:
    """The command as its own process: a hang fails on the timeout, and `memory` caps the
    address space so that reading the file whole would fail."""

    def limit() -> None:
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        [sys.executable, "-m", "taskfs", "evidence", "add", task, "--verdict", "pass",
         "--source", "alice", "--file", path, "--json"],
        cwd=repo, stdin=stdin if stdin is not None else subprocess.DEVNULL,
        capture_output=True, text=True, timeout=120, preexec_fn=limit, check=False,
    )  # fmt: skip


def no_evidence(repo: Path, task: str) -> bool:
    return not (repo / "tasks" / task / "evidence").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_without_waiting_for_a_writer(repo: Path, tmp_path: Path) -> None:
    task = make_task(repo, "true")
    fifo = tmp_path / "judgement.fifo"
    os.mkfifo(fifo)
    done = add_process(repo, task, str(fifo))
    assert done.returncode == 1
    assert '"code": "file_unreadable"' in done.stdout
    assert "FIFO" in done.stdout
    assert no_evidence(repo, task)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_devices_directories_and_links_to_them_are_refused(repo: Path, tmp_path: Path) -> None:
    task = make_task(repo, "true")
    link = tmp_path / "innocent.txt"
    link.symlink_to("/dev/zero")
    for path in ("/dev/zero", str(tmp_path), str(link)):
        assert add(task, path) == (1, "file_unreadable"), path
    with open("/dev/zero", "rb") as zero:
        done = add_process(repo, task, "-", stdin=zero.fileno())
    assert done.returncode == 1
    assert '"code": "file_unreadable"' in done.stdout
    assert no_evidence(repo, task)


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux")
def test_a_3_gib_file_is_streamed_in_bounded_memory(repo: Path, tmp_path: Path) -> None:
    task = make_task(repo, "true")
    big = tmp_path / "big.log"
    with open(big, "wb") as handle:
        handle.write(b"HEAD-OF-FILE\n")
        handle.truncate(3 * GIB - 13)  # sparse: nothing is written to the disk
        handle.seek(3 * GIB - 13)
        handle.write(b"TAIL-OF-FILE\n")
    # Far less than the file: reading it whole could not fit.
    done = add_process(repo, task, str(big), memory=GIB)
    assert done.returncode == 0, done.stdout + done.stderr
    evidence = done.stdout.split('"evidence": "')[1].split('"')[0]
    doc = yamlio.load((repo / evidence).read_bytes())
    assert doc["noteFile"]["totalBytes"] == 3 * GIB
    assert doc["noteFile"]["truncated"] is True
    # The whole stream is hashed (checked against hashlib on a smaller file in test_evidence).
    assert len(doc["noteFile"]["digest"]["sha256"]) == 64
    assert doc["note"].startswith("HEAD-OF-FILE\n")
    assert doc["note"].endswith("TAIL-OF-FILE\n")
    assert len(doc["note"].encode()) < EVIDENCE_OUTPUT_CAP + 200


def test_a_piped_judgement_is_streamed_and_capped(repo: Path) -> None:
    task = make_task(repo, "true")
    body = b"x" * (EVIDENCE_OUTPUT_CAP * 4)
    code, _ = add(task, "-", stdin=body)
    assert code == 0
    assert git(repo, "status", "--porcelain") == ""
    rows = taskfs("show", task, "--json").json["evidence"]
    assert len(rows) == 1


@pytest.mark.skipif(sys.platform != "linux", reason="a pseudo-terminal as stdin")
def test_a_judgement_typed_at_a_terminal_is_taken(repo: Path) -> None:
    import pty

    task = make_task(repo, "true")
    master, slave = pty.openpty()
    try:
        os.write(master, b"typed by a person\n\x04")  # Ctrl-D ends it, as at a prompt
        done = add_process(repo, task, "-", stdin=slave)
    finally:
        os.close(master)
        os.close(slave)
    assert done.returncode == 0, done.stdout + done.stderr
    evidence = done.stdout.split('"evidence": "')[1].split('"')[0]
    assert yamlio.load((repo / evidence).read_bytes())["note"] == "typed by a person\n"
