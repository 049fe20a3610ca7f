"""Headless Chromium for tests and scripts that need to see a page as a person would.

`find_chromium()` looks for Debian's `chromium` (or Google Chrome, or `$TASKFS_CHROMIUM`).
Every run gets a throwaway profile, no network (every host name fails to resolve), and its own
process group, which is killed afterwards so that no renderer or zygote outlives it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
# Read when the tests are collected: each test's environment is emptied of TASKFS_ variables
# (tests/conftest.py) before it runs, so a test cannot read it then.
REQUIRED = os.environ.get("TASKFS_REQUIRE_CHROMIUM") == "1"
CONFIGURED = os.environ.get("TASKFS_CHROMIUM")


def find_chromium() -> str | None:
    configured = os.environ.get("TASKFS_CHROMIUM") or CONFIGURED
    if configured:
        return shutil.which(configured)
    return next((found for name in NAMES if (found := shutil.which(name))), None)


def chromium(*args: str, timeout: float = 120) -> str:
    """Run headless Chromium with `args`; return its stdout."""
    binary = find_chromium()
    if binary is None:
        raise FileNotFoundError("no chromium: apt-get install chromium, or set TASKFS_CHROMIUM")
    with tempfile.TemporaryDirectory(prefix="taskfs-chromium-") as profile:
        command = [
            binary,
            "--headless",
            "--no-sandbox",  # root in a container has no user namespaces for the sandbox
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--hide-scrollbars",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            f"--user-data-dir={profile}",
            *args,
        ]
        proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, "HOME": profile},
        )
        try:
            out, err = proc.communicate(timeout=timeout)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    if proc.returncode != 0:
        raise RuntimeError(f"chromium exited {proc.returncode}: {err.decode()[-2000:]}")
    return out.decode("utf-8", "replace")


def dump_dom(page: Path, *, width: int = 1400, height: int = 900) -> str:
    """The page's DOM after its scripts ran (laid out in a window of that size), serialised."""
    return chromium(f"--window-size={width},{height}", "--dump-dom", page.resolve().as_uri())


def screenshot(page: Path, out: Path, *, width: int, height: int) -> None:
    chromium(
        f"--screenshot={out.resolve()}", f"--window-size={width},{height}", page.resolve().as_uri()
    )


def need_chromium() -> None:
    """Skip the calling test, saying why, when no Chromium can be found; fail instead when
    CI asked for Chromium (`TASKFS_REQUIRE_CHROMIUM=1`, as `.ci/run` sets it)."""
    import pytest

    if find_chromium() is not None:
        return
    why = "no chromium found (apt-get install chromium, or set TASKFS_CHROMIUM)"
    if REQUIRED:
        pytest.fail(f"TASKFS_REQUIRE_CHROMIUM=1 but {why}")
    pytest.skip(f"{why}; .ci/run installs it and runs this test")
