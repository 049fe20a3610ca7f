"""Run an acceptance check and record faithfully what happened.

The command string comes from an untrusted envelope, so a run is bounded on every side: it gets
no stdin, a scrubbed environment with a fresh HOME, a time limit enforced on its whole process
group (it runs in a session of its own), and an output cap that keeps the head and tail of each
stream while the full stream is still counted and hashed. Whatever the command does comes back
as a `RunResult`; nothing it does makes this module raise.

No `preexec_fn` is used: the caller is a threaded watcher, where forking with Python code to
run in the child is unsafe.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import math
import os
import selectors
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import IO

from taskfs.runner import contain
from taskfs.runner import sandbox as sandboxes

# Enough to find tools and decode text the way the user would, and nothing that authenticates:
# no tokens, agent sockets, cloud or git credentials, proxies, or interpreter paths (PYTHONPATH,
# VIRTUAL_ENV) that would make the result depend on the caller's shell. HOME and TMPDIR are not
# listed because they are always replaced by the run's fresh directory. SHELL is left out: the
# command runs under /bin/sh whatever the user's login shell is.
DEFAULT_ENV_ALLOW: tuple[str, ...] = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TERM",
    "USER",
    "LOGNAME",
)
DEFAULT_OUTPUT_CAP = 64 * 1024
DEFAULT_GRACE = 0.5

SHELL = "/bin/sh"
SPAWN_FAILED_EXIT = 127
_READ_SIZE = 64 * 1024
# How often the main process is checked while its pipes stay quiet or are held by a child.
_POLL = 0.05
# After the group is gone, buffered output is read at once; only a process that left the
# session can still hold a pipe open, and it is not waited for longer than this.
_DRAIN_TIMEOUT = 0.5
# While a group is being killed: how often to look, and how long SIGKILL may take to land.
_KILL_POLL = 0.01
_KILL_CONFIRM = 0.25
_SETTLE = 0.1

OutputCallback = Callable[[str, bytes], None]


@dataclass(frozen=True)
class StreamCapture:
    text: str
    total_bytes: int
    sha256: str
    truncated: bool


@dataclass(frozen=True)
class RunResult:
    command: str
    exit_code: int
    signal: int | None
    started_at: datetime
    duration_seconds: float
    stdout: StreamCapture
    stderr: StreamCapture
    timed_out: bool
    leftover_killed: bool
    spawn_error: str | None
    # The caller asked it to stop (`stop`) before it ended: the group was killed as on a timeout.
    stopped: bool = False

    @property
    def passed(self) -> bool:
        return (
            self.exit_code == 0
            and not self.timed_out
            and not self.stopped
            and self.spawn_error is None
        )


def scrubbed_env(
    source: Mapping[str, str],
    *,
    allow: Iterable[str] = DEFAULT_ENV_ALLOW,
    home: str,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The allow-listed part of `source`, with HOME and TMPDIR set to `home`, then `extra`.

    An allow entry ending in `*` keeps every name starting with what precedes it ("LC_*").
    """
    names = list(allow)
    exact = {name for name in names if not name.endswith("*")}
    prefixes = tuple(name[:-1] for name in names if name.endswith("*"))
    env = {k: v for k, v in source.items() if k in exact or k.startswith(prefixes)}
    env["HOME"] = home
    env["TMPDIR"] = home
    if extra:
        env.update(extra)
    return env


def run_command(
    command: str,
    *,
    cwd: str | os.PathLike[str],
    timeout: float,
    env: Mapping[str, str] | None = None,
    output_cap: int = DEFAULT_OUTPUT_CAP,
    grace: float = DEFAULT_GRACE,
    on_output: OutputCallback | None = None,
    clock: Callable[[], datetime] | None = None,
    sandbox: sandboxes.Sandbox | None = None,
    stop: Callable[[], object] | None = None,
) -> RunResult:
    """Run `/bin/sh -c command` in `cwd` and report how it ended.

    With `sandbox` the shell runs inside it (`taskfs.runner.sandbox`); without, it runs
    unprivileged and taskfs guards itself (`taskfs.runner.contain`). Either way every process
    the command leaves behind is killed when it ends.

    With `env` None the command gets `scrubbed_env(os.environ, ...)` with a HOME created for
    this run and removed afterwards; a given `env` is used exactly as it is.
    `on_output("stdout"|"stderr", chunk)` sees every chunk as it arrives; its exceptions are
    swallowed. `stop()`, asked every few milliseconds while the command runs, ends it early when
    it answers True: its whole group is killed as on a timeout, and the result says `stopped`.
    Invalid limits raise ValueError; nothing the command does raises.
    """
    _check_limits(timeout, output_cap, grace)
    job = _Job(command, cwd, {}, timeout, output_cap, grace, on_output, clock, sandbox, None, stop)
    if env is not None:
        return _run(replace(job, env=dict(env), home=env.get("HOME")))
    home = tempfile.mkdtemp(prefix="taskfs-home-")
    try:
        return _run(replace(job, env=scrubbed_env(os.environ, home=home), home=home))
    finally:
        _remove_tree(home)


