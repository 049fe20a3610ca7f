"""A hostile acceptance command, through `taskfs check`: what it may read, what it may leave
running, what it may write and reach, with the bubblewrap sandbox and without it.

The sandbox tests need a working `bwrap`; they are skipped without one, unless
TASKFS_REQUIRE_BWRAP=1 (as in CI), which turns a missing sandbox into a failure.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskfs.core import yamlio
from taskfs.runner import sandbox as sandboxes
from tests.cli.test_evidence import check, evidence_of, make_task
from tests.helpers import git

HAVE_BWRAP = sandboxes.choose("on", network=False, writable=["/"]).sandbox is not None
needs_bwrap = pytest.mark.skipif(
    not HAVE_BWRAP and not os.environ.get("TASKFS_REQUIRE_BWRAP"),
    reason="no working bwrap here (set TASKFS_REQUIRE_BWRAP=1 to fail instead)",
)
BOTH = [pytest.param("on", marks=needs_bwrap), "off"]
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and prctl")


def marked(marker: str) -> list[int]:
    """The pids of every process whose command line mentions `marker` (zombies left out)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            stat = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X"):
            found.append(int(name))
    return found


@contextlib.contextmanager
def no_leftovers(marker: str) -> Iterator[None]:
    """Kill whatever a failing test left running, so that no test leaves a process behind."""
    try:
        yield
    finally:
        for pid in marked(marker):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def gone(marker: str, within: float = 5.0) -> bool:
    end = time.monotonic() + within
    while marked(marker):
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


def taskfs_popen(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "taskfs", *args],
        cwd=cwd,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


# -- what the command may read -----------------------------------------------------------------


@linux_only
@pytest.mark.parametrize("mode", BOTH)
def test_a_check_cannot_read_the_environment_of_taskfs(repo: Path, mode: str) -> None:
    secret = f"hunter2-{uuid.uuid4().hex}"
    command = (
        "cat /proc/$PPID/environ; for f in /proc/*/environ; do cat $f; done; "
        "cat /proc/$PPID/cmdline; true"
    )
    task = make_task(repo, command)
    env = {"TASKFS_PLANTED_SECRET": secret}
    proc = taskfs_popen("check", task, "--json", "--sandbox", mode, cwd=repo, env=env)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    evidence = (repo / out.split('"evidence": "')[1].split('"')[0]).read_text()
    assert secret not in evidence
    assert secret not in out + err


# -- what the command may leave running --------------------------------------------------------


def _daemons(marker: str) -> str:
    """A command that leaves three daemons: a setsid child, a double fork in a new session,
    and a Python daemon that forks, calls setsid and forks again."""
    daemon = (
        "import os, time, sys\n"
        "if os.fork(): sys.exit(0)\n"
        "os.setsid()\n"
        "if os.fork(): sys.exit(0)\n"
        "time.sleep(300)\n"
    )
    return (
        f"setsid sh -c 'sleep 300; : {marker}-a' & "
        f"(setsid sh -c 'sleep 300; : {marker}-b' &) ; "
        f"{sys.executable} -c '{daemon}' {marker}-c; "
        "sleep 0.3; true"
    )


@linux_only
@pytest.mark.parametrize("mode", BOTH)
def test_daemons_do_not_outlive_the_check(repo: Path, mode: str) -> None:
    marker = f"taskfs-daemon-{uuid.uuid4().hex}"
    task = make_task(repo, _daemons(marker))
    with no_leftovers(marker):
        result = check(task, "--sandbox", mode)
        assert result.code == 0, result.stderr
        # Killed by the time the command returns: nothing is left to wait for.
        assert marked(marker) == []
        if mode == "off":
            # In the sandbox the kernel ends them with its namespace, unseen by taskfs.
            assert evidence_of(repo, result)["limits"]["leftoverKilled"] is True


@linux_only
@pytest.mark.parametrize("mode", BOTH)
@pytest.mark.parametrize(
    "signals",
    [(signal.SIGTERM,), (signal.SIGHUP,), (signal.SIGTERM, signal.SIGTERM, signal.SIGHUP)],
    ids=["term", "hup", "burst"],
)
def test_term_and_hup_kill_the_check_and_record_nothing(
    repo: Path, mode: str, signals: tuple[int, ...]
) -> None:
    marker = f"taskfs-signal-{uuid.uuid4().hex}"
    task = make_task(repo, f"setsid sh -c 'sleep 300; : {marker}-d' & sleep 300; : {marker}")
    before = git(repo, "rev-parse", "HEAD")
    with no_leftovers(marker):
        proc = taskfs_popen("check", task, "--sandbox", mode, cwd=repo, env={})
        try:
            end = time.monotonic() + 60
            while len(marked(marker)) < 2 and time.monotonic() < end and proc.poll() is None:
                time.sleep(0.05)
            assert len(marked(marker)) >= 2, "the check never started"
            for signum in signals:
                # A second signal must not cut short the cleanup the first one started.
                proc.send_signal(signum)
            _out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode in {128 + signum for signum in signals}, err
        assert "Traceback" not in err
        assert gone(marker), "the check's processes outlived taskfs check"
    assert not (repo / "tasks" / task / "evidence").exists()
    assert git(repo, "rev-parse", "HEAD") == before
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""


