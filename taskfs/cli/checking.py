"""`taskfs check`, free of click: the click command (`taskfs.cli.evidence`) and the fast path
(`taskfs.cli.fast`) both call `check`, so a check answers the same whichever read its
arguments (issue 31).

A check on a terminal shows what it runs, streams the command's output to stderr and keeps an
elapsed-time line below it; under --json, or when stderr is not a terminal, it is quiet. What
it prints is read from the evidence document it wrote (no evidence model is loaded).
"""

from __future__ import annotations

import codecs
import sys
import threading
import time
from typing import IO, Any

from taskfs import i18n
from taskfs.api.context import acting_agent
from taskfs.cli import interrupts
from taskfs.cli.output import act, open_repo
from taskfs.core.display import safe
from taskfs.core.shapes import document


def check(
    task_id: str,
    *,
    timeout: float | None,
    fresh: bool,
    request: bool,
    text: str,
    sandbox: str | None,
    network: bool | None,
    agent: str | None,
    as_json: bool,
) -> int:
    """Run the acceptance check and record its evidence; exit 0 when it passed."""
    from taskfs.api.evidence import checks as evidence

    if request:
        from taskfs.api.messages import sending as messages
        from taskfs.api.views import agents as agent_views

        def asked(sent: messages.Sent) -> tuple[dict[str, Any], str]:
            line = i18n.say("{msg_id}: check requested", msg_id=sent.record.msg_id)
            return document(True, **agent_views.sent(sent)), line

        return act(
            as_json,
            lambda: messages.request_check(open_repo(), task_id, acting_agent(agent) or "", text),
            asked,
        )

    progress = TerminalProgress(sys.stderr) if not as_json and _is_tty(sys.stderr) else None
    try:
        with interrupts.like_sigint():
            return act(
                as_json,
                lambda: evidence.check(
                    open_repo(),
                    task_id,
                    timeout=timeout,
                    fresh=fresh,
                    agent=acting_agent(agent, required=False),
                    progress=progress,
                    sandbox=sandbox,
                    network=network,
                ),
                render_checked,
            )
    except interrupts.Interrupted as stopped:
        # The command's processes were killed and nothing was written.
        said = i18n.say("check stopped by {signal}; no evidence recorded", signal=stopped.name)
        sys.stderr.write(f"taskfs: {said}\n")
        return stopped.exit_status
    finally:
        if progress is not None:
            progress.close()


def _is_tty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def render_checked(result: Any) -> tuple[dict[str, Any], str]:
    from taskfs.api.views import checks

    record = result.document
    if result.sandbox_fallback:
        # Said on stderr whatever the output format: the evidence records it too.
        said = i18n.say(
            "the check ran without a sandbox: {why} (install bubblewrap: apt-get install "
            "bubblewrap on Debian and Ubuntu, dnf install bubblewrap on Fedora, pacman -S "
            "bubblewrap on Arch; or --sandbox on to refuse instead)",
            why=result.sandbox_fallback,
        )
        sys.stderr.write(f"taskfs: {said}\n")
    for found in result.warnings:  # what the command planted in git's files, and was undone
        sys.stderr.write(safe(f"taskfs: warning[{found.code}]: {found.message}") + "\n")
    fields = checks.document(result)
    doc = document(bool(fields.pop("ok")), **fields)
    runner = record.get("runner")
    signed = (
        i18n.say("signed by runner {runner}", runner=runner["name"])
        if runner
        else i18n.say("unsigned")
    )
    lines = [
        i18n.say(
            "{evidence}: {verdict} (exit {exit_code} after {seconds} s, {signed})",
            evidence=result.evidence,
            verdict=record["verdict"],
            exit_code=record["exitCode"],
            seconds=f"{record['durationSeconds']:.1f}",
            signed=signed,
        )
    ]
    lines += [f"  {note}" for note in _notes(record)]
    lines += [f"  {note}" for note in checks.notices(result)]
    lines += [f"  {line}" for line in checks.output_lines(record)]
    return doc, "\n".join(lines)


def _notes(record: dict[str, Any]) -> list[str]:
    notes = []
    limits = record["limits"]
    if record.get("spawnError"):
        notes.append(i18n.say("could not start: {error}", error=record["spawnError"]))
    if limits["timedOut"]:
        notes.append(
            i18n.say(
                "timed out after {seconds} s: its process group was killed",
                seconds=f"{limits['timeoutSeconds']:g}",
            )
        )
    if limits["leftoverKilled"]:
        notes.append(i18n.say("it left processes running; they were killed"))
    if limits["outputCapped"]:
        notes.append(
            i18n.say(
                "output capped: {bytes} bytes kept of each stream", bytes=limits["outputCapBytes"]
            )
        )
    if record["ownedFiles"].get("changedDuringRun"):
        notes.append(
            i18n.say("the check changed files the task owns: this evidence is already stale")
        )
    end_to_end = record["endToEnd"]
    run = end_to_end.get("run")
    if run is not None:
        notes.append(
            i18n.say(
                "end-to-end command: {verdict} (exit {exit_code})",
                verdict=run["verdict"],
                exit_code=run["exitCode"],
            )
        )
    elif end_to_end.get("skipped"):
        notes.append(i18n.say("end-to-end command not run: {why}", why=end_to_end["skipped"]))
    return notes


class TerminalProgress:
    """Streams a check's output to a terminal with an elapsed-time line kept below it."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._what = ""
        self._limit = 0.0
        self._start = 0.0
        self._status_shown = False
        self._line_start = True
        self._decoders: dict[str, codecs.IncrementalDecoder] = {}

    def started(self, what: str, command: str, timeout: float) -> None:
        self.close()
        with self._lock:
            self._what, self._limit, self._start = what, timeout, time.monotonic()
            self._decoders = {}
            said = i18n.say(
                "running the {what} (limit {limit} s): {command}",
                what=what,
                limit=f"{timeout:g}",
                command=command,
            )
            self._write(f"taskfs: {said}\n")
            self._line_start = True
            self._draw()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True)
        self._thread.start()

    def output(self, stream: str, chunk: bytes) -> None:
        decoder = self._decoders.setdefault(
            stream, codecs.getincrementaldecoder("utf-8")(errors="replace")
        )
        text = decoder.decode(chunk)
        if not text:
            return
        with self._lock:
            self._clear()
            self._write(text)
            self._line_start = text.endswith("\n")
            self._draw()

    def close(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        with self._lock:
            self._clear()
            if not self._line_start:
                self._write("\n")
                self._line_start = True

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            with self._lock:
                self._draw()

    def _draw(self) -> None:
        if not self._line_start:
            return
        elapsed = time.monotonic() - self._start
        self._clear()
        said = i18n.say(
            "{what}: {elapsed} s of {limit} s",
            what=self._what,
            elapsed=f"{elapsed:.0f}",
            limit=f"{self._limit:g}",
        )
        self._write(f"\r[{said}]")
        self._status_shown = True

    def _clear(self) -> None:
        if self._status_shown:
            self._write("\r\x1b[K")
            self._status_shown = False

    def _write(self, text: str) -> None:
        try:
            # The check's output is a sender's command's: shown escaped, as every text is.
            self._stream.write(safe(text))
            self._stream.flush()
        except (OSError, ValueError):
            pass
