"""The acceptance-check runner, exercised with real processes.

Every run's process group is recorded (by a spy on `subprocess.Popen` that still starts the real
process) and the test fails if any member of one is still running afterwards. Orphans may stay
behind as zombies where the init process does not reap them, so "gone" means absent or zombie.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import time
import tracemalloc
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from taskfs.runner import process
from taskfs.runner.process import (
    DEFAULT_ENV_ALLOW,
    RunResult,
    StreamCapture,
    run_command,
    scrubbed_env,
)

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def _pid_running(pid: int) -> bool:
    out = subprocess.run(
        ["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True, check=False
    ).stdout.strip()
    return bool(out) and not out.startswith("Z")


def _running_in_groups(pgids: set[int]) -> list[int]:
    out = subprocess.run(
        ["ps", "-A", "-o", "pid=,pgid=,stat="], capture_output=True, text=True, check=True
    ).stdout
    running = []
    for line in out.splitlines():
        pid, pgid, stat = line.split()[:3]
        if int(pgid) in pgids and not stat.startswith("Z"):
            running.append(int(pid))
    return running


def _wait_until(predicate: Any, timeout: float = 2.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return bool(predicate())


class _Hung(Exception):
    pass


def _raise_hung(signum: int, frame: object) -> None:
    raise _Hung("the test ran for 20 s: the runner hung")


@pytest.fixture(autouse=True)
def hang_guard() -> Iterator[None]:
    """A runner that hangs fails its test instead of stalling the suite."""
    previous = signal.signal(signal.SIGALRM, _raise_hung)
    signal.alarm(20)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(autouse=True)
def no_process_left(monkeypatch: pytest.MonkeyPatch) -> Iterator[set[int]]:
    groups: set[int] = set()

    class RecordingPopen(subprocess.Popen[bytes]):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if kwargs.get("start_new_session"):
                groups.add(self.pid)

    monkeypatch.setattr(subprocess, "Popen", RecordingPopen)
    yield groups
    monkeypatch.undo()
    recorded = set(groups)
    if _wait_until(lambda: not _running_in_groups(recorded)):
        return
    survivors = _running_in_groups(recorded)
    for pgid in recorded:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    pytest.fail(f"processes left running after the test: {survivors}")


def run(command: str, tmp_path: Path, **kwargs: Any) -> RunResult:
    kwargs.setdefault("timeout", 5.0)
    return run_command(command, cwd=tmp_path, **kwargs)


# --- exit status -------------------------------------------------------------------------


def test_exit_zero_passes(tmp_path: Path) -> None:
    result = run("echo hello", tmp_path)
    assert result.exit_code == 0
    assert result.signal is None
    assert result.passed
    assert result.stdout == StreamCapture(
        "hello\n", 6, hashlib.sha256(b"hello\n").hexdigest(), False
    )
    assert result.stderr == StreamCapture("", 0, EMPTY_SHA256, False)
    assert not result.timed_out
    assert not result.leftover_killed
    assert result.spawn_error is None
    assert result.started_at.tzinfo is not None
    assert result.started_at.utcoffset() == timezone.utc.utcoffset(None)
    assert result.duration_seconds >= 0


def test_exit_three_fails(tmp_path: Path) -> None:
    result = run("echo oops >&2; exit 3", tmp_path)
    assert result.exit_code == 3
    assert not result.passed
    assert result.stderr.text == "oops\n"


def test_runs_in_cwd_and_uses_clock(tmp_path: Path) -> None:
    moment = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
    (tmp_path / "marker.txt").write_text("here")
    result = run("cat marker.txt", tmp_path, clock=lambda: moment)
    assert result.stdout.text == "here"
    assert result.started_at == moment


def test_missing_command_is_127_not_found(tmp_path: Path) -> None:
    result = run("taskfs-no-such-command-xyz", tmp_path)
    assert result.exit_code == 127
    assert "not found" in result.stderr.text
    assert result.spawn_error is None
    assert not result.passed


def test_quotes_pipes_and_variables(tmp_path: Path) -> None:
    result = run(
        """printf '%s\\n' "a b" | tr a-z A-Z; X='it''s'; echo "$X" "$HOME"; echo '$HOME'""",
        tmp_path,
    )
    lines = result.stdout.text.splitlines()
    assert lines[0] == "A B"
    assert lines[1].startswith("its ")
    home = lines[1][len("its ") :]
    assert os.path.isabs(home)
    assert home != os.environ.get("HOME")
    assert lines[2] == "$HOME"
    assert result.passed


def test_non_utf8_output_is_replaced_and_counted_exactly(tmp_path: Path) -> None:
    result = run(r"printf '\377\376ok'", tmp_path)
    assert result.stdout.text == "\ufffd\ufffdok"
    assert result.stdout.total_bytes == 4
    assert result.stdout.sha256 == hashlib.sha256(b"\xff\xfeok").hexdigest()
    assert not result.stdout.truncated


# --- output cap --------------------------------------------------------------------------


def test_huge_output_is_capped_but_counted_and_hashed(tmp_path: Path) -> None:
    size = 100 * 1024 * 1024
    block = b"y\n" * 32 * 1024
    expected = hashlib.sha256()
    for _ in range(size // len(block)):
        expected.update(block)

    tracemalloc.start()
    try:
        result = run(f"yes | head -c {size}", tmp_path, timeout=30.0)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert result.passed
    assert result.stdout.total_bytes == size
    assert result.stdout.sha256 == expected.hexdigest()
    assert result.stdout.truncated
    kept = result.stdout.text.encode()
    assert len(kept) <= process.DEFAULT_OUTPUT_CAP + 100
    assert kept.startswith(b"y\ny\n")
    assert kept.endswith(b"y\ny\n")
    assert f"[... {size - process.DEFAULT_OUTPUT_CAP} bytes omitted ...]" in result.stdout.text
    # The whole stream passed through; what was held at any moment stays near the cap.
    assert peak < 8 * 1024 * 1024


def test_output_at_cap_is_kept_whole_and_beyond_it_head_and_tail(tmp_path: Path) -> None:
    exact = run("printf abcdefghij", tmp_path, output_cap=10)
    assert exact.stdout.text == "abcdefghij"
    assert not exact.stdout.truncated

    over = run("printf abcdefghijklmnopqrstuvwxyz", tmp_path, output_cap=10)
    assert over.stdout.truncated
    assert over.stdout.total_bytes == 26
    assert over.stdout.text == "abcde\n[... 16 bytes omitted ...]\nvwxyz"
    assert over.stdout.sha256 == hashlib.sha256(b"abcdefghijklmnopqrstuvwxyz").hexdigest()


def test_truncation_does_not_split_characters(tmp_path: Path) -> None:
    # Each "é" is two bytes; a cap of 7 would cut one in the head and one in the tail.
    result = run("printf 'éééééééééé'", tmp_path, output_cap=7)
    assert result.stdout.truncated
    assert result.stdout.total_bytes == 20
    assert "\ufffd" not in result.stdout.text
    head, marker, tail = result.stdout.text.split("\n")
    assert (head, tail) == ("é", "éé")
    assert marker == "[... 14 bytes omitted ...]"


# --- time limit and process groups -------------------------------------------------------


def test_timeout_kills_the_group_within_a_second(tmp_path: Path) -> None:
    timeout = 1.0
    result = run("sleep 300 & echo $!; sleep 300", tmp_path, timeout=timeout)
    assert result.timed_out
    assert not result.passed
    assert result.duration_seconds < timeout + 1.0
    assert result.signal == signal.SIGTERM
    assert result.exit_code == 128 + signal.SIGTERM
    child = int(result.stdout.text)
    assert not _pid_running(child)


def test_timeout_kills_a_group_that_ignores_sigterm(tmp_path: Path) -> None:
    timeout = 1.0
    result = run("trap '' TERM; sleep 300 & echo $!; sleep 300", tmp_path, timeout=timeout)
    assert result.timed_out
    assert result.duration_seconds < timeout + 1.0
    assert result.signal == signal.SIGKILL
    assert result.exit_code == 128 + signal.SIGKILL
    assert not _pid_running(int(result.stdout.text))


def test_background_child_outliving_the_shell_is_killed(tmp_path: Path) -> None:
    # The child also holds stdout open: reading must not wait for it.
    result = run("sleep 300 & echo $!", tmp_path, timeout=10.0)
    assert result.leftover_killed
    assert not result.timed_out
    assert result.exit_code == 0
    assert result.duration_seconds < 5.0
    assert not _pid_running(int(result.stdout.text))


def test_leftover_without_pipes_is_killed_too(tmp_path: Path) -> None:
    result = run("sleep 300 >/dev/null 2>&1 & echo $!", tmp_path)
    assert result.leftover_killed
    assert not _pid_running(int(result.stdout.text))


def test_finished_background_job_is_not_a_leftover(tmp_path: Path) -> None:
    result = run("true & wait", tmp_path)
    assert not result.leftover_killed
    assert result.passed


@pytest.mark.skipif(shutil.which("setsid") is None, reason="needs setsid(1)")
def test_escaped_process_holding_the_pipe_does_not_hang_the_run(tmp_path: Path) -> None:
    # The pause lets the child leave the group before the shell exits, so it is not a leftover.
    result = run("setsid sleep 30 & echo $!; sleep 0.2", tmp_path, timeout=10.0)
    escaped = int(result.stdout.text)
    try:
        assert result.duration_seconds < 3.0
        assert not result.timed_out
        assert result.exit_code == 0
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(escaped, signal.SIGKILL)


@pytest.fixture
def stdin_never_ends() -> Iterator[None]:
    """Make this process's stdin a pipe that stays open and empty, as a terminal would."""
    read_end, write_end = os.pipe()
    saved = os.dup(0)
    os.dup2(read_end, 0)
    try:
        yield
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read_end, write_end):
            os.close(fd)


