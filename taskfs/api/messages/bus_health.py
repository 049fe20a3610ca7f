"""Whether each bus answers, and when to try one that did not again: how a running bridge
outlives its bus.

interlink's sessions keep retrying a bus that went away ("bus connection lost, will keep
retrying", `inbound_loop`) and log only when that changes. A running bridge does the same, with
a growing, jittered pause per bus (half fixed, half random: from 0.5 s, doubling, at most 15 s),
so that a bus restarting under many bridges is not met by all of them at once, and says on its
log where it stands: when a bus stopped answering and why, each try while it is down, and when
it answers again (the bridge then announces itself there at once: a restarted bus's roster is
empty). `--once` is not patient: a bus that fails is named (`bus_unreachable`), as before.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone

from taskfs.errors import TaskfsError

BACKOFF_S = 0.5
BACKOFF_CAP_S = 15.0


@dataclass
class Outage:
    """One bus not answering: why, since when, how many tries, and when to try it next."""

    reason: str
    since: float  # time.monotonic()
    began: str  # UTC, ISO 8601, for the log and the state file
    tries: int = 1
    next_try: float = 0.0


def pause(tries: int, rng: Callable[[], float] = random.random) -> float:
    """The wait after the `tries`-th failure in a row: half of the ceiling, plus up to half."""
    ceiling = min(BACKOFF_CAP_S, BACKOFF_S * (1 << min(tries - 1, 16)))
    return ceiling / 2 + rng() * ceiling / 2


@dataclass
class Health:
    """The buses' reachability, for one bridge. `patient`: skip a bus while it rests, and
    rest when every bus does; otherwise (`--once`) every bus is tried every time."""

    log: Callable[[str], None]
    patient: bool = True
    down: dict[str, Outage] = field(default_factory=dict)
    # Buses that answered again since the bridge last announced itself on them.
    back: set[str] = field(default_factory=set)
    outages: dict[str, int] = field(default_factory=dict)

    def usable(self, url: str) -> bool:
        """Whether to call `url` now: it is up, or its next try has come."""
        out = self.down.get(url)
        return not self.patient or out is None or time.monotonic() >= out.next_try

    def is_up(self, url: str) -> bool:
        return url not in self.down

    def failed(self, url: str, exc: TaskfsError) -> None:
        """`url` did not answer: the outage begins, or goes on, with the next try set."""
        problems = exc.problems
        reason = str(problems[0].data.get("reason") or problems[0].message) if problems else ""
        now = time.monotonic()
        out = self.down.get(url)
        if out is None:
            began = datetime.now(timezone.utc).isoformat(timespec="seconds")
            out = self.down[url] = Outage(reason, now, began)
            self.outages[url] = self.outages.get(url, 0) + 1
            self.back.discard(url)
        else:
            out.tries += 1
            out.reason = reason
        if not self.patient:
            self.log(f"{url}: unreachable ({reason})")
            return
        wait = pause(out.tries)
        out.next_try = now + wait
        if out.tries == 1:
            self.log(f"{url}: unreachable ({reason}); will keep retrying, next try in {wait:.1f} s")
        else:
            self.log(
                f"{url}: still unreachable after {now - out.since:.0f} s ({out.tries} tries, "
                f"{reason}); next try in {wait:.1f} s"
            )

    def reached(self, url: str) -> None:
        """`url` answered: an outage, if there was one, is over."""
        out = self.down.pop(url, None)
        if out is None:
            return
        self.back.add(url)
        self.log(
            f"{url}: reachable again after {time.monotonic() - out.since:.0f} s down "
            f"({out.tries} tries)"
        )

    def rest(self) -> None:
        """Wait until the next try of a bus that is down (a signal ends the wait)."""
        if not self.down:
            return
        wake = min(out.next_try for out in self.down.values())
        time.sleep(max(0.0, wake - time.monotonic()))

    def report(self, urls: list[str]) -> list[dict[str, object]]:
        """Where each bus stands, for the bridge's answer and its state file."""
        out: list[dict[str, object]] = []
        for url in urls:
            down = self.down.get(url)
            row: dict[str, object] = {
                "url": url,
                "reachable": down is None,
                "outages": self.outages.get(url, 0),
            }
            if down is not None:
                row |= {"since": down.began, "tries": down.tries, "reason": down.reason}
            out.append(row)
        return out
