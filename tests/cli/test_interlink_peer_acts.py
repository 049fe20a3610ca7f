"""What an interlink peer sees of taskfs (issue 37, item 5), each against the bus re-created from
interlink's `src/bus.rs` (tests/interlink_bus.py) and a session written from `interlink-mcp.rs`
(tests/interlink_peer.py): a claim tells the peer; an inbound message is `received`; a peer's
plain message waits in `inbox`, `prime` and the MCP inbox; a pairing request is answered;
prose on a new task id to a peer opens a request; a status on a task this ledger does not have
is answered; interlink's tools answer in interlink's words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from tests.cli.test_interlink_peer import bridge, bus, ok, state, statuses, worker
from tests.helpers import git, taskfs
from tests.interlink_bus import Bus
from tests.interlink_peer import Peer
from tests.mcp.test_server import envelope, serve, server_env

__all__ = ["bus", "worker"]  # the fixtures, shared with test_interlink_peer

PENDING = "nothing pending; all sent messages were accepted by the bus"


def their_task(worker: Peer, task: str = "theirs") -> None:
    """worker opens a task here, as interlink's requester does: a new task_id, an envelope."""
    worker.send_message("planner", envelope(id=task, **{"from": None, "to": None}), task_id=task)


# -- a claim tells the peer ------------------------------------------------------------------


def test_a_claim_tells_the_peer_that_sent_the_task(repo: Path, bus: Bus, worker: Peer) -> None:
    their_task(worker)
    bridge(bus)
    assert state("theirs") == "submitted"
    ok("claim", "theirs", "--agent", "planner")
    bridge(bus)
    [(task_id, status, text)] = statuses(worker)
    assert (task_id, status) == ("theirs", "update")
    assert "planner" in text
    # Claiming again (already held) says nothing more.
    ok("claim", "theirs", "--agent", "planner")
    bridge(bus)
    assert statuses(worker) == []
    assert ok("audit")["findings"] == []


def test_claim_sync_tells_the_peer_once_its_claim_is_published(
    repo: Path, bus: Bus, worker: Peer, tmp_path: Path
) -> None:
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    git(repo, "remote", "add", "origin", str(origin))
    git(repo, "push", "-q", "-u", "origin", "main")
    their_task(worker)
    bridge(bus)
    ok("claim", "theirs", "--agent", "planner", "--sync")
    bridge(bus)
    assert [(t, s) for t, s, _ in statuses(worker)] == [("theirs", "update")]
    assert git(origin, "rev-parse", "main") == git(repo, "rev-parse", "HEAD~1")  # the claim
    assert ok("audit")["findings"] == []


# -- message_status of an inbound message ----------------------------------------------------


def test_an_inbound_message_is_received_as_interlink_says(
    repo: Path, bus: Bus, worker: Peer, tmp_path: Path
) -> None:
    said = worker.send_message("planner", "Lunch at noon?")
    their_task(worker)
    bridge(bus)

    async def look() -> tuple[list[str], list[str]]:
        async with serve(repo, "planner", server_env(tmp_path)) as planner:
            lines, deliveries = [], []
            for msg_id in (said["msg_id"],):
                found = await planner.ok("message_status", msg_id=msg_id)
                deliveries.append(found["message"]["delivery"])
                lines.append(planner.text)
            history = await planner.ok("conversation_history", peer="worker")
            deliveries += [m["delivery"] for m in history["messages"]]
            lines.append(planner.text)
            return lines, deliveries

    lines, deliveries = anyio.run(look)
    assert lines[0] == f"← worker [received] (msg_id {said['msg_id']}): Lunch at noon?"
    assert deliveries == ["received"] * 3  # the message, and the task's opening in history
    assert lines[1].startswith(f"← worker [received] (msg_id {said['msg_id']}): Lunch at noon?\n")


# -- a peer's plain message waits where the agent looks --------------------------------------