@pytest.mark.usefixtures("stdin_never_ends")
def test_stdin_is_empty(tmp_path: Path) -> None:
    result = run("cat; echo done", tmp_path, timeout=3.0)
    assert result.stdout.text == "done\n"
    assert not result.timed_out
    assert result.duration_seconds < 2.0


def test_command_killing_its_own_group(tmp_path: Path) -> None:
    result = run("sleep 300 & kill -9 0", tmp_path)
    assert result.exit_code == 128 + 9
    assert result.signal == 9
    assert not result.timed_out
    assert not result.passed


# --- environment ------------------------------------------------------------------------


def test_caller_secret_does_not_reach_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TASKFS_TEST_SECRET", "hunter2-value")
    monkeypatch.setenv("LC_TASKFS_TEST", "kept")
    result = run("env", tmp_path)
    names = {line.split("=", 1)[0] for line in result.stdout.text.splitlines()}
    assert "TASKFS_TEST_SECRET" not in names
    assert "hunter2-value" not in result.stdout.text
    assert "LC_TASKFS_TEST" in names
    assert {"HOME", "TMPDIR"} <= names
    if "PATH" in os.environ:
        assert "PATH" in names


def test_home_is_fresh_empty_and_removed(tmp_path: Path) -> None:
    result = run(
        'echo "$HOME"; ls -A "$HOME" | wc -l; echo "$TMPDIR";'
        ' mkdir -p "$HOME/a/b" && touch "$HOME/a/b/f" && chmod 000 "$HOME/a"',
        tmp_path,
    )
    home, count, tmpdir = result.stdout.text.split()
    assert count == "0"
    assert tmpdir == home
    assert home != os.environ.get("HOME")
    assert result.passed
    assert not os.path.lexists(home)


