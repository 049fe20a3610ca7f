"""Keeping an acceptance command in its place when no sandbox holds it.

Three Linux facilities, each a no-op where the platform lacks it:

- taskfs makes itself non-dumpable before it spawns a check, so a command running as the same
  user cannot read `/proc/<taskfs>/environ` (the caller's secrets, the real HOME) or its memory.
  Root's command would read it anyway (CAP_SYS_PTRACE), so when taskfs holds capabilities the
  command runs without them (`setpriv`, uid unchanged): the kernel then also refuses it access
  to a process holding capabilities it lacks. (Checked by hand: as nobody, environ is readable
  dumpable and refused non-dumpable; as root, refused once the command has no capabilities.)
- taskfs is a child subreaper while a check runs: a daemon that leaves the check's process
  group (`setsid`, a double fork) is re-parented to taskfs instead of init, and is found and
  killed when the check ends.
- the shell gets SIGKILL when taskfs dies (`setpriv --pdeathsig`).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
# How long one sweep may go on killing and reaping orphans, and how often it looks again.
_SWEEP_LIMIT = 2.0
_SWEEP_POLL = 0.01

_lock = threading.Lock()
# How many checks of this process need it to be the subreaper now.
_subreapers = [0]
# The shells of the checks this process runs now: a sweep never touches another one.
_live: set[int] = set()


@functools.cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    # glibc's own name first: `find_library` runs `ldconfig -p`, a process for every check.
    for name in ("libc.so.6", None):
        try:
            return ctypes.CDLL(name or ctypes.util.find_library("c"), use_errno=True)
        except (OSError, TypeError):
            continue
    return None


def _prctl(option: int, value: int) -> bool:
    libc = _libc()
    if libc is None:
        return False
    return int(libc.prctl(option, value, 0, 0, 0)) == 0


def make_undumpable() -> bool:
    """Hide this process's environment and memory from same-user processes; False where the
    platform cannot. It lasts for the life of the process (exec resets it for children)."""
    return _prctl(_PR_SET_DUMPABLE, 0)


@contextlib.contextmanager
def subreaper() -> Iterator[bool]:
    """Be the child subreaper while the block runs (nested and threaded uses share it)."""
    with _lock:
        active = _prctl(_PR_SET_CHILD_SUBREAPER, 1) if _subreapers[0] == 0 else True
        if active:
            _subreapers[0] += 1
    try:
        yield active
    finally:
        if active:
            with _lock:
                _subreapers[0] -= 1
                if _subreapers[0] == 0:
                    # Orphans that arrive later (a detached `git gc`, say) go to init again.
                    _prctl(_PR_SET_CHILD_SUBREAPER, 0)


def register(pid: int) -> None:
    with _lock:
        _live.add(pid)


def unregister(pid: int) -> None:
    with _lock:
        _live.discard(pid)


def started(pid: int) -> int | None:
    """When `pid` started, in clock ticks since boot (from /proc); None if unknown."""
    stat = _stat(str(pid))
    return stat[4] if stat is not None else None


def children() -> frozenset[tuple[int, int]]:
    """(pid, start time) of each child this process has now: taken before a check starts, so
    that a sweep after it never mistakes one of them for the check's orphan."""
    return frozenset((pid, start) for pid, _state, _group, _sid, start in _children(os.getpid()))


def sweep_orphans(
    since: int | None, known: frozenset[tuple[int, int]] = frozenset(), limit: float = _SWEEP_LIMIT
) -> bool:
    """Kill and reap the processes a check left re-parented to us; True when one was running.

    An orphan of the check is our child, started no earlier than the check (`since`, from
    `started`), that was not our child before it (`known`, from `children`), in another
    session than ours (the check runs in a session of its own, so our own helpers, such as
    git, never match); the shells of other checks still running, and their groups, are left
    alone."""
    if since is None or not sys.platform.startswith("linux"):
        return False
    me, session = os.getpid(), os.getsid(0)
    found = False
    end = time.monotonic() + limit
    while time.monotonic() < end:
        with _lock:
            live = set(_live)
        orphans = [
            (pid, state, group)
            for pid, state, group, sid, start in _children(me)
            if sid != session
            and start >= since
            and (pid, start) not in known
            and pid not in live
            and group not in live
        ]
        if not orphans:
            return found
        for pid, state, group in orphans:
            # One that already exited (a sandbox's init, say) is only reaped.
            if state not in (b"Z", b"X"):
                found = True
                _kill(pid, group)
            _reap(pid)
        time.sleep(_SWEEP_POLL)
    return found


def _kill(pid: int, group: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    if group != os.getpgid(0):
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGKILL)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _children(parent: int) -> list[tuple[int, bytes, int, int, int]]:
    """(pid, state, process group, session, start time) of each child of `parent`."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    out = []
    for name in names:
        if name.isdigit():
            stat = _stat(name)
            if stat is not None and stat[1] == parent:
                out.append((int(name), stat[0], stat[2], stat[3], stat[4]))
    return out


def _stat(pid: str) -> tuple[bytes, int, int, int, int] | None:
    """(state, parent, process group, session, start time) from /proc/<pid>/stat."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    # The command name is in parentheses and may itself contain ") ".
    fields = data[data.rfind(b")") + 2 :].split()
    numbers = (fields[1], fields[2], fields[3], fields[19]) if len(fields) > 19 else ()
    if not numbers or not all(f.lstrip(b"-").isdigit() for f in numbers):
        return None
    parent, group, session, start = (int(f) for f in numbers)
    return fields[0], parent, group, session, start


@functools.cache
def _setpriv() -> str | None:
    path = shutil.which("setpriv")
    if path is None:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    # What `setpriv --help` said of this very binary, remembered in the user's own cache
    # folder: asking costs a process on every check.
    identity = f"{path}\0{info.st_ino}\0{info.st_size}\0{info.st_mtime_ns}\n"
    memo = os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "taskfs", "setpriv"
    )
    try:
        with open(memo, encoding="utf-8") as handle:
            said = handle.read()
        if said.startswith(identity):
            return path if said[len(identity) :] == "yes" else None
    except OSError:
        pass
    try:
        usage = subprocess.run(
            [path, "--help"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    able = "--pdeathsig" in usage and "--bounding-set" in usage
    with contextlib.suppress(OSError):  # whole or not at all: a half answer reads as unknown
        os.makedirs(os.path.dirname(memo), exist_ok=True)
        temporary = f"{memo}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(identity + ("yes" if able else "no"))
        os.replace(temporary, memo)
    return path if able else None


def _has_capabilities() -> bool:
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16) != 0
    except (OSError, ValueError, IndexError):
        pass
    return hasattr(os, "geteuid") and os.geteuid() == 0


def unprivileged_prefix() -> list[str]:
    """The words to put before an unsandboxed command: `setpriv` dropping every capability
    (when we hold any) and asking for SIGKILL should taskfs die; empty without setpriv."""
    path = _setpriv()
    if path is None:
        return []
    words = [path, "--pdeathsig", "KILL"]
    if _has_capabilities():
        words += ["--inh-caps=-all", "--bounding-set=-all"]
    return [*words, "--"]
