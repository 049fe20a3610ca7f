"""Where an acceptance command runs: in a bubblewrap sandbox when the host has one.

The sandbox (`bwrap`, Debian's `bubblewrap`) gives the command:

- a pid namespace of its own: it sees only its own processes (so no `/proc/<pid>/environ` of
  taskfs or anything else), and every process it started dies when the check ends or when
  taskfs dies, daemons included;
- the whole file system read-only, except the worktree it checks (whose git dir stays
  read-only: a hook or `core.fsmonitor` planted there would run later outside the sandbox), a
  fresh HOME and an empty `/tmp`; the real HOME, `/run` (service sockets) and the operator's
  taskfs files (private keys, ledger, policy, trust list) are not visible at all;
- no network (a namespace with only its own loopback) unless the operator allows it;
- no capabilities, even when taskfs runs as root.

It does not contain CPU, memory or disk use, reading world-readable files outside HOME, or
kernel exploits.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Mode = Literal["auto", "on", "off"]
MODES: tuple[Mode, ...] = ("auto", "on", "off")
KIND = "bubblewrap"
BWRAP = "bwrap"
_PROBE_TIMEOUT = 20


@dataclass(frozen=True)
class Sandbox:
    bwrap: str
    network: bool
    writable: tuple[str, ...]
    readonly: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()


@dataclass(frozen=True)
class Choice:
    """The sandbox to use, or None and why not (`reason`)."""

    sandbox: Sandbox | None
    reason: str | None


def choose(
    mode: Mode,
    *,
    network: bool,
    writable: Sequence[str],
    readonly: Sequence[str] = (),
    hidden: Sequence[str] = (),
    path: str | None = None,
    git_dir: str | None = None,
) -> Choice:
    """The sandbox `mode` asks for, when bwrap is on `path` ($PATH by default) and works
    (remembered in `git_dir`'s caches, when given: `probed`)."""
    if mode == "off":
        return Choice(None, "turned off (--sandbox off)")
    bwrap = shutil.which(BWRAP, path=path if path is not None else os.environ.get("PATH"))
    if bwrap is None:
        return Choice(None, f"{BWRAP} (bubblewrap) was not found on PATH")
    broken = probed(bwrap, git_dir) if git_dir is not None else probe(bwrap)
    if broken is not None:
        return Choice(None, broken)
    spec = Sandbox(
        bwrap,
        network,
        tuple(_real(p) for p in writable),
        tuple(_real(p) for p in readonly),
        tuple(_real(p) for p in hidden),
    )
    return Choice(spec, None)


def probed(bwrap: str, git_dir: str) -> str | None:
    """`probe`, remembered (sealed, `taskfs.readmodel.cache`) while bwrap, the kernel, the user
    and the kernel's namespace settings are the ones it worked under: a check pays for
    starting bwrap once, not twice. Only that it works is remembered."""
    from taskfs.readmodel import cache

    key = _host(bwrap)
    if cache.recall(git_dir, "host", "sandbox", key) is True:
        return None
    broken = probe(bwrap)
    if broken is None:
        cache.remember(git_dir, "host", "sandbox", key, True)
    return broken


def _host(bwrap: str) -> tuple[object, ...]:
    """What decides whether bwrap works here: the binary, the kernel, the user, and the
    kernel's settings for unprivileged namespaces."""
    settings: list[str | None] = []
    for setting in (
        "/proc/sys/kernel/unprivileged_userns_clone",
        "/proc/sys/user/max_user_namespaces",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    ):
        try:
            with open(setting, encoding="ascii") as handle:
                settings.append(handle.read().strip())
        except OSError:
            settings.append(None)
    try:
        found = os.stat(bwrap)
        binary: tuple[object, ...] = (bwrap, found.st_ino, found.st_size, found.st_mtime_ns)
    except OSError:
        binary = (bwrap,)
    return (*binary, os.uname().release, os.getuid(), *settings)


@functools.cache
def probe(bwrap: str) -> str | None:
    """None when `bwrap` can make the namespaces a check needs here; else why not."""
    from taskfs.runner import contain

    argv = [bwrap, *_base(network=False), "--", "/bin/true"]
    # bwrap's outer process may exit before the namespace's init is reaped: as its subreaper
    # we reap that init ourselves instead of leaving it to whoever is pid 1.
    with contain.subreaper():
        known = contain.children()
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            )
        except (OSError, ValueError) as exc:
            return f"{bwrap} could not be run: {exc}"
        since = contain.started(proc.pid)
        try:
            _out, err = proc.communicate(timeout=_PROBE_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            _out, err = proc.communicate()
        finally:
            contain.sweep_orphans(since, known)
    if proc.returncode != 0:
        said = err.decode("utf-8", "replace").strip().splitlines()
        return f"{bwrap} does not work here: {said[-1] if said else f'exit {proc.returncode}'}"
    return None


def argv(sandbox: Sandbox, *, home: str | None, cwd: str, inner: Sequence[str]) -> list[str]:
    """The bwrap command line that runs `inner` in `cwd` inside `sandbox`."""
    words = [sandbox.bwrap, *_base(network=sandbox.network)]
    home_real = os.path.realpath(os.path.expanduser("~"))
    for path in (home_real, *sandbox.hidden):
        words += _hide(path)
    if sandbox.network and os.path.isdir("/run/systemd/resolve"):
        # /etc/resolv.conf often points there; name resolution is part of the network.
        words += ["--ro-bind", "/run/systemd/resolve", "/run/systemd/resolve"]
    for path in sandbox.writable:
        words += ["--bind", path, path]
    for path in sandbox.readonly:
        if os.path.exists(path):
            words += ["--ro-bind", path, path]
    if home is not None:
        words += ["--bind", home, home]
    for path in toolchains():
        words += ["--ro-bind", path, path]
    return [*words, "--chdir", _real(cwd), "--", *inner]


# The sandbox's /tmp and /run are fresh and empty; these are what the host keeps under them.
_FRESH = ("/tmp/", "/run/")


def toolchains() -> list[str]:
    """The folders of the command's tools that the fresh /tmp and /run would hide, bound back
    read-only: the directories on PATH and this Python's environment (a CI job's clone, and its
    virtual environment, often live under /tmp). Nothing else of the host's /tmp comes back."""
    found: list[str] = []
    for entry in [*os.environ.get("PATH", "").split(os.pathsep), sys.prefix]:
        if not entry or not os.path.isabs(entry):
            continue
        path = os.path.normpath(entry)
        if os.path.basename(path) == "bin" and os.path.isfile(
            os.path.join(os.path.dirname(path), "pyvenv.cfg")
        ):
            path = os.path.dirname(path)  # the whole virtual environment, not only its bin/
        if path.startswith(_FRESH) and os.path.isdir(path) and path not in found:
            found.append(path)
    return found


def _base(*, network: bool) -> list[str]:
    words = ["--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    if not network:
        words.append("--unshare-net")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # Root inside keeps its capabilities unless told otherwise, and could remount / rw.
        words += ["--cap-drop", "ALL"]
    words += ["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
    return [*words, "--tmpfs", "/tmp", "--tmpfs", "/run"]


def _hide(path: str) -> list[str]:
    if path in ("", "/") or not os.path.lexists(path):
        return []
    if os.path.isdir(path):
        return ["--tmpfs", path]
    return ["--ro-bind", "/dev/null", path]


def _real(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(path))