def test_explicit_env_is_used_as_given(tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "FOO": "bar"}
    result = run('echo "$FOO ${HOME-unset}"', tmp_path, env=env)
    assert result.stdout.text == "bar unset\n"


def test_scrubbed_env_allow_list() -> None:
    source = {
        "PATH": "/bin",
        "LC_ALL": "C",
        "LC_TIME": "C",
        "HOME": "/home/me",
        "TMPDIR": "/var/tmp",
        "AWS_SECRET_ACCESS_KEY": "x",
        "SSH_AUTH_SOCK": "/s",
        "LCX": "not a prefix match",
    }
    env = scrubbed_env(source, home="/fresh")
    assert env == {
        "PATH": "/bin",
        "LC_ALL": "C",
        "LC_TIME": "C",
        "HOME": "/fresh",
        "TMPDIR": "/fresh",
    }
    custom = scrubbed_env(source, allow=["SSH_*"], home="/h", extra={"HOME": "/x", "A": "1"})
    assert custom == {"SSH_AUTH_SOCK": "/s", "HOME": "/x", "TMPDIR": "/h", "A": "1"}


def test_default_allow_list_has_nothing_secret_or_home() -> None:
    assert "HOME" not in DEFAULT_ENV_ALLOW
    assert "PATH" in DEFAULT_ENV_ALLOW
    assert not any(name == "*" for name in DEFAULT_ENV_ALLOW)


