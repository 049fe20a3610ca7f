"""The loopback bus behaves as interlink's `src/bus.rs` routes and its own tests say."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.interlink_bus import Bus


def post(url: str, body: Any) -> int:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def recv(bus: Bus, me: str, timeout_ms: int = 50) -> dict[str, Any]:
    url = f"{bus.url}/recv?me={urllib.request.quote(me)}&timeout_ms={timeout_ms}"
    with urllib.request.urlopen(url, timeout=30) as answer:
        return dict(json.loads(answer.read()))


def test_send_recv_ack_round_trip_keeps_until_acked_in_fifo_order() -> None:
    with Bus() as bus:
        for i in range(3):
            assert post(f"{bus.url}/send", {"to": "bob", "payload": {"n": i}}) == 202
        first = recv(bus, "bob")
        assert first["status"] == "message"
        assert first["envelope"]["payload"] == {"n": 0}
        assert isinstance(first["envelope"]["ts"], int)
        assert first["ack"].startswith("bob\0")
        # Not acked: delivered again, the same key.
        assert recv(bus, "bob")["ack"] == first["ack"]
        # Only the recipient may ack; a key of another queue is forbidden.
        assert post(f"{bus.url}/ack", {"me": "mallory", "ack": first["ack"]}) == 403
        assert post(f"{bus.url}/ack", {"me": "bob", "ack": first["ack"]}) == 200
        assert post(f"{bus.url}/ack", {"me": "bob", "ack": first["ack"]}) == 200  # idempotent
        for i in (1, 2):
            got = recv(bus, "bob")
            assert got["envelope"]["payload"] == {"n": i}
            assert post(f"{bus.url}/ack", {"me": "bob", "ack": got["ack"]}) == 200
        assert recv(bus, "bob") == {"status": "timeout"}
        assert recv(bus, "nobody") == {"status": "timeout"}


def test_a_full_queue_drops_the_oldest() -> None:
    with Bus(cap=2) as bus:
        for i in range(4):
            post(f"{bus.url}/send", {"to": "bob", "payload": i})
        assert bus.queues.depth("bob") == 2
        assert recv(bus, "bob")["envelope"]["payload"] == 2


def test_a_waiting_recv_is_woken_by_a_later_send() -> None:
    with Bus() as bus:
        got: list[dict[str, Any]] = []
        waiter = threading.Thread(target=lambda: got.append(recv(bus, "alice", 20_000)))
        waiter.start()
        post(f"{bus.url}/send", {"to": "alice", "payload": "wake"})
        waiter.join(timeout=30)
        assert not waiter.is_alive()
        assert got[0]["envelope"]["payload"] == "wake"


@pytest.mark.parametrize("body", [{"payload": 1}, {"to": 3, "payload": 1}, ["x"]])
def test_a_malformed_send_is_refused(body: Any) -> None:
    with Bus() as bus:
        assert post(f"{bus.url}/send", body) >= 400
        assert bus.queues.sent == []


def test_lost_acks_leave_the_message_queued() -> None:
    with Bus() as bus:
        bus.queues.lose_acks = 1
        post(f"{bus.url}/send", {"to": "bob", "payload": "x"})
        key = recv(bus, "bob")["ack"]
        assert post(f"{bus.url}/ack", {"me": "bob", "ack": key}) == 200
        assert bus.queues.depth("bob") == 1
        assert post(f"{bus.url}/ack", {"me": "bob", "ack": key}) == 200
        assert bus.queues.depth("bob") == 0


def roster(bus: Bus) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{bus.url}/roster", timeout=10) as answer:
        return list(json.loads(answer.read())["roster"])


def test_the_roster_keeps_one_entry_per_session_and_stamps_its_age() -> None:
    # bus.rs: roster_key_scopes_by_session, two_sessions_under_one_identity_coexist,
    # announce_upserts_by_pubkey, roster_stamps_age_ms.
    s1 = {"pubkey": "keyA", "name": "old", "session": {"session_id": "aa11"}}
    s2 = {"pubkey": "keyA", "name": "a", "session": {"session_id": "bb22"}}
    with Bus() as bus:
        assert post(f"{bus.url}/announce", s1) == 202
        assert post(f"{bus.url}/announce", s2) == 202
        assert post(f"{bus.url}/announce", {**s1, "name": "new"}) == 202
        assert post(f"{bus.url}/announce", {"pubkey": "keyB", "name": "legacy"}) == 202
        assert post(f"{bus.url}/announce", {"name": "x"}) == 400
        listed = roster(bus)
        assert sorted((e["pubkey"], e["name"]) for e in listed) == [
            ("keyA", "a"),
            ("keyA", "new"),
            ("keyB", "legacy"),
        ]
        assert set(bus.queues.roster) == {"keyA#aa11", "keyA#bb22", "keyB"}
        assert all(isinstance(e["age_ms"], int) and e["age_ms"] < 60_000 for e in listed)
        bus.queues.age_roster(5_000_000, "keyB")
        aged = {e["name"]: e["age_ms"] for e in roster(bus)}
        assert aged["legacy"] >= 5_000_000 > aged["a"]


def test_unregister_removes_one_session_and_three_days_drop_the_rest() -> None:
    # bus.rs: unregister_removes_one_session_immediately, roster_stores_and_expires.
    s1 = {"pubkey": "keyA", "session": {"session_id": "aa11"}}
    s2 = {"pubkey": "keyA", "session": {"session_id": "bb22"}}
    with Bus() as bus:
        post(f"{bus.url}/announce", s1)
        post(f"{bus.url}/announce", s2)
        assert post(f"{bus.url}/unregister", s1) == 202
        assert [e["session"]["session_id"] for e in roster(bus)] == ["bb22"]
        bus.queues.age_roster(3 * 24 * 3600 * 1000 - 60_000)
        assert len(roster(bus)) == 1  # retained within the away window
        bus.queues.age_roster(120_000)
        assert roster(bus) == []