def test_a_peers_plain_message_shows_in_inbox_prime_and_the_mcp_inbox(
    repo: Path, bus: Bus, worker: Peer, tmp_path: Path
) -> None:
    said = worker.send_message("planner", "Could you look at the flaky login test?")
    bridge(bus)
    box = ok("inbox", "--agent", "planner")
    assert [m["msg_id"] for m in box["unread"]] == [said["msg_id"]]
    assert box["counts"]["unread"] == 1
    assert said["msg_id"] in taskfs("inbox", "--agent", "planner").stdout
    primed = taskfs("prime", "--agent", "planner").stdout
    assert "Could you look at the flaky login test?" in primed
    assert said["msg_id"] in primed

    async def inbox_then_reply() -> tuple[list[str], str, list[str]]:
        async with serve(repo, "planner", server_env(tmp_path)) as planner:
            first = await planner.ok("agent_inbox")
            shown = [m["msg_id"] for m in first["unread"]]
            await planner.ok(
                "send_message", to="worker", text="Looking now.", in_reply_to=said["msg_id"]
            )
            after = await planner.ok("agent_inbox")
            return shown, planner.text, [m["msg_id"] for m in after["unread"]]

    shown, _text, after = anyio.run(inbox_then_reply)
    assert shown == [said["msg_id"]]
    assert after == []  # answered: it waits no more
    assert ok("inbox", "--agent", "planner", "--mark-read")["counts"]["unread"] == 0


def test_marking_the_inbox_read_with_a_peers_plain_message_in_it_marks_the_rest(
    repo: Path, bus: Bus, worker: Peer
) -> None:
    worker.send_message("planner", "Just saying hi.")
    their_task(worker)
    bridge(bus)
    ok("claim", "theirs", "--agent", "planner")
    worker.send_message("planner", "Thanks for taking it.", task_id="theirs")
    bridge(bus)
    marked = taskfs("inbox", "--agent", "planner", "--mark-read", "--json")
    assert marked.code == 0, marked.stdout
    assert ok("inbox", "--agent", "planner")["counts"]["unread"] == 1  # the chat, unanswered


# -- a pairing request gets an answer --------------------------------------------------------


def test_a_knock_from_an_admitted_key_is_accepted_at_once(
    repo: Path, bus: Bus, worker: Peer
) -> None:
    planner_key = worker.peers.pop("planner")  # worker has not paired yet; planner admitted it
    worker.request_pair(planner_key, "taskfs-planner")
    done = bridge(bus)
    assert done["refused"] == 0
    got = worker.receive()
    assert [m["kind"] for m in got] == ["pair_accept"]
    assert got[0]["text"] == "planner"
    assert worker.paired == ["taskfs-planner"]
    assert worker.peers["taskfs-planner"] == planner_key
    # Paired, it talks: its messages are taken, and planner's reach it.
    worker.send_message("taskfs-planner", "Hello, paired.")
    assert [r["accepted"] for r in bridge(bus)["received"]] == [True]
    bridge(bus)  # a second round posts nothing and answers nothing again
    assert worker.receive() == []


def test_a_strangers_knock_is_answered_once_the_operator_admits_its_key(
    repo: Path, bus: Bus, worker: Peer
) -> None:
    stranger = Peer("newcomer", [bus.url])
    stranger.announce()
    planner_key = stranger.discover("planner")
    stranger.request_pair(planner_key, "planner")
    first = taskfs(
        "interlink", "bridge", "--agent", "planner", "--url", bus.url, "--once", "--json"
    )
    assert first.code == 0, first.stdout + first.stderr
    [knock] = first.json["pairing"]
    assert (knock["key"], knock["name"], knock["admitted"]) == (stranger.key, "newcomer", False)
    assert f"taskfs keys add --agent NAME --public {stranger.key}" in first.stderr
    assert stranger.receive() == []  # the operator decides, as in interlink
    ok("keys", "add", "--agent", "newcomer", "--public", stranger.key)
    bridge(bus)
    [accept] = stranger.receive()
    assert (accept["kind"], accept["from"]) == ("pair_accept", planner_key)
    assert stranger.paired == ["planner"]
    bridge(bus)
    assert stranger.receive() == []  # answered once


# -- prose on a new task id to a peer opens a request ----------------------------------------


def test_prose_on_a_new_task_id_to_a_peer_opens_a_request_the_peer_receives(
    repo: Path, bus: Bus, worker: Peer, tmp_path: Path
) -> None:
    words = "Please make the login tests less flaky."

    async def ask() -> tuple[dict[str, Any], str]:
        env = {**server_env(tmp_path), "INTERLINK_URL": bus.url}
        async with serve(repo, "planner", env) as planner:
            asked = await planner.ok("send_message", to="worker", text=words, task_id="flaky")
            return asked, planner.text

    asked, text = anyio.run(ask)
    assert (asked["task_id"], asked["state"]) == ("flaky", "intake")
    assert text == (
        f"queued for worker ({worker.session_id}) (msg_id {asked['msg_id']}) [task flaky] — "
        "delivering in the background"
    )
    listed = ok("ls", "--state", "intake")["tasks"]
    assert [(t["id"], t["from"], t["to"]) for t in listed] == [("flaky", "planner", "worker")]
    assert bridge(bus)["posted"] == [asked["msg_id"]]
    [(task_id, status, said)] = statuses(worker)
    assert (task_id, status, said) == ("flaky", None, words)
    assert ok("audit")["findings"] == []