# --- streaming, spawn failures, arguments ------------------------------------------------


def test_on_output_receives_chunks_in_order(tmp_path: Path) -> None:
    seen: list[tuple[str, bytes]] = []
    result = run(
        "printf 'one\\n'; sleep 0.05; printf 'two\\n'; printf 'err\\n' >&2; printf 'three\\n'",
        tmp_path,
        on_output=lambda name, chunk: seen.append((name, chunk)),
    )
    out = b"".join(chunk for name, chunk in seen if name == "stdout")
    err = b"".join(chunk for name, chunk in seen if name == "stderr")
    assert out == b"one\ntwo\nthree\n" == result.stdout.text.encode()
    assert err == b"err\n"
    assert seen[0] == ("stdout", b"one\n")


def test_failing_on_output_does_not_break_the_run(tmp_path: Path) -> None:
    calls: list[str] = []

    def explode(name: str, chunk: bytes) -> None:
        calls.append(name)
        raise RuntimeError("display is broken")

    result = run("echo a; echo b >&2", tmp_path, on_output=explode)
    assert calls
    assert result.passed
    assert (result.stdout.text, result.stderr.text) == ("a\n", "b\n")


def test_missing_cwd_is_a_spawn_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    result = run_command("echo hi", cwd=missing, timeout=5.0)
    assert result.spawn_error is not None
    assert str(missing) in result.spawn_error
    assert result.exit_code == 127
    assert result.signal is None
    assert not result.passed
    assert result.stdout.total_bytes == 0


def test_nul_in_command_is_a_spawn_error(tmp_path: Path) -> None:
    result = run("echo a\0b", tmp_path)
    assert result.spawn_error is not None
    assert result.exit_code == 127


@pytest.mark.parametrize(
    "kwargs",
    [{"timeout": 0}, {"timeout": -1}, {"timeout": float("inf")}, {"output_cap": -1}, {"grace": -1}],
)
def test_invalid_limits_raise(tmp_path: Path, kwargs: dict[str, Any]) -> None:
    kwargs.setdefault("timeout", 1.0)
    with pytest.raises(ValueError, match="must"):
        run_command("true", cwd=tmp_path, **kwargs)


# --- stopped by the caller -----------------------------------------------------------------


def test_a_run_the_caller_stops_ends_with_its_whole_group(tmp_path: Path) -> None:
    # A background grandchild and the shell both wait far longer than the test: only the stop
    # ends them (the autouse fixture fails the test if any of the group is left running).
    started = tmp_path / "started"
    asked: list[bool] = []

    def stop() -> bool:
        asked.append(True)
        return started.exists()

    result = run(f"sleep 600 & touch {started}; echo going; wait", tmp_path, timeout=60, stop=stop)
    assert result.stopped is True
    assert result.passed is False
    assert result.timed_out is False
    assert result.stdout.text == "going\n"
    assert asked


def test_a_stop_that_raises_is_not_obeyed(tmp_path: Path) -> None:
    def stop() -> bool:
        raise RuntimeError("the caller's own bug")

    result = run("echo done", tmp_path, stop=stop)
    assert (result.passed, result.stopped) == (True, False)
