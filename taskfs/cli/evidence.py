"""`check`, `evidence add` and `keys new`: parse, call the library, render.

A check on a terminal shows what it runs, streams the command's output to stderr and keeps an
elapsed-time line below it; under --json, or when stderr is not a terminal, it is quiet.
"""

from __future__ import annotations

import codecs
import math
import sys
import threading
import time
from typing import IO, Any

import click

from taskfs import i18n
from taskfs.api.context import acting_agent
from taskfs.cli import interrupts
from taskfs.cli.group import agent_option, cli, json_option
from taskfs.cli.output import act, open_repo
from taskfs.core.display import safe
from taskfs.core.shapes import document
from taskfs.errors import fail

MAX_TIMEOUT = 24 * 60 * 60

# -- check ------------------------------------------------------------------------------------


def _finite(_ctx: click.Context, _param: click.Parameter, value: float | None) -> float | None:
    # NaN compares false with both bounds, so the range alone would let it reach the runner.
    if value is not None and math.isnan(value):
        raise click.BadParameter("nan is not a number of seconds")
    return value


@cli.command()
@click.argument("task_id")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True, max=MAX_TIMEOUT),
    callback=_finite,
    help="Time limit in seconds, more than 0 and at most 86400 (default: the envelope's, "
    "else the repository's).",
)
@click.option("--fresh", is_flag=True, help="Run in a fresh checkout of HEAD (a second opinion).")
@click.option(
    "--request",
    "request",
    is_flag=True,
    help="Do not run it here: ask for it with a result message (a watcher answers).",
)
@click.option("--text", default="", help="With --request: what to say about the result.")
@click.option(
    "--sandbox",
    type=click.Choice(["auto", "on", "off"]),
    help="Run the command in a bubblewrap sandbox: auto (when the host has one), on (refuse "
    "without), off (default: $TASKFS_SANDBOX, else check.sandbox in .taskfs/config.yaml, "
    "else auto).",
)
@click.option(
    "--network/--no-network",
    default=None,
    help="Let the sandboxed command reach the network (default: $TASKFS_CHECK_NETWORK, else no).",
)
@agent_option
@json_option
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

    record = result.record
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
    signed = (
        i18n.say("signed by runner {runner}", runner=record.runner.name)
        if record.runner
        else i18n.say("unsigned")
    )
    lines = [
        i18n.say(
            "{evidence}: {verdict} (exit {exit_code} after {seconds} s, {signed})",
            evidence=result.evidence,
            verdict=record.verdict,
            exit_code=record.exit_code,
            seconds=f"{record.duration_seconds:.1f}",
            signed=signed,
        )
    ]
    lines += [f"  {note}" for note in _notes(record)]
    lines += [f"  {note}" for note in checks.notices(result)]
    lines += [f"  {line}" for line in checks.output_lines(record)]
    return doc, "\n".join(lines)


def _notes(record: Any) -> list[str]:
    notes = []
    limits = record.limits
    if record.spawn_error:
        notes.append(i18n.say("could not start: {error}", error=record.spawn_error))
    if limits.timed_out:
        notes.append(
            i18n.say(
                "timed out after {seconds} s: its process group was killed",
                seconds=f"{limits.timeout_seconds:g}",
            )
        )
    if limits.leftover_killed:
        notes.append(i18n.say("it left processes running; they were killed"))
    if limits.output_capped:
        notes.append(
            i18n.say(
                "output capped: {bytes} bytes kept of each stream", bytes=limits.output_cap_bytes
            )
        )
    if record.owned_files.changed_during_run:
        notes.append(
            i18n.say("the check changed files the task owns: this evidence is already stale")
        )
    run = record.end_to_end.run
    if run is not None:
        notes.append(
            i18n.say(
                "end-to-end command: {verdict} (exit {exit_code})",
                verdict=run.verdict,
                exit_code=run.exit_code,
            )
        )
    elif record.end_to_end.skipped:
        notes.append(i18n.say("end-to-end command not run: {why}", why=record.end_to_end.skipped))
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


# -- evidence add -----------------------------------------------------------------------------