# -- a status on a task this ledger does not have is answered --------------------------------


def test_a_status_on_an_unknown_task_is_answered_not_dropped(
    repo: Path, bus: Bus, worker: Peer
) -> None:
    result = worker.send_message("planner", "Done.", task_id="ghost", status="result")
    bus.queues.lose_acks = 1  # the first ack is lost: the bus delivers the message again
    run = ["interlink", "bridge", "--agent", "planner", "--url", bus.url, "--once", "--json"]
    done = taskfs(*run)
    assert done.code == 1  # refused: not acted on
    got = done.json["received"]
    assert [(r["msg_id"], r["code"]) for r in got] == [(result["msg_id"], "task_not_found")] * 2
    [answer] = worker.receive()  # once, though the message came twice
    assert answer["in_reply_to"] == result["msg_id"]
    assert "task_id" not in answer  # about no task of this ledger
    assert "task_not_found" in answer["text"]
    assert "ghost" in answer["text"]
    assert taskfs(*run).json["received"] == []
    assert worker.receive() == []
    assert ok("audit")["findings"] == []


# -- interlink's words -------------------------------------------------------------------------


def test_the_interlink_tools_answer_in_interlinks_words(
    repo: Path, bus: Bus, worker: Peer, tmp_path: Path
) -> None:
    """The lines of `interlink-mcp.rs` (send_message, cancel_task, message_status,
    list_pending, and its invalid_params messages), written out here from its source."""
    their_task(worker)
    bridge(bus)
    ok("claim", "theirs", "--agent", "planner")
    bridge(bus)  # the claim's notice
    env = {**server_env(tmp_path), "INTERLINK_URL": bus.url}
    sid = worker.session_id

    async def talk() -> list[tuple[str, str]]:
        seen: list[tuple[str, str]] = []
        async with serve(repo, "planner", env) as planner:
            said = await planner.ok("send_message", to="worker", text="Hi.")
            seen.append((planner.text, f"queued for worker ({sid}) (msg_id {said['msg_id']}) — "
                         "delivering in the background"))  # fmt: skip
            asked = await planner.ok(
                "send_message", to="worker", text="Which DB?", task_id="theirs", status="update"
            )
            seen.append((planner.text, f"queued for worker ({sid}) (msg_id {asked['msg_id']}) "
                         "[task theirs · update] — delivering in the background"))  # fmt: skip
            await planner.ok("list_pending")
            seen.append((planner.text, f"2 pending:\n→ worker (msg_id {said['msg_id']})\n"
                         f"→ worker (msg_id {asked['msg_id']})"))  # fmt: skip
            await planner.call("message_status", msg_id="0" * 32)
            seen.append((planner.text, f"no message with msg_id '{'0' * 32}' in the log"))
            for arguments, line in (
                ({"to": "nobody", "text": "x"}, "unknown peer 'nobody'"),
                (
                    {"to": "worker", "text": "x", "status": "done"},
                    "unknown status 'done' (use update / needs_input / result / failed / canceled)",
                ),
            ):
                with pytest.raises(MCPError) as refused:
                    await planner.session.call_tool("send_message", arguments)
                seen.append((refused.value.error.message, line))
        return seen

    for got, wanted in anyio.run(talk):
        assert got == wanted
    bridge(bus)

    async def after() -> list[tuple[str, str]]:
        seen: list[tuple[str, str]] = []
        async with serve(repo, "planner", env) as planner:
            await planner.ok("list_pending")
            seen.append((planner.text, PENDING))
            canceled = await planner.ok("cancel_task", to="worker", task_id="theirs")
            seen.append((planner.text, f"sent cancel for task 'theirs' to worker ({sid}) "
                         f"(msg_id {canceled['msg_id']})"))  # fmt: skip
        return seen

    for got, wanted in anyio.run(after):
        assert got == wanted
    bridge(bus)
    [(_task, _status, text)] = [row for row in statuses(worker) if row[1] == "canceled"]
    assert text == "canceled"  # interlink's own text for a cancel without a reason
