"""interlink's own way to delegate, a plain message with a new `task_id` and prose (its
docs/TASKS.md), through the bus (tests/interlink_bus.py) from an interlink-style session
(tests/interlink_peer.py): kept as a request and answered with a signed `needs_input` naming
what the envelope lacks; the envelope sent back on that `task_id` submits the task (contract
section 12). Nothing is refused and dropped."""

from __future__ import annotations

from pathlib import Path

from taskfs.core import yamlio
from tests.cli.test_interlink_peer import bridge, bus, ok, worker  # noqa: F401 (fixtures)
from tests.helpers import ENVELOPE, taskfs
from tests.interlink_bus import Bus
from tests.interlink_peer import Peer


def test_a_prose_opening_is_answered_and_the_envelope_on_its_task_id_submits_it(
    repo: Path,
    bus: Bus,  # noqa: F811
    worker: Peer,  # noqa: F811
) -> None:
    worker.send_message("planner", "Please review the login flow for empty passwords.",
                        task_id="review-login")  # fmt: skip
    got = bridge(bus)["received"]
    assert [(r["task_id"], r["errors"]) for r in got] == [("review-login", [])]
    kept = ok("show", "review-login")
    assert (kept["state"], kept["from"], kept["to"]) == ("intake", "worker", "planner")
    assert kept["words"] == ["Please review the login flow for empty passwords."]
    bridge(bus)  # carries planner's answer out
    answers = worker.receive()
    assert [(m["task_id"], m.get("status")) for m in answers] == [("review-login", "needs_input")]
    question = answers[0]
    assert question["in_reply_to"] == got[0]["msg_id"]
    assert "objective_required" in question["text"]
    assert "task_id review-login" in question["text"]
    assert worker.dropped == []  # it verified: signed by planner's key, to worker's
    # The worker sends what is missing, in two messages, on that task id.
    first = {k: ENVELOPE[k] for k in ("objective", "outputFormat", "boundaries")}
    worker.send_message("planner", yamlio.dump(first), task_id="review-login",
                        in_reply_to=question["msg_id"])  # fmt: skip
    bridge(bus)
    bridge(bus)
    again = worker.receive()
    assert [m.get("status") for m in again] == ["needs_input"]
    assert "objective_required" not in again[0]["text"]
    rest = {k: v for k, v in ENVELOPE.items() if k not in (*first, "from", "to")}
    worker.send_message("planner", yamlio.dump(rest), task_id="review-login")
    bridge(bus)
    shown = ok("show", "review-login")
    assert shown["state"] == "submitted"
    assert (shown["envelope"]["from"], shown["envelope"]["to"]) == ("worker", "planner")
    bridge(bus)
    told = worker.receive()
    assert [(m["task_id"], m.get("status")) for m in told] == [("review-login", "update")]
    assert "submitted" in told[0]["text"]
    assert ok("audit")["findings"] == []


def test_a_status_on_a_task_the_ledger_lacks_is_still_refused(
    repo: Path,
    bus: Bus,  # noqa: F811
    worker: Peer,  # noqa: F811
) -> None:
    worker.send_message("planner", "done", task_id="no-such", status="result")
    answer = taskfs("interlink", "bridge", "--agent", "planner", "--url", bus.url, "--once",
                    "--json")  # fmt: skip
    assert answer.code == 1
    got = answer.json["received"]
    assert [e["code"] for e in got[0]["errors"]] == ["task_not_found"]
    assert ok("ls")["tasks"] == []