# -- what the command may reach and write -------------------------------------------------------


class _Listener:
    """A loopback TCP server that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(5)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


@needs_bwrap
def test_a_sandboxed_check_reaches_no_network_unless_allowed(repo: Path) -> None:
    listener = _Listener()
    try:
        connect = (
            f"{sys.executable} -c 'import socket; "
            f'socket.create_connection(("127.0.0.1", {listener.port}), timeout=5)\''
        )
        task = make_task(repo, connect)
        refused = check(task, "--sandbox", "on")
        assert refused.code == 1
        assert evidence_of(repo, refused)["sandbox"]["network"] is False
        assert listener.accepted == 0
        allowed = check(task, "--sandbox", "on", "--network")
        assert allowed.code == 0, evidence_of(repo, allowed)["stderr"]
        assert evidence_of(repo, allowed)["sandbox"]["network"] is True
        assert listener.accepted == 1
    finally:
        listener.close()


@needs_bwrap
def test_tools_on_path_under_tmp_stay_visible_and_the_rest_of_tmp_does_not(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CI job's clone and its virtual environment often live under /tmp, which the sandbox
    replaces with an empty one: the folders on PATH come back read-only, nothing else does."""
    tools = tmp_path / "tools" / "bin"
    tools.mkdir(parents=True)
    (tools / "say-hello").write_text("#!/bin/sh\necho hello from the toolchain\n")
    (tools / "say-hello").chmod(0o755)
    secret = tmp_path / "elsewhere.txt"
    secret.write_text("not for the check\n")
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    task = make_task(repo, f"say-hello && ! test -e {secret} && ! touch {tools}/planted")
    ran = check(task, "--sandbox", "on")
    assert ran.code == 0, evidence_of(repo, ran)["stderr"]
    assert "hello from the toolchain" in evidence_of(repo, ran)["stdout"]
    assert not (tools / "planted").exists()