@dataclass(frozen=True)
class _Job:
    command: str
    cwd: str | os.PathLike[str]
    env: dict[str, str]
    timeout: float
    output_cap: int
    grace: float
    on_output: OutputCallback | None
    clock: Callable[[], datetime] | None
    sandbox: sandboxes.Sandbox | None
    home: str | None
    stop: Callable[[], object] | None = None

    def argv(self) -> list[str]:
        inner = [SHELL, "-c", self.command]
        if self.sandbox is None:
            return [*contain.unprivileged_prefix(), *inner]
        home = self.home if self.home and os.path.isdir(self.home) else None
        return sandboxes.argv(self.sandbox, home=home, cwd=os.fspath(self.cwd), inner=inner)


def _check_limits(timeout: float, output_cap: int, grace: float) -> None:
    if not (timeout > 0 and math.isfinite(timeout)):
        raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
    if output_cap < 0:
        raise ValueError(f"output_cap must not be negative, not {output_cap!r}")
    if not (grace >= 0 and math.isfinite(grace)):
        raise ValueError(f"grace must be a non-negative number of seconds, not {grace!r}")


def _run(job: _Job) -> RunResult:
    started_at = job.clock() if job.clock is not None else datetime.now(timezone.utc)
    start = time.monotonic()
    sinks = {"stdout": _Sink(job.output_cap), "stderr": _Sink(job.output_cap)}
    # Before anything is spawned: the command must not read our environment or memory.
    contain.make_undumpable()
    with contain.subreaper():
        return _spawn_and_supervise(job, started_at, start, sinks)


def _spawn_and_supervise(
    job: _Job, started_at: datetime, start: float, sinks: dict[str, _Sink]
) -> RunResult:
    known = contain.children()
    try:
        proc = subprocess.Popen(
            job.argv(),
            cwd=job.cwd,
            env=job.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
            close_fds=True,
            start_new_session=True,
        )
    except (OSError, ValueError) as exc:
        # ValueError: a NUL byte in the command or environment, which exec cannot carry.
        return RunResult(
            command=job.command,
            exit_code=SPAWN_FAILED_EXIT,
            signal=None,
            started_at=started_at,
            duration_seconds=time.monotonic() - start,
            stdout=sinks["stdout"].capture(),
            stderr=sinks["stderr"].capture(),
            timed_out=False,
            leftover_killed=False,
            spawn_error=f"could not start {SHELL} in {os.fspath(job.cwd)!r}: {exc}",
        )
    ended = _supervise_safely(
        proc, sinks, job.on_output, job.timeout, job.grace, known=known, stop=job.stop
    )
    exit_code, signum = _exit_status(proc.returncode)
    return RunResult(
        command=job.command,
        exit_code=exit_code,
        signal=signum,
        started_at=started_at,
        duration_seconds=time.monotonic() - start,
        stdout=sinks["stdout"].capture(),
        stderr=sinks["stderr"].capture(),
        timed_out=ended.timed_out,
        leftover_killed=ended.leftover_killed,
        spawn_error=None,
        stopped=ended.stopped,
    )


@dataclass(frozen=True)
class _Ended:
    timed_out: bool = False
    leftover_killed: bool = False
    stopped: bool = False


