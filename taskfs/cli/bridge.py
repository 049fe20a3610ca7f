"""`taskfs interlink bridge`: parse, run `taskfs.api.messages.bridge`, report on stderr.

SIGINT and SIGTERM end the bridge cleanly: at once while it waits on the bus, or, when a
received message is between its commit and its ack, right after the ack; then it leaves the
roster and says goodbye, as interlink's sessions do.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from taskfs.api.context import acting_agent
from taskfs.cli.group import agent_option, json_option
from taskfs.cli.output import act, open_repo
from taskfs.cli.wire import interlink_group
from taskfs.core import shapes
from taskfs.core.display import safe
from taskfs.errors import fail

if TYPE_CHECKING:
    from taskfs.api.messages.bridge import Bridge, Round


class _Stop(Exception):
    """Raised by the signal handler to leave a wait on the bus."""


@interlink_group.command(name="bridge")
@agent_option
@click.option(
    "--url",
    "urls",
    metavar="URL",
    multiple=True,
    help="An interlink bus; repeat it (or separate with commas) for several, all polled and "
    "posted to (default: $INTERLINK_URL, else http://127.0.0.1:9440).",
)
@click.option(
    "--session",
    "session",
    metavar="NAME",
    default="taskfs",
    show_default=True,
    help="The bridge's session name: interlink agents reach it with session=NAME.",
)
@click.option(
    "--once", is_flag=True, help="One round: post what is pending, receive until empty, exit."
)
@json_option
def interlink_bridge(
    agent: str | None, urls: tuple[str, ...], session: str, once: bool, as_json: bool
) -> int:
    """Carry your signed messages over interlink-bus, and record what arrives for you."""
    from taskfs.api.messages import bridge as api

    buses: list[api.Bridge] = []

    def log(line: str) -> None:
        sys.stderr.write(safe(f"bridge: {line}") + "\n")
        sys.stderr.flush()

    def call() -> api.Round:
        if not session or "#" in session or not session.isprintable():
            raise fail("usage", reason="--session: a name without '#'")
        name = acting_agent(agent) or ""
        carrier = api.Bridge(open_repo(), name, api.bus_urls(urls), log, session, patient=not once)
        buses.append(carrier)
        where = ", ".join(carrier.buses.urls)
        log(f"{carrier.agent} on {where}: polling {carrier.route} and {carrier.me}")
        return _until_stopped(carrier, api.ONCE_POLL_MS if once else api.POLL_MS, once=once)

    def show(done: Any) -> tuple[dict[str, Any], str]:
        from taskfs.cli.wire import line_view

        rows = [
            {**line_view(a.report), "acked": a.acked, "already": a.already} for a in done.arrivals
        ]
        held = [{"msg_id": m, "reason": why} for m, why in done.held.items()]
        where = buses[0].health.report(buses[0].buses.urls) if buses else []
        doc = shapes.document(
            not done.refused,
            posted=done.posted,
            held=held,
            received=rows,
            refused=len(done.refused),
            buses=where,
            pairing=[{**row, "answered": row.get("key") in done.accepted} for row in done.pairing],
            accepted=done.accepted,
        )
        text = f"posted {len(done.posted)}, received {len(rows)}, refused {len(done.refused)}"
        if held:
            text += f", held {len(held)}"
        down = [b for b in where if not b["reachable"]]
        if down:
            text += f", {len(down)} bus(es) unreachable"
        return doc, text

    return act(as_json, call, show)


def _until_stopped(carrier: Bridge, poll_ms: int, *, once: bool) -> Round:
    """One round, or rounds until SIGINT or SIGTERM; what they did, summed."""
    from taskfs.api.messages.bridge import Round

    total = Round()

    def stop(_signum: int, _frame: FrameType | None) -> None:
        carrier.stopping = True
        if not carrier.busy:
            raise _Stop

    saved = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        while not carrier.stopping:
            carrier.round(poll_ms, into=total)
            if once:
                return total
    except _Stop:
        pass
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
    carrier.close()
    carrier.log("stopped")
    return total