@needs_bwrap
def test_the_worktree_is_writable_and_the_rest_is_not(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not under /tmp or HOME, which the sandbox replaces: a place it must show read-only.
    outside = Path(tempfile.mkdtemp(prefix="taskfs-outside-", dir="/var/tmp"))
    try:
        (outside / "kept.txt").write_text("original\n")
        keys = outside / "keys"
        keys.mkdir()
        (keys / "runner-r.pem").write_text("PRIVATE\n")
        monkeypatch.setenv("TASKFS_KEY_DIR", str(keys))
        command = (
            f"cat {outside}/kept.txt; "
            f"echo changed >> {outside}/kept.txt; touch {outside}/new.txt; "
            f"cat {keys}/runner-r.pem; "
            "echo 'touch /tmp/pwned' > .git/hooks/pre-commit; "
            "echo made > src/made.txt; true"
        )
        task = make_task(repo, command)
        (repo / "src").mkdir()
        result = check(task, "--sandbox", "on")
        assert result.code == 0, result.stderr
        doc = evidence_of(repo, result)
        assert doc["sandbox"]["kind"] == "bubblewrap"
        assert "original" in doc["stdout"]
        assert "PRIVATE" not in doc["stdout"]
        assert (outside / "kept.txt").read_text() == "original\n"
        assert not (outside / "new.txt").exists()
        assert not (repo / ".git" / "hooks" / "pre-commit").exists()
        assert (repo / "src" / "made.txt").read_text() == "made\n"
        assert "Read-only file system" in doc["stderr"]
    finally:
        shutil.rmtree(outside)


# -- choosing the sandbox -----------------------------------------------------------------------


def _path_without_bwrap(tmp_path: Path) -> str:
    """A PATH holding git but no bwrap: the real situation of a host without bubblewrap."""
    bin_dir = tmp_path / "bin-without-bwrap"
    bin_dir.mkdir()
    for tool in ("git", "setpriv"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


def test_sandbox_on_without_bwrap_is_refused_and_writes_nothing(repo: Path, tmp_path: Path) -> None:
    task = make_task(repo, "true")
    before = git(repo, "rev-parse", "HEAD")
    env = {"PATH": _path_without_bwrap(tmp_path)}
    proc = taskfs_popen("check", task, "--sandbox", "on", "--json", cwd=repo, env=env)
    out, _err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    assert '"code": "sandbox_unavailable"' in out
    assert not (repo / "tasks" / task / "evidence").exists()
    assert git(repo, "rev-parse", "HEAD") == before


def test_sandbox_auto_without_bwrap_says_so_and_records_it(repo: Path, tmp_path: Path) -> None:
    task = make_task(repo, "true")
    env = {"PATH": _path_without_bwrap(tmp_path), "TASKFS_SANDBOX": "auto"}
    proc = taskfs_popen("check", task, "--json", cwd=repo, env=env)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "without a sandbox" in err
    assert "bwrap" in err
    evidence = (repo / out.split('"evidence": "')[1].split('"')[0]).read_text()
    assert "kind: none" in evidence
    assert "mode: auto" in evidence
    assert "reason: bwrap (bubblewrap) was not found on PATH" in evidence


@needs_bwrap
def test_the_configured_default_applies_and_the_flag_overrides_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TASKFS_SANDBOX")
    task = make_task(repo, "true")
    assert evidence_of(repo, check(task))["sandbox"]["kind"] == "bubblewrap"
    assert evidence_of(repo, check(task, "--sandbox", "off"))["sandbox"]["kind"] == "none"
    monkeypatch.setenv("TASKFS_SANDBOX", "off")
    assert evidence_of(repo, check(task))["sandbox"]["mode"] == "off"
    monkeypatch.setenv("TASKFS_SANDBOX", "sometimes")
    assert check(task).codes == ["invalid_value"]


@needs_bwrap
def test_the_watcher_runs_checks_in_the_same_sandbox(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from taskfs.api.evidence.requests import record_evidence
    from taskfs.store.repository import Repository

    monkeypatch.delenv("TASKFS_SANDBOX")
    task = make_task(repo, "ls /proc > src/procs.txt")
    (repo / "src").mkdir()
    evidence = record_evidence(Repository.open(repo), task)
    assert evidence.verdict == "pass"
    doc = yamlio.load((repo / evidence.path).read_bytes())
    assert doc["sandbox"]["kind"] == "bubblewrap"
    pids = [line for line in (repo / "src" / "procs.txt").read_text().split() if line.isdigit()]
    assert len(pids) < 10


def test_a_committed_config_cannot_switch_the_sandbox_off(repo: Path) -> None:
    task = make_task(repo, "true")
    config = repo / ".taskfs" / "config.yaml"
    config.write_text(config.read_text().replace("sandbox: auto", "sandbox: 'off'"))
    result = check(task)
    assert result.codes == ["config_invalid"]
    assert "--sandbox off" in result.json["errors"][0]["message"]
    assert not (repo / "tasks" / task / "evidence").exists()
    config.write_text(config.read_text().replace("sandbox: 'off'", "sandbox: on"))
    assert check(task, "--sandbox", "off").code == 0


# -- the time limit ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", ["nan", "NaN", "-nan", "inf", "-inf", "1e400", "1e300", "86401", "0", "-1", "x"]
)
def test_a_time_limit_that_is_not_a_sane_number_is_a_usage_error(repo: Path, value: str) -> None:
    task = make_task(repo, "true")
    result = check(task, "--timeout", value)
    assert result.code == 2
    assert result.codes == ["usage"]
    assert not (repo / "tasks" / task / "evidence").exists()


def test_the_largest_and_a_tiny_time_limit_are_accepted(repo: Path) -> None:
    task = make_task(repo, "sleep 5")
    tiny = check(task, "--timeout", "1e-9")
    assert tiny.code == 1
    assert evidence_of(repo, tiny)["limits"]["timedOut"] is True
    quick = make_task(repo, "true", filesAndInterfaces=["quick/**"])
    largest = check(quick, "--timeout", "86400")
    assert evidence_of(repo, largest)["limits"]["timeoutSeconds"] == 86400


def test_the_library_refuses_a_nan_time_limit_by_name(repo: Path) -> None:
    from taskfs.api.evidence import checks as evidence
    from taskfs.errors import TaskfsError
    from taskfs.store.repository import Repository

    task = make_task(repo, "true")
    with pytest.raises(TaskfsError) as refused:
        evidence.check(Repository.open(repo), task, timeout=float("nan"))
    assert refused.value.codes == ["invalid_value"]


@needs_bwrap
def test_a_fresh_check_in_the_sandbox_reads_git_but_cannot_plant_in_it(repo: Path) -> None:
    command = (
        'common="$(git rev-parse --path-format=absolute --git-common-dir)"; '
        "git log --oneline -1 >/dev/null && "
        'echo planted > "$common/hooks/post-commit"; git status --short >/dev/null; true'
    )
    task = make_task(repo, command)
    result = check(task, "--sandbox", "on", "--fresh")
    assert result.code == 0, result.stderr
    doc = evidence_of(repo, result)
    assert doc["fresh"] is True
    assert doc["sandbox"]["kind"] == "bubblewrap"
    assert "Read-only file system" in doc["stderr"]
    assert not (repo / ".git" / "hooks" / "post-commit").exists()
