"""A page kept open in headless Chromium and looked at while it lives: the DevTools protocol
over Chromium's pipe (`--remote-debugging-pipe`: JSON messages ended by a NUL byte, commands
on its fd 3, answers and events on its fd 4), so no websocket library is needed.

`open_page(url)` loads the page once; `evaluate` reads it (never reloading it), `screenshot`
takes its picture. Chromium runs with a throwaway profile, no network but loopback, in its own
process group, killed when the block ends.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.browser import find_chromium


class DevToolsError(RuntimeError):
    pass


class Page:
    def __init__(self, proc: subprocess.Popen[bytes], to_browser: int, from_browser: int) -> None:
        self.proc = proc
        self.to_browser = to_browser
        self.from_browser = from_browser
        self.buffer = b""
        self.next_id = 0
        self.session: str | None = None
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, timeout: float = 60, **params: Any) -> dict[str, Any]:
        """Send a command (to the page once attached); its result."""
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if self.session is not None and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            for answer in self._read(deadline):
                if answer.get("id") == self.next_id:
                    if "error" in answer:
                        raise DevToolsError(f"{method}: {answer['error']}")
                    result: dict[str, Any] = answer.get("result", {})
                    return result
                self.events.append(answer)

    def _read(self, deadline: float) -> list[dict[str, Any]]:
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise DevToolsError("chromium did not answer in time")
            ready, _w, _x = select.select([self.from_browser], [], [], left)
            if ready:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise DevToolsError("chromium closed its pipe")
                self.buffer += chunk
        *whole, self.buffer = self.buffer.split(b"\0")
        return [json.loads(m) for m in whole if m]

    def evaluate(self, expression: str) -> Any:
        """The value of `expression` in the page (awaited when it is a promise)."""
        found = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in found:
            raise DevToolsError(f"{expression}: {found['exceptionDetails']}")
        return found.get("result", {}).get("value")

    def wait_for(self, expression: str, *, timeout: float = 60, what: str = "") -> Any:
        """Evaluate `expression` until it is truthy (polling, with a deadline); its value."""
        deadline = time.monotonic() + timeout
        value = None
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"the page never showed {what or expression} (last: {value!r})")

    def screenshot(self, out: Path) -> None:
        found = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)
        out.write_bytes(base64.b64decode(found["data"]))


@contextlib.contextmanager
def open_page(url: str, *, width: int = 1400, height: int = 1000) -> Iterator[Page]:
    binary = find_chromium()
    if binary is None:
        raise FileNotFoundError("no chromium: apt-get install chromium, or set TASKFS_CHROMIUM")
    commands_read, commands_write = os.pipe()
    answers_read, answers_write = os.pipe()
    with tempfile.TemporaryDirectory(prefix="taskfs-devtools-") as profile:
        args = [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--hide-scrollbars",
            "--remote-debugging-pipe",
            f"--window-size={width},{height}",
            f"--user-data-dir={profile}",
            "about:blank",
        ]
        # Chromium reads the protocol on fd 3 and writes on fd 4: a small trampoline puts the
        # pipes there (copied first, so that neither is overwritten by the other's move).
        place = (
            "import os, sys; r, w = os.dup(int(sys.argv[1])), os.dup(int(sys.argv[2])); "
            "os.dup2(r, 3); os.dup2(w, 4); os.set_inheritable(3, True); "
            "os.set_inheritable(4, True); os.execv(sys.argv[3], sys.argv[3:])"
        )
        proc = subprocess.Popen(
            [sys.executable, "-c", place, str(commands_read), str(answers_write), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(commands_read, answers_write),
            start_new_session=True,
            env={**os.environ, "HOME": profile},
        )
        os.close(commands_read)
        os.close(answers_write)
        page = Page(proc, commands_write, answers_read)
        try:
            target = page.call("Target.createTarget", url="about:blank")["targetId"]
            page.session = page.call("Target.attachToTarget", targetId=target, flatten=True)[
                "sessionId"
            ]
            page.call(
                "Emulation.setDeviceMetricsOverride",
                width=width,
                height=height,
                deviceScaleFactor=1,
                mobile=False,
            )
            page.call("Page.enable")
            page.call("Page.navigate", url=url)
            page.wait_for("document.readyState === 'complete'", what="the page loaded")
            yield page
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            os.close(commands_write)
            os.close(answers_read)


def until(check: Callable[[], bool], *, timeout: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not seen in {timeout} s: {what}")
        time.sleep(0.1)