@cli.group(name="evidence")
def evidence_group() -> None:
    """Evidence about a task that did not come from `taskfs check`."""


@evidence_group.command(name="add")
@click.argument("task_id")
@click.option("--verdict", type=click.Choice(["pass", "fail"]), required=True)
@click.option("--source", required=True, help="Who or what judged: llm_judge, a person's name, ...")
@click.option("--note", help="The judgement in words.")
@click.option("--file", "note_file", help="Read the judgement from this file (- for stdin).")
@agent_option
@json_option
def evidence_add(
    *,
    task_id: str,
    verdict: str,
    source: str,
    note: str | None,
    note_file: str | None,
    agent: str | None,
    as_json: bool,
) -> int:
    """Record a judgement not produced by running the check here (an LLM judge, a person).
    It is shown beside the check runs and never counts as the passing check by itself."""
    from taskfs.api.evidence import checks as evidence

    if note is not None and note_file is not None:
        raise click.UsageError("give the judgement with --note or with --file, not both")

    def call() -> Any:
        return evidence.add_judgement(
            open_repo(),
            task_id,
            verdict="pass" if verdict == "pass" else "fail",
            source=source,
            note=note,
            note_file=note_file,
            agent=acting_agent(agent, required=False),
            stream=sys.stdin.buffer if note_file == "-" else None,
        )

    def show(result: Any) -> tuple[dict[str, Any], str]:
        doc = document(
            True,
            id=result.id,
            evidence=result.evidence,
            verdict=result.record.verdict,
            verdictSource=result.record.verdict_source,
            commit=result.commit,
        )
        text = i18n.say(
            "{evidence}: {verdict} from {source} (recorded judgement: it does not count as the "
            "acceptance check)",
            evidence=result.evidence,
            verdict=result.record.verdict,
            source=result.record.verdict_source,
        )
        return doc, text

    return act(as_json, call, show)


# -- keys new ---------------------------------------------------------------------------------


@cli.group(name="keys")
def keys_group() -> None:
    """Ed25519 signing keys: private part outside the repository, public part committed."""


@keys_group.command(name="new")
@click.option("--runner", "runner", metavar="NAME", help="A runner key, to sign evidence.")
@click.option(
    "--agent",
    "agent",
    metavar="NAME",
    envvar="TASKFS_AGENT",
    help="An agent key, to sign messages (default: $TASKFS_AGENT).",
)
@json_option
@click.pass_context
def keys_new(ctx: click.Context, runner: str | None, agent: str | None, as_json: bool) -> int:
    """Make a signing key for an agent (--agent NAME) or a runner (--runner NAME)."""
    from taskfs.api.capabilities import keys

    typed_agent = ctx.get_parameter_source("agent") == click.core.ParameterSource.COMMANDLINE
    if runner is not None and typed_agent:
        raise click.UsageError("name one of --runner NAME or --agent NAME, not both")

    def call() -> Any:
        if runner is not None:
            if not runner:
                raise fail("invalid_agent", value=runner)
            return keys.new_key(open_repo(), "runner", runner)
        return keys.new_key(open_repo(), "agent", acting_agent(agent) or "")

    def show(result: Any) -> tuple[dict[str, Any], str]:
        doc = key_document(result)
        text = i18n.say(
            "{kind} key {name} ({key_id})\n"
            "  public:  {public} (committed)\n"
            "  private: {private} (keep it off the repository)\n"
            "  {key}",
            kind=result.kind,
            name=result.name,
            key_id=result.key_id,
            public=result.public_path,
            private=result.private_path,
            key=result.public_key,
        )
        return doc, text

    return act(as_json, call, show)


def key_document(result: Any) -> dict[str, Any]:
    """The answer about a key taskfs made or took in (`keys new`, `keys import`)."""
    return document(
        True,
        kind=result.kind,
        name=result.name,
        publicKey=result.public_key,
        keyId=result.key_id,
        path=result.public_path,
        privateKey=str(result.private_path),
        commit=result.commit,
        interlinkId=result.interlink_id,
    )