def _supervise_safely(
    proc: subprocess.Popen[bytes],
    sinks: dict[str, _Sink],
    on_output: OutputCallback | None,
    timeout: float,
    grace: float,
    *,
    known: frozenset[tuple[int, int]],
    stop: Callable[[], object] | None = None,
) -> _Ended:
    pump = _Pump(proc, sinks, on_output)
    contain.register(proc.pid)
    since = contain.started(proc.pid)
    finished = False
    try:
        ended = _supervise(proc, pump, time.monotonic() + timeout, grace, stop)
        finished = True
    finally:
        if not finished:
            # Interrupted (KeyboardInterrupt, say): never leave the group running behind us.
            _signal_group(proc.pid, signal.SIGKILL)
        proc.wait()
        contain.unregister(proc.pid)
        # Daemons that left the group (setsid, double fork) were re-parented to us.
        orphans_killed = contain.sweep_orphans(since, known)
        pump.drain(_DRAIN_TIMEOUT)
        pump.close()
    if orphans_killed:
        ended = replace(ended, leftover_killed=True)
    return ended


def _supervise(
    proc: subprocess.Popen[bytes],
    pump: _Pump,
    deadline: float,
    grace: float,
    stop: Callable[[], object] | None = None,
) -> _Ended:
    # start_new_session makes the shell a session and group leader: its pid is the group id.
    pgid = proc.pid
    waited = _wait_main(proc, pump, deadline, stop)
    if waited != "exited":
        _kill_group(pgid, proc, pump, grace)
        return _Ended(timed_out=waited == "timed_out", stopped=waited == "stopped")
    # A member already on its way out (a sandbox's init, reaped after the sandbox) is no
    # leftover: give the group a moment to empty by itself.
    _await_group_exit(pgid, proc, pump, _SETTLE)
    if not _group_alive(pgid):
        return _Ended()
    _kill_group(pgid, proc, pump, grace)
    return _Ended(leftover_killed=True)


def _wait_main(
    proc: subprocess.Popen[bytes],
    pump: _Pump,
    deadline: float,
    stop: Callable[[], object] | None = None,
) -> str:
    """Pump output until the main process exits ("exited"), the deadline passes
    ("timed_out") or `stop()` says to ("stopped")."""
    while proc.poll() is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return "timed_out"
        if stop is not None and _asked(stop):
            return "stopped"
        if pump.is_open:
            pump.step(min(remaining, _POLL))
        else:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(min(remaining, _POLL) if stop is not None else remaining)
    return "exited"


def _asked(stop: Callable[[], object]) -> bool:
    try:
        return bool(stop())
    except Exception:  # a caller's question must not leave the command unsupervised
        return False


def _kill_group(pgid: int, proc: subprocess.Popen[bytes], pump: _Pump, grace: float) -> None:
    _signal_group(pgid, signal.SIGTERM)
    _await_group_exit(pgid, proc, pump, grace)
    # Sent even when the group looked gone: a member forked during the check may have hidden.
    _signal_group(pgid, signal.SIGKILL)
    # SIGKILL is delivered asynchronously; report "killed" only once it has taken effect.
    _await_group_exit(pgid, proc, pump, _KILL_CONFIRM)


