"""taskfs as a full peer on interlink's bus: a bus re-created from interlink's `src/bus.rs`
(tests/interlink_bus.py) and an interlink-style session written from `interlink-mcp.rs`
(tests/interlink_peer.py, importing nothing of taskfs) work with `taskfs interlink bridge`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from taskfs.core import yamlio
from tests.helpers import git, taskfs, write_envelope
from tests.interlink_bus import Bus
from tests.interlink_peer import Peer
from tests.mcp.test_server import envelope, serve, server_env


@pytest.fixture
def bus() -> Iterator[Bus]:
    with Bus() as running:
        yield running


def ok(*args: str) -> Any:
    result = taskfs(*args, "--json")
    assert result.code == 0, result.stdout + result.stderr
    return result.json


def bridge(bus: Bus, *urls: str) -> dict[str, Any]:
    where = [a for url in (urls or (bus.url,)) for a in ("--url", url)]
    return dict(ok("interlink", "bridge", "--agent", "planner", *where, "--once"))


def state(task: str) -> str:
    return str(ok("show", task)["state"])


@pytest.fixture
def worker(repo: Path, bus: Bus) -> Peer:
    """planner works here through taskfs; worker is an interlink session elsewhere, live on the
    roster, that never wrote to planner. Each admitted the other's key: planner with `keys
    add`, worker from the roster (the key is all it knows of taskfs)."""
    ok("keys", "new", "--agent", "planner")
    peer = Peer("worker", [bus.url])
    peer.announce("reviewing auth")
    ok("keys", "add", "--agent", "worker", "--public", peer.key)
    bridge(bus)  # planner's session announces itself
    peer.peers["planner"] = peer.discover("planner")
    return peer


def statuses(peer: Peer) -> list[tuple[str | None, str | None, str]]:
    return [(m.get("task_id"), m.get("status"), m["text"]) for m in peer.receive()]


def test_a_task_reaches_a_live_peer_that_never_wrote_and_completes_by_a_signed_act(
    repo: Path, bus: Bus, worker: Peer, tmp_path: Path
) -> None:
    path = write_envelope(repo / "login.yaml", id="login", **{"from": "planner", "to": "worker"})
    ok("new", str(path))
    path.unlink()
    opening = ok("messages", "login")["messages"][0]["msg_id"]

    async def delivery(msg_id: str) -> tuple[str, str]:
        async with serve(repo, "planner", server_env(tmp_path)) as planner:
            status = await planner.ok("message_status", msg_id=msg_id)
            await planner.ok("list_pending")
            return status["delivery"], planner.text

    # Committed, but no bus has it yet: pending, as interlink means it.
    before, pending_text = anyio.run(delivery, opening)
    assert before == "pending"
    assert pending_text.startswith("1 pending:\n→ worker (msg_id ")
    assert bridge(bus)["posted"] == [opening]
    assert anyio.run(delivery, opening)[0] == "sent"
    # It went to worker's live session (not the bare key nobody polls), asking for replies on
    # planner's session.
    [(route, payload)] = [(to, p) for to, p in bus.queues.sent if p["msg_id"] == opening]
    assert route == worker.route
    assert payload["reply_to"].endswith("#taskfs")
    [(task_id, status, text)] = statuses(worker)
    assert (task_id, status) == ("login", None)
    sent = yamlio.load(text.encode())
    assert sent["objective"].startswith("Fix the login")
    assert not {"from", "to"} & set(sent)  # petnames mean nothing to a peer
    assert "yaml-language-server" not in text

    # The peer answers, asks, gets its answer, and sends its result.
    worker.send_message("planner", "On it.", task_id="login", status="update")
    bridge(bus)
    assert state("login") == "working"
    asked = worker.send_message(
        "planner", "bcrypt or argon2?", task_id="login", status="needs_input"
    )
    bridge(bus)
    assert state("login") == "input_required"
    ok("send", "login", "argon2", "--agent", "planner", "--in-reply-to", asked["msg_id"])
    bridge(bus)
    [answer] = worker.receive()
    assert (answer["in_reply_to"], answer["text"]) == (asked["msg_id"], "argon2")
    assert state("login") == "working"

    # The work lands in the repository (the peer pushes it); a check run before the result is
    # not what accepts it.
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "login.py").write_text("REFUSE_EMPTY = True\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "worker's change")
    assert taskfs("check", "login", "--json").code == 0
    result = worker.send_message("planner", "Done: argon2.", task_id="login", status="result")
    bridge(bus)
    early = taskfs("complete", "login", "--agent", "planner", "--json")
    assert (early.code, early.codes) == (1, ["completion_requires_evidence"])
    # The holder itself cannot sign here; the sender accepts its result on fresh evidence.
    assert taskfs("check", "login", "--json").code == 0
    done = ok("complete", "login", "--agent", "planner")
    assert done["state"] == "completed"
    status_files = sorted((repo / "tasks" / "login" / "status").iterdir())
    final = yamlio.load(status_files[-1].read_bytes())
    assert (final["state"], final["by"], final["message"]) == (
        "completed",
        "planner",
        result["msg_id"],
    )
    assert "sig" in final
    bridge(bus)
    [(task_id, status, text)] = statuses(worker)
    assert (task_id, status) == ("login", None)
    assert text.startswith("accepted: the acceptance check passed on your result")
    assert worker.dropped == []
    assert ok("audit")["findings"] == []
    assert git(repo, "status", "--porcelain") == ""


def test_a_peer_that_knows_only_taskfss_key_opens_a_task_and_cancels_it(
    repo: Path, bus: Bus, worker: Peer
) -> None:
    text = envelope(id="afar", **{"from": None, "to": None})
    worker.send_message("planner", text, task_id="afar")
    worker.cancel_task("planner", "afar", "never mind")
    # Both went to planner's session, chosen from the roster as interlink's route_session does.
    assert {to for to, _ in bus.queues.sent[-2:]} == {f"{worker.peers['planner']}#taskfs"}
    got = bridge(bus)["received"]
    assert [(r["task_id"], r["opened"], r["transition"]) for r in got] == [
        ("afar", True, None),
        ("afar", False, {"from": "submitted", "to": "canceled"}),
    ]
    shown = ok("show", "afar")
    assert (shown["state"], shown["envelope"]["from"], shown["envelope"]["to"]) == (
        "canceled",
        "worker",
        "planner",
    )
    assert ok("audit")["findings"] == []


def test_refusals_failures_and_reassignments_reach_the_peer(
    repo: Path, bus: Bus, worker: Peer
) -> None:
    worker.send_message(
        "planner", envelope(id="theirs", **{"from": None, "to": None}), task_id="theirs"
    )
    bridge(bus)
    ok("refuse", "theirs", "--agent", "planner", "--reason", "not in this repository")
    for task, owns in (("fails", "src/a.py"), ("moves", "src/b.py")):
        path = write_envelope(
            repo / f"{task}.yaml",
            id=task,
            filesAndInterfaces=[owns],
            **{"from": "planner", "to": "worker"},
        )
        ok("new", str(path))
        path.unlink()
    bridge(bus)
    first = statuses(worker)  # the refusal and the two openings
    assert ("theirs", "failed", "refused: not in this repository") in first
    for task in ("fails", "moves"):
        worker.send_message("planner", "On it.", task_id=task, status="update")
    bridge(bus)
    ok("move", "fails", "failed", "--agent", "planner", "--reason", "the spec changed")
    ok("reassign", "moves", "--to", "planner", "--agent", "planner")
    bridge(bus)
    assert sorted(statuses(worker)) == [
        ("fails", "failed", "the spec changed"),
        ("moves", "canceled", "reassigned to planner as moves-r1"),
    ]
    assert ok("audit")["findings"] == []


def test_several_buses_are_all_polled_and_posted_to_and_a_message_lands_once(
    repo: Path, bus: Bus, worker: Peer
) -> None:
    with Bus() as other:
        far = Peer("far", [other.url])
        far.announce()
        ok("keys", "add", "--agent", "far", "--public", far.key)
        bridge(bus, bus.url, other.url)  # announces on both
        assert "planner" in {e["name"] for e in far.roster()}
        far.peers["planner"] = far.discover("planner")
        worker.urls.append(other.url)  # worker uses both buses: its message travels twice
        said = worker.send_message("planner", "Hello from both.")
        heard = far.send_message("planner", "Hello from afar.")
        got = bridge(bus, f"{bus.url},{other.url}")["received"]
        assert sorted((r["msg_id"], r["already"]) for r in got) == sorted(
            [(said["msg_id"], False), (said["msg_id"], True), (heard["msg_id"], False)]
        )
        shown = ok("conversation", "worker", "--agent", "planner")["messages"]
        assert [m["text"] for m in shown] == ["Hello from both."]
        # What planner sends goes to every bus; far hears it on its own.
        path = write_envelope(
            repo / "far.yaml",
            id="far-task",
            filesAndInterfaces=["far/**"],
            **{"from": "planner", "to": "far"},
        )
        ok("new", str(path))
        path.unlink()
        [opening] = bridge(bus, bus.url, other.url)["posted"]
        for one in (bus, other):
            assert opening in [p["msg_id"] for _, p in one.queues.sent]
        assert [m["task_id"] for m in far.receive()] == ["far-task"]


def test_a_message_to_a_peer_without_a_session_to_choose_is_refused_as_interlink_refuses(
    repo: Path, bus: Bus, worker: Peer, tmp_path: Path
) -> None:
    second = Peer("worker", [bus.url], seed=worker.seed)
    second.announce("another tab")
    env = {**server_env(tmp_path), "INTERLINK_URL": bus.url}

    async def walk() -> None:
        from mcp.shared.exceptions import MCPError

        async with serve(repo, "planner", env) as planner:
            with pytest.raises(MCPError) as refused:
                await planner.session.call_tool("send_message", {"to": "worker", "text": "Hi?"})
            # interlink's words (route_session); the code travels in the error's data.
            said = refused.value.error.message.splitlines()
            assert said[0] == "'worker' has several live sessions — pass session=<id>:"
            assert {line.split(" · ")[0].strip() for line in said[1:]} == {
                worker.session_id,
                second.session_id,
            }
            data = refused.value.error.data
            assert [e["code"] for e in data["errors"]] == ["session_unroutable"]
            said = await planner.ok(
                "send_message", to="worker", text="Hi, tab two.", session=second.session_id[:6]
            )
            assert (said["session"], said["presence"], said["delivery"]) == (
                second.session_id,
                "live",
                "pending",
            )
            assert planner.text == (
                f"queued for worker ({second.session_id}) (msg_id {said['msg_id']}) — "
                "delivering in the background"
            )
            with pytest.raises(MCPError) as unknown:
                await planner.session.call_tool(
                    "send_message", {"to": "worker", "text": "x", "status": " bogus "}
                )
            assert "unknown status 'bogus'" in str(unknown.value)

    anyio.run(walk)
    assert len(ok("conversation", "worker", "--agent", "planner")["messages"]) == 1


def test_roster_entries_name_what_the_bridge_serves(repo: Path, bus: Bus, worker: Peer) -> None:
    [mine] = [e for e in worker.roster() if e["name"] == "planner"]
    assert mine["session"]["session_id"] == "taskfs"
    assert mine["session"]["git_root"] == repo.name
    assert mine["session"]["summary"].startswith(f"taskfs ledger {repo.name}: ")
    assert json.dumps(mine)  # what the roster holds is an interlink Announcement, verified


def test_audit_names_a_senders_completion_that_rests_on_evidence_from_before_the_result(
    repo: Path, bus: Bus, worker: Peer
) -> None:
    """The live gate refuses it; a status file signed by the sender and committed by hand
    passes no better: audit replays the same rule."""
    from taskfs.core.status_file import status_document
    from taskfs.core.transition_signing import sign_document
    from taskfs.store import keys
    from tests.cli.test_authority import findings
    from tests.helpers import commit_as

    path = write_envelope(repo / "t.yaml", id="early", **{"from": "planner", "to": "worker"})
    ok("new", str(path))
    path.unlink()
    bridge(bus)
    worker.receive()
    worker.send_message("planner", "On it.", task_id="early", status="update")
    bridge(bus)
    # Not the holder, and no result from the holder yet: the sender may not complete.
    refused = taskfs("complete", "early", "--agent", "planner", "--json")
    assert refused.codes[0] == "agent_not_allowed"
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "login.py").write_text("x = 1\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "the work")
    checked = ok("check", "early")  # before the result
    result = worker.send_message("planner", "Done.", task_id="early", status="result")
    bridge(bus)
    status = sorted((repo / "tasks" / "early" / "status").iterdir())
    document = status_document(
        task="early",
        state="completed",
        by="planner",
        at="2030-01-01T00:00:00Z",
        prev=status[-1].name,
        reason=None,
        evidence=checked["evidence"].rsplit("/", 1)[-1],
        artifacts=[],
        message=result["msg_id"],
    )
    pair = keys.load_private("agent", "planner")
    assert pair is not None
    rel = f"tasks/early/status/{len(status) + 1:04d}-completed-aaaaaaaa.yaml"
    (repo / rel).write_text(yamlio.dump(sign_document(document, pair.private)))
    commit_as(repo, "planner", "completed by hand", rel)
    assert ("transition_unauthorized", rel) in findings()
    named = [f for f in taskfs("audit", "--json").json["findings"] if f["path"] == rel]
    assert [f["code"] for f in named] == ["transition_unauthorized"]
    assert "after the holder's result" in named[0]["message"]  # the rule, not the signature


def test_a_message_for_a_peer_off_the_roster_is_held_pending_until_it_appears(
    repo: Path, bus: Bus, worker: Peer
) -> None:
    ghost = Peer("ghost", [bus.url])
    ok("keys", "add", "--agent", "ghost", "--public", ghost.key)
    path = write_envelope(repo / "g.yaml", id="ghostly", **{"from": "planner", "to": "ghost"})
    ok("new", str(path))
    path.unlink()
    first = bridge(bus)
    assert first["posted"] == []
    [held] = first["held"]
    assert "no live session" in held["reason"]
    assert not [p for to, p in bus.queues.sent if to.startswith(ghost.key)]  # not the bare key
    ghost.announce()
    ghost.peers["planner"] = ghost.discover("planner")
    assert bridge(bus)["posted"] == [held["msg_id"]]
    assert [m["task_id"] for m in ghost.receive()] == ["ghostly"]


def _peer_holds_with_a_result(repo: Path, bus: Bus, worker: Peer, task: str) -> dict[str, Any]:
    path = write_envelope(repo / "w.yaml", id=task, **{"from": "planner", "to": "worker"})
    ok("new", str(path))
    path.unlink()
    bridge(bus)
    worker.receive()
    worker.send_message("planner", "On it.", task_id=task, status="update")
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "login.py").write_text("x = 1\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "the peer's work")
    result = worker.send_message("planner", "Done.", task_id=task, status="result")
    bridge(bus)
    return result


def test_a_watcher_allowed_to_complete_completes_a_peers_work_as_its_sender(
    repo: Path, bus: Bus, worker: Peer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("complete: true\nallow:\n  commands: ['test -f src/auth/login.py']\n")
    monkeypatch.setenv("TASKFS_POLICY", str(policy))
    result = _peer_holds_with_a_result(repo, bus, worker, "watched")
    watched = taskfs("watch", "--once")
    assert watched.code == 0, watched.stderr
    assert state("watched") == "completed", watched.stderr
    final = yamlio.load(sorted((repo / "tasks" / "watched" / "status").iterdir())[-1].read_bytes())
    assert (final["by"], final["message"]) == ("planner", result["msg_id"])
    bridge(bus)
    assert [s for _t, s, _x in statuses(worker)] == [None]  # the acceptance
    assert ok("audit")["findings"] == []


def test_a_task_a_peer_sent_completes_by_its_holder_here_and_the_peer_hears_result(
    repo: Path, bus: Bus, worker: Peer
) -> None:
    text = envelope(id="theirs", **{"from": None, "to": None})
    worker.send_message("planner", text, task_id="theirs")
    bridge(bus)
    ok("claim", "theirs", "--agent", "planner")
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "login.py").write_text("x = 1\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "planner's work")
    ok("check", "theirs")
    ok("complete", "theirs", "--agent", "planner")
    bridge(bus)
    claimed, (task_id, status, text) = statuses(worker)
    assert claimed[:2] == ("theirs", "update")  # the claim told the peer first
    assert (task_id, status) == ("theirs", "result")
    assert text.startswith("completed: the acceptance check passed")
    assert ok("audit")["findings"] == []
