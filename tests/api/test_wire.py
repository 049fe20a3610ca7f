"""The bridge's way in and out (`taskfs.api.messages.wire`): outgoing lines, the freshness window's
exact edges with an injected clock, and durable replay protection."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

from taskfs.api.messages import wire
from taskfs.store.repository import Repository
from tests import interlink_ref as ref
from tests.helpers import taskfs
from tests.mcp.test_server import envelope

PEER_SEED = os.urandom(32)
NOW = datetime.now(timezone.utc).replace(microsecond=0)
NOW_MS = int(NOW.timestamp()) * 1000


def setup(repo: Path) -> tuple[Repository, str]:
    made = taskfs("keys", "new", "--agent", "builder", "--json")
    assert made.code == 0, made.stderr
    peer = ref.public_id(PEER_SEED)
    assert taskfs("keys", "add", "--agent", "planner", "--public", peer).code == 0
    return Repository.open(repo), str(made.json["interlinkId"])


def line(to: str, **fields: object) -> str:
    body = {"to": to, "text": "hi", "ts": NOW_MS, "msg_id": os.urandom(16).hex(), **fields}
    return ref.line(ref.sign(PEER_SEED, body))


def test_freshness_is_60_seconds_ahead_and_24_hours_behind_inclusive(repo: Path) -> None:
    store, builder = setup(repo)
    edges = [
        (NOW_MS + 60_000, None),
        (NOW_MS + 60_001, "message_expired"),
        (NOW_MS - 86_400_000, None),
        (NOW_MS - 86_400_001, "message_expired"),
        (0, "message_expired"),
        (2**64 - 1, "message_expired"),
    ]
    done = wire.import_lines(store, "builder", [line(builder, ts=ts) for ts, _ in edges], now=NOW)
    assert [r.code for r in done.lines] == [code for _, code in edges]
    assert len(done.commits) == 1


def test_a_redelivered_message_lands_once(repo: Path, tmp_path: Path) -> None:
    store, builder = setup(repo)
    once = line(builder, text="only once")
    first = wire.import_lines(store, "builder", [once, once], now=NOW)
    assert [r.code for r in first.lines] == [None, "message_replayed"]
    # A fresh process (nothing in memory) still knows it: the ledger is the seen-set.
    again = wire.import_lines(Repository.open(repo), "builder", [once], now=NOW)
    assert [r.code for r in again.lines] == ["message_replayed"]
    assert again.commits == ()
    # The same msg_id from another sender is another message (replay keys on sender + id).
    other_seed = os.urandom(32)
    (tmp_path / "other.key").write_text(ref.b64e(other_seed))
    imported = taskfs(
        "keys", "import", "--agent", "other", "--seed-file", str(tmp_path / "other.key")
    )
    assert imported.code == 0, imported.stderr
    same_id = json.loads(once)["msg_id"]
    theirs = ref.sign(other_seed, {"to": builder, "text": "mine", "ts": NOW_MS, "msg_id": same_id})
    done = wire.import_lines(Repository.open(repo), "builder", [ref.line(theirs)], now=NOW)
    assert [r.code for r in done.lines] == [None]


def test_outgoing_lists_what_the_agent_signed_ready_to_post(repo: Path) -> None:
    store, builder = setup(repo)
    # planner, a peer, opens the task with its signed opening (nothing is written unsigned in
    # the name of an agent with a key).
    task = "outgoing"
    opening = line(builder, text=envelope(), task_id=task)
    opened = wire.import_lines(store, "builder", [opening])
    assert [r.code for r in opened.lines] == [None]
    assert taskfs("claim", task, "--agent", "builder").code == 0
    sent = [
        taskfs("send", task, text, "--agent", "builder", "--json").json["msg_id"]
        for text in ("one", "two")
    ]
    everything = wire.outgoing(store, "builder")
    # First the claim, which told planner (a peer: its key admitted, its private key elsewhere).
    claimed, *out = everything
    assert json.loads(claimed.line)["status"] == "update"
    assert [o.msg_id for o in out] == sent
    for msg_id, to, text, _session, _alias in out:
        message = json.loads(text)
        assert (message["msg_id"], message["to"]) == (msg_id, to)
        assert to == ref.public_id(PEER_SEED)
        assert ref.verify(message)
    # Each signer's own: planner's is the opening it signed on its side.
    assert [o.msg_id for o in wire.outgoing(store, "planner")] == [json.loads(opening)["msg_id"]]
    assert wire.export_lines(store, task) == [opening, *(o.line for o in everything)]


def test_a_conversation_turn_without_a_task_is_signed_and_shown(repo: Path) -> None:
    store, _builder = setup(repo)
    said = wire.send_conversation(store, "builder", "planner", "Lunch at noon?", now=NOW)
    assert said.record.task_id is None
    [exported] = wire.export_lines(store, None, [said.record.msg_id])
    assert ref.verify(json.loads(exported))
    assert "task_id" not in json.loads(exported)
    shown = taskfs("conversation", "planner", "--agent", "builder", "--json").json["messages"]
    assert [(m["text"], m["verified"]) for m in shown] == [("Lunch at noon?", True)]