def _await_group_exit(
    pgid: int, proc: subprocess.Popen[bytes], pump: _Pump, timeout: float
) -> None:
    end = time.monotonic() + timeout
    while True:
        # Reap the shell so that, once it has exited, it no longer counts as a member.
        proc.poll()
        remaining = end - time.monotonic()
        if remaining <= 0 or not _group_alive(pgid):
            return
        # Keep reading: a process blocked on a full pipe could not act on SIGTERM.
        pump.step(min(_KILL_POLL, remaining))


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _group_alive(pgid: int) -> bool:
    """Whether the group has a member that can still run (zombies do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        # Nothing in it we may signal (macOS also answers this for a group of zombies).
        return False
    return not _only_zombies(pgid)


def _only_zombies(pgid: int) -> bool:
    """True when /proc shows members of the group and all of them are zombies.

    Where the parent of orphans does not reap them (some container inits), a finished
    background job stays a zombie in the group forever. Without /proc this answers False and
    the caller falls back on the signals, which only costs the grace period.
    """
    try:
        names = os.listdir("/proc")
    except OSError:
        return False
    seen = False
    for name in names:
        if not name.isdigit():
            continue
        state_and_group = _proc_state_and_group(name)
        if state_and_group is None or state_and_group[1] != pgid:
            continue
        if state_and_group[0] not in (b"Z", b"X"):
            return False
        seen = True
    return seen


def _proc_state_and_group(pid: str) -> tuple[bytes, int] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat_file:
            data = stat_file.read()
    except OSError:
        return None
    # The command name is in parentheses and may itself contain ") ".
    fields = data[data.rfind(b")") + 2 :].split()
    if len(fields) < 3 or not fields[2].isdigit():
        return None
    return fields[0], int(fields[2])


def _exit_status(returncode: int) -> tuple[int, int | None]:
    if returncode < 0:
        return 128 - returncode, -returncode
    return returncode, None


class _Sink:
    """Counts and hashes a whole stream but keeps only its first and last bytes."""

    def __init__(self, cap: int) -> None:
        self._head_cap = cap // 2
        self._tail_cap = cap - self._head_cap
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0
        self._digest = hashlib.sha256()

    def feed(self, chunk: bytes) -> None:
        self._total += len(chunk)
        self._digest.update(chunk)
        view = memoryview(chunk)
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += view[:room]
            view = view[room:]
        if view and self._tail_cap:
            self._tail += view[-self._tail_cap :]
            excess = len(self._tail) - self._tail_cap
            if excess > 0:
                del self._tail[:excess]

    def capture(self) -> StreamCapture:
        kept = len(self._head) + len(self._tail)
        truncated = self._total > kept
        if truncated:
            text = _join_truncated(bytes(self._head), bytes(self._tail), self._total)
        else:
            text = (self._head + self._tail).decode("utf-8", errors="replace")
        return StreamCapture(text, self._total, self._digest.hexdigest(), truncated)


def capture_stream(read: Callable[[int], bytes], cap: int) -> StreamCapture:
    """Read `read(size)` to its end, keeping what a check's output keeps of it: the head and
    the tail within `cap` bytes, while the whole stream is counted and hashed."""
    sink = _Sink(cap)
    while chunk := read(_READ_SIZE):
        sink.feed(chunk)
    return sink.capture()


def _join_truncated(head: bytes, tail: bytes, total: int) -> str:
    # Cut at character boundaries so the marker does not sit between halves of one character.
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    head_text = decoder.decode(head, final=False)
    pending = len(decoder.getstate()[0])
    skip = 0
    while skip < min(3, len(tail)) and 0x80 <= tail[skip] <= 0xBF:
        skip += 1
    tail_text = tail[skip:].decode("utf-8", errors="replace")
    omitted = total - len(head) - len(tail) + pending + skip
    separator = "" if not head_text or head_text.endswith("\n") else "\n"
    return f"{head_text}{separator}[... {omitted} bytes omitted ...]\n{tail_text}"


class _Pump:
    """Reads the child's stdout and stderr together, without blocking on either."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        sinks: dict[str, _Sink],
        on_output: OutputCallback | None,
    ) -> None:
        self._sinks = sinks
        self._on_output = on_output
        self._selector = selectors.DefaultSelector()
        for name, pipe in (("stdout", proc.stdout), ("stderr", proc.stderr)):
            if pipe is not None:
                self._selector.register(pipe, selectors.EVENT_READ, name)

    @property
    def is_open(self) -> bool:
        return bool(self._selector.get_map())

    def step(self, timeout: float) -> None:
        """Read what is ready within `timeout` seconds (sleep if both pipes are closed)."""
        if not self.is_open:
            time.sleep(timeout)
            return
        for key, _ in self._selector.select(timeout):
            self._read(key)

    def drain(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        while self.is_open:
            remaining = end - time.monotonic()
            if remaining <= 0:
                return
            self.step(remaining)

    def close(self) -> None:
        for key in list(self._selector.get_map().values()):
            self._forget(key)
        self._selector.close()

    def _read(self, key: selectors.SelectorKey) -> None:
        try:
            chunk = os.read(key.fd, _READ_SIZE)
        except OSError:
            chunk = b""
        if not chunk:
            self._forget(key)
            return
        name: str = key.data
        self._sinks[name].feed(chunk)
        if self._on_output is not None:
            # Progress display must not be able to spoil the evidence.
            with contextlib.suppress(Exception):
                self._on_output(name, chunk)

    def _forget(self, key: selectors.SelectorKey) -> None:
        self._selector.unregister(key.fileobj)
        pipe: IO[bytes] = key.fileobj  # type: ignore[assignment]
        pipe.close()


def _remove_tree(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)
    if not os.path.lexists(path):
        return
    # The command left directories it cannot be removed from; open them up (never through a
    # symlink, which could point anywhere) and try again.
    for root, dirs, _files in os.walk(path):
        for name in dirs:
            entry = os.path.join(root, name)
            with contextlib.suppress(OSError):
                if stat.S_ISDIR(os.lstat(entry).st_mode):
                    os.chmod(entry, 0o700)
    shutil.rmtree(path, ignore_errors=True)
