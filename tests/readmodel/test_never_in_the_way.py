"""The derived layer is never in the way (issue 36): a store another process holds (a stuck
`sqlite3` shell in `BEGIN EXCLUSIVE`, a writer that holds the checkout's lock) costs a reader at
most a moment before it answers from git, and a checkout whose `.git` cannot be written answers
every read and refuses a write with a named error, nothing written.

No test here reads a clock: a command that waited for the store would wait minutes, and the
processes below are given far less than that before the test gives up on them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import Result, git, submit, taskfs, taskfs_process
from tests.readmodel.test_never_trusted import _clean, cache_dir, stores

# Far below the two minutes a held store used to cost, far above what answering takes.
PATIENCE = 40

HOLD_STORE = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=0)
conn.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
time.sleep(600)
"""

HOLD_LOCK = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(600)
"""


def _ledger(repo: Path) -> None:
    submit(repo, id="first", filesAndInterfaces=["src/first/**"])
    submit(repo, id="second", filesAndInterfaces=["src/second/**"], dependsOn=["first"])
    submit(repo, id="third", filesAndInterfaces=["src/third/**"])
    assert taskfs("claim", "third", "--agent", "builder").code == 0


READS = (
    ("ls", "--json"),
    ("ready", "--json"),
    ("ready", "--json", "--agent", "builder"),
    ("show", "first", "--json"),
    ("show", "third"),
    ("log", "third", "--json"),
)


def _answers(run: object, repo: Path) -> list[tuple[int, object]]:
    out = []
    for args in READS:
        result: Result = run(*args)  # type: ignore[operator]
        assert "internal_error" not in result.stdout, (args, result.stdout)
        out.append((result.code, _clean(result.json) if "--json" in args else result.stdout))
    return out


def _process(repo: Path, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    def run(*args: str) -> Result:
        return taskfs_process(*args, cwd=repo, env=env, timeout=PATIENCE)

    return run


@contextlib.contextmanager
def _holding(script: str, target: Path) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(target)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "held"
        yield proc
    finally:
        proc.kill()
        proc.wait()


def test_a_store_held_exclusively_costs_a_reader_nothing_but_a_moment(repo: Path) -> None:
    """Item 4: a stuck `sqlite3` shell holding the store in `BEGIN EXCLUSIVE`: every read
    answers (as it did before), and a claim commits."""
    _ledger(repo)
    expected = _answers(taskfs, repo)
    (store,) = stores(repo)
    with _holding(HOLD_STORE, store):
        assert _answers(_process(repo), repo) == expected
        claimed = taskfs_process(
            "claim", "first", "--agent", "builder", "--json", cwd=repo, timeout=PATIENCE
        )
        assert (claimed.code, claimed.json["state"]) == (0, "working"), claimed.stdout
        listed = taskfs_process("ls", "--json", cwd=repo, timeout=PATIENCE)
        states = {t["id"]: t["state"] for t in listed.json["tasks"]}
        assert states["first"] == "working"
    # Once the shell lets go, the store catches up and answers alike.
    assert {t["id"]: t["state"] for t in taskfs("ls", "--json").json["tasks"]} == states


def test_a_writer_holding_the_checkouts_lock_stalls_no_reader(repo: Path) -> None:
    """A reader that must bring the store up to HEAD does not wait for a writer that holds the
    checkout's lock (a long `new`, a check): it answers from git."""
    _ledger(repo)
    git(repo, "commit", "-q", "--allow-empty", "-m", "HEAD moves: the store must catch up")
    submit_by_hand = repo / "tasks" / "first"
    assert submit_by_hand.is_dir()
    expected = _answers(taskfs, repo)
    git(repo, "commit", "-q", "--allow-empty", "-m", "and again")
    lock = Path(git(repo, "rev-parse", "--absolute-git-dir")) / "taskfs" / "lock"
    with _holding(HOLD_LOCK, lock):
        assert _answers(_process(repo), repo) == expected


# -- a checkout whose .git cannot be written ------------------------------------------------


def _read_only_runner(repo: Path):  # type: ignore[no-untyped-def]
    """Run taskfs where the repository's git dir cannot be written: by its permissions for an
    ordinary user, in a bubblewrap mount namespace for root (whom permissions do not stop)."""
    git_dir = Path(git(repo, "rev-parse", "--absolute-git-dir"))
    if os.geteuid() != 0:
        for path in [git_dir, *git_dir.rglob("*")]:
            if not path.is_symlink():
                path.chmod(path.stat().st_mode & ~0o222)

        def run(*args: str) -> Result:
            return taskfs_process(*args, cwd=repo, timeout=PATIENCE)

        return run
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip("running as root without bubblewrap: nothing can make .git read-only")
    wrap = [bwrap, "--bind", "/", "/", "--ro-bind", str(git_dir), str(git_dir)]
    wrap += ["--dev", "/dev", "--proc", "/proc", "--chdir", str(repo)]

    def in_namespace(*args: str) -> Result:
        proc = subprocess.run(
            [*wrap, sys.executable, "-m", "taskfs", *args],
            capture_output=True,
            text=True,
            timeout=PATIENCE,
            env=dict(os.environ),
            check=False,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    return in_namespace


@pytest.mark.parametrize("store", ["built", "none"])
def test_a_read_only_checkout_answers_every_read(repo: Path, store: str) -> None:
    """Item 5: a user who may read the repository but not write its `.git` lists, shows and
    asks what is ready exactly as a writer of it does, with the store or without one."""
    _ledger(repo)
    expected = _answers(taskfs, repo)
    if store == "none":
        shutil.rmtree(cache_dir(repo))
    head = git(repo, "rev-parse", "HEAD")
    run = _read_only_runner(repo)
    assert _answers(run, repo) == expected
    board = run("board", "--html", "-")
    assert board.code == 0, board.stderr
    assert "<html" in board.stdout
    graph = run("graph", "--json")
    assert graph.code == 0, graph.stdout + graph.stderr
    assert git(repo, "rev-parse", "HEAD") == head


def test_a_read_only_checkout_refuses_a_write_by_name(repo: Path) -> None:
    _ledger(repo)
    head = git(repo, "rev-parse", "HEAD")
    status = git(repo, "status", "--porcelain")
    run = _read_only_runner(repo)
    for args in (
        ("claim", "first", "--agent", "builder", "--json"),
        ("move", "third", "input_required", "--agent", "builder", "--json"),
    ):
        refused = run(*args)
        assert refused.code == 1, refused.stdout + refused.stderr
        assert [e["code"] for e in refused.json["errors"]] == ["git_dir_read_only"], args
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == status  # nothing half-written
