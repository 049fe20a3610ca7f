"""interlink on the wire, through the command line: keys as identities, `interlink import`
and `interlink export`, checked against an independent implementation of interlink's
signature (`tests/interlink_ref.py`, written from interlink's source, importing no taskfs)."""

from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path
from typing import Any

import anyio

from tests import interlink_ref as ref
from tests.helpers import git, submit, taskfs
from tests.mcp.test_server import envelope, serve, server_env

PEER_SEED = os.urandom(32)  # "planner": an interlink agent elsewhere, known here by its key
PEER = ref.public_id(PEER_SEED)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def ok(*args: str, stdin: bytes | None = None) -> Any:
    result = taskfs(*args, "--json", stdin=stdin)
    assert result.code == 0, result.stdout + result.stderr
    return result.json


def setup_peer_and_builder() -> str:
    """builder has a taskfs key; planner's interlink key is admitted; a task planner -> builder
    is being worked on. Returns builder's interlink id."""
    made = ok("keys", "new", "--agent", "builder")
    admitted = ok("keys", "add", "--agent", "planner", "--public", PEER)
    assert admitted["interlinkId"] == PEER
    return str(made["interlinkId"])


def working_task(repo: Path, owns: str = "src/auth/login.py") -> str:
    """A task planner (the peer) opened as an interlink agent does, with its signed opening
    (taskfs writes nothing unsigned in the name of an agent with a key), claimed by builder."""
    known = {k["name"]: k for k in ok("keys", "ls")["keys"]}
    if known["planner"]["private"]:  # planner works here: it submits, signed
        task = submit(repo, filesAndInterfaces=[owns])
        assert taskfs("claim", task, "--agent", "builder").code == 0
        return task
    builder = known["builder"]["interlinkId"]
    task = f"w{os.urandom(4).hex()}"
    text = envelope(**{"from": None, "to": None, "filesAndInterfaces": [owns]})
    code, doc = import_lines(peer_says(builder, text=text, task_id=task))
    assert code == 0, doc
    assert taskfs("claim", task, "--agent", "builder").code == 0
    return task


def peer_says(builder: str, **fields: Any) -> str:
    message = {"to": builder, "ts": now_ms(), "msg_id": os.urandom(16).hex(), **fields}
    return ref.line(ref.sign(PEER_SEED, message))


def import_lines(*lines: str, agent: str = "builder") -> tuple[int, Any]:
    result = taskfs(
        "interlink", "import", "-", "--agent", agent, "--json", stdin="\n".join(lines).encode()
    )
    return result.code, result.json


def state(task: str) -> str:
    return str(ok("show", task)["state"])


def exported(*args: str) -> list[dict[str, Any]]:
    result = taskfs("interlink", "export", *args)
    assert result.code == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_a_message_signed_by_interlink_is_accepted_and_moves_the_task(repo: Path) -> None:
    builder = setup_peer_and_builder()
    task = working_task(repo)
    asked = ok("send", task, "Warn on empty passwords?", "--agent", "builder", "--status",
               "needs_input")  # fmt: skip
    assert state(task) == "input_required"
    # What taskfs signed is an interlink message: verified by the independent implementation.
    [question] = exported(asked["msg_id"])
    assert ref.verify(question)
    assert (question["from"], question["to"], question["task_id"]) == (builder, PEER, task)
    assert question["status"] == "needs_input"

    # planner's interlink answers; one flipped byte first, which must be refused, then the real.
    answer = peer_says(builder, text="Yes, warn.", task_id=task, in_reply_to=asked["msg_id"])
    raw = json.loads(answer)
    sig = bytearray(ref.b64d(raw["sig"]))
    sig[0] ^= 1
    flipped = ref.line({**raw, "sig": ref.b64e(bytes(sig))})
    head = git(repo, "rev-parse", "HEAD")
    code, doc = import_lines(flipped)
    assert (code, [r["code"] for r in doc["lines"]]) == (1, ["signature_invalid"])
    assert git(repo, "rev-parse", "HEAD") == head
    assert state(task) == "input_required"

    code, doc = import_lines(answer)
    assert code == 0, doc
    [line] = doc["lines"]
    assert line["accepted"] is True
    assert line["transition"] == {"from": "input_required", "to": "working"}
    assert state(task) == "working"
    shown = ok("messages", task)["messages"]
    # Its opening, builder's claim (which told planner, a peer), its question, the answer.
    assert [(m["from"], m.get("status"), m["verified"]) for m in shown] == [
        ("planner", None, True),
        ("builder", "update", True),
        ("builder", "needs_input", True),
        ("planner", None, True),
    ]
    # Stored as signed: exporting it gives back the very line interlink signed.
    assert exported(raw["msg_id"]) == [raw]
    assert git(repo, "log", "-1", "--format=%an") == "planner"


def test_the_inbound_gate_names_each_refusal_and_takes_the_rest_in_one_commit(
    repo: Path,
) -> None:
    builder = setup_peer_and_builder()
    task = working_task(repo)
    stranger_seed = os.urandom(32)
    good = peer_says(builder, text="Progress?", task_id=task, status="update")
    lines = [
        "not json",
        peer_says(builder, text="pair?", kind="pair_request"),
        ref.line(ref.sign(PEER_SEED, {"to": PEER, "text": "x", "ts": now_ms(), "msg_id": "a1"})),
        ref.line(
            ref.sign(stranger_seed, {"to": builder, "text": "x", "ts": now_ms(), "msg_id": "a2"})
        ),
        peer_says(builder, text="old", ts=now_ms() - 86_400_000 - 5_000),
        peer_says(builder, text="future", ts=now_ms() + 120_000),
        # A result about a task the ledger does not have (prose alone opens a request).
        peer_says(builder, text="no such task", task_id="nope", status="result"),
        good,
        good,
        # A millisecond later than `good`: a conversation is ordered by time.
        peer_says(builder, text="just chatting", ts=now_ms() + 1),
    ]
    head = git(repo, "rev-parse", "HEAD")
    code, doc = import_lines(*lines)
    assert code == 1
    assert [r["code"] for r in doc["lines"]] == [
        "message_invalid",
        "message_invalid",
        "message_misaddressed",
        "sender_unknown",
        "message_expired",
        "message_expired",
        "task_not_found",
        None,
        "message_replayed",
        None,
    ]
    assert "pair" in doc["lines"][1]["errors"][0]["reason"]
    # The two accepted lines went in together, in one commit on top of the old head; the
    # result on a task the ledger does not have is answered, in a commit of builder's.
    assert len(doc["commits"]) == 2
    assert git(repo, "rev-parse", "HEAD~2") == head
    # Replay protection is durable: the same line later is refused from the ledger itself.
    code, doc = import_lines(good)
    assert (code, doc["lines"][0]["code"]) == (1, "message_replayed")
    # The conversation without a task is recorded and shown, not refused.
    talk = ok("conversation", "planner", "--agent", "builder")["messages"]
    heard = [m for m in talk if m["from"] == "planner"][1:]  # after its opening
    assert [m["text"] for m in heard] == ["Progress?", "just chatting"]
    assert heard[1].get("task_id") is None
    # What builder said to planner: its claim, and the answer to the result on no task.
    [answer] = [m for m in talk if m["from"] == "builder" and m.get("in_reply_to")]
    assert answer.get("task_id") is None
    assert "task_not_found" in answer["text"]
    assert state(task) == "working"


def test_an_interlink_requester_opens_a_task_with_an_envelope(repo: Path) -> None:
    builder = setup_peer_and_builder()
    opening = peer_says(builder, text=envelope(**{"from": None, "to": None}), task_id="from-afar")
    code, doc = import_lines(opening)
    assert code == 0, doc
    assert doc["lines"][0]["opened"] is True
    shown = ok("show", "from-afar")
    assert (shown["state"], shown["envelope"]["from"], shown["envelope"]["to"]) == (
        "submitted",
        "planner",
        "builder",
    )
    assert git(repo, "log", "-1", "--format=%an") == "planner"
    # Plain text about a task nobody opened is kept as a request, never guessed into a
    # contract: it waits for the envelope (contract section 12).
    code, doc = import_lines(peer_says(builder, text="do the thing", task_id="unknown"))
    assert (code, doc["lines"][0]["code"]) == (0, None)
    kept = ok("show", "unknown")
    assert (kept["state"], kept["from"], kept["to"]) == ("intake", "planner", "builder")
    # The worker accepts with an update (a claim), as interlink's agents report working.
    ok("send", "from-afar", "On it.", "--agent", "builder", "--status", "update")
    assert state("from-afar") == "working"
    assert all(ref.verify(m) for m in exported("--task", "from-afar"))


def test_taskfs_delegates_to_an_interlink_agent(repo: Path) -> None:
    """planner works through taskfs; builder is an interlink agent elsewhere."""
    worker_seed = os.urandom(32)
    worker = ref.public_id(worker_seed)
    ok("keys", "new", "--agent", "planner")
    ok("keys", "add", "--agent", "builder", "--public", worker)
    task = submit(repo)
    [opening] = exported("--task", task)
    assert ref.verify(opening)
    assert (opening["to"], opening["task_id"], len(opening["msg_id"])) == (worker, task, 32)
    assert "objective" in opening["text"]
    # The peer reads the envelope without taskfs's local schema comment and petnames.
    assert "yaml-language-server" not in opening["text"]
    assert "planner" not in opening["text"]
    assert "builder" not in opening["text"]
    planner = opening["from"]

    def says(**fields: Any) -> str:
        body = {"to": planner, "ts": now_ms(), "msg_id": os.urandom(16).hex(), **fields}
        return ref.line(ref.sign(worker_seed, body))

    code, doc = import_lines(
        says(text="On it.", task_id=task, status="update", in_reply_to=opening["msg_id"]),
        agent="planner",
    )
    assert code == 0, doc
    assert state(task) == "working"
    question = says(text="Log a warning?", task_id=task, status="needs_input")
    assert import_lines(question, agent="planner")[0] == 0
    assert state(task) == "input_required"
    answer = ok("send", task, "Yes.", "--agent", "planner", "--in-reply-to",
                json.loads(question)["msg_id"])  # fmt: skip
    assert state(task) == "working"
    [sent] = exported(answer["msg_id"])
    assert ref.verify(sent)
    assert (sent["to"], sent["in_reply_to"]) == (worker, json.loads(question)["msg_id"])
    code, doc = import_lines(says(text="Done.", task_id=task, status="result"), agent="planner")
    assert code == 0, doc
    assert state(task) == "working"  # a result asks for the check; it completes nothing


def test_keys_are_identities_and_names_are_petnames(repo: Path, tmp_path: Path) -> None:
    seed_file = tmp_path / "interlink.key"
    seed = os.urandom(32)
    seed_file.write_text(ref.b64e(seed) + "\n")
    imported = ok("keys", "import", "--agent", "builder", "--seed-file", str(seed_file))
    assert imported["interlinkId"] == ref.public_id(seed)
    assert not Path(imported["privateKey"]).is_relative_to(repo)
    assert git(repo, "ls-files", ".taskfs/keys") == ".taskfs/keys/agent/builder.pub"
    ok("keys", "add", "--agent", "planner", "--public", PEER)
    listed = ok("keys", "ls")["keys"]
    assert [(k["name"], k["interlinkId"], k["kind"]) for k in listed] == [
        ("builder", ref.public_id(seed), "agent"),
        ("planner", PEER, "agent"),
    ]
    for bad in ("nope", PEER + "=", ref.b64e(b"\x01" + b"\x00" * 31)):
        result = taskfs("keys", "add", "--agent", "other", "--public", bad, "--json")
        assert (result.code, result.codes) == (1, ["key_invalid"]), bad
    again = taskfs("keys", "add", "--agent", "planner2", "--public", PEER, "--json")
    assert again.codes == ["key_exists"]
    # A message planner's interlink signs to the imported identity is taken as from planner.
    task = working_task(repo)
    code, doc = import_lines(
        peer_says(ref.public_id(seed), text="ok?", task_id=task, status="update")
    )
    assert code == 0, doc


def test_an_agent_key_in_the_older_spelling_keeps_being_read(repo: Path) -> None:
    builder = setup_peer_and_builder()
    pub = repo / ".taskfs" / "keys" / "agent" / "builder.pub"
    raw = ref.b64d(pub.read_text().strip())
    pub.write_text("ed25519:" + base64.b64encode(raw).decode() + "\n")
    git(repo, "commit", "-q", "-m", "older spelling", "--", str(pub))
    listed = {k["name"]: k["interlinkId"] for k in ok("keys", "ls")["keys"]}
    assert listed == {"builder": builder, "planner": PEER}
    task = working_task(repo)
    sent = ok("send", task, "Still me.", "--agent", "builder", "--status", "update")
    # planner's opening, builder's claim (told to planner), and its message.
    assert [m["verified"] for m in ok("messages", task)["messages"]] == [True, True, True]
    assert ref.verify(exported(sent["msg_id"])[0])


def test_every_message_taskfs_signs_verifies_as_interlinks(repo: Path, tmp_path: Path) -> None:
    for agent in ("planner", "builder"):
        ok("keys", "new", "--agent", agent)
    # The command line: a question, an answer, an update, a result request, a cancel.
    task = working_task(repo)
    asked = ok("send", task, "Which rule?", "--agent", "builder", "--status", "needs_input")
    ok("send", task, "The strict one.", "--agent", "planner", "--in-reply-to", asked["msg_id"])
    ok("send", task, "Halfway — ünïcode.", "--agent", "builder", "--status", "update")
    ok("send", task, "Done, please check.", "--agent", "builder", "--status", "result")
    other = working_task(repo, "src/other.py")
    ok("send", other, "Stop, please.", "--agent", "planner", "--status", "canceled")

    # The MCP tools: agent_* and interlink's send_message / cancel_task, over the SDK client.
    env = server_env(tmp_path)

    async def walk() -> None:
        async with serve(repo, "planner", env) as planner, serve(repo, "builder", env) as worker:
            sent = await planner.ok(
                "agent_send", envelope=envelope(id="mcp-task", filesAndInterfaces=["src/mcp.py"])
            )
            assert sent["id"] == "mcp-task"
            await worker.ok("agent_claim", task_id="mcp-task")
            q = await worker.ok("agent_ask", task_id="mcp-task", text="Scope?")
            await planner.ok("agent_answer", task_id="mcp-task", in_reply_to=q["msg_id"],
                             text="Just login.")  # fmt: skip
            await worker.ok("agent_update", task_id="mcp-task", text="On it.")
            await worker.ok("send_message", to="planner", text="Nearly.", task_id="mcp-task")
            await planner.ok("cancel_task", to="builder", task_id="mcp-task")

    anyio.run(walk)
    everything = exported()
    # The three tasks' openings (signed anew, identically, from committed files) come too.
    openings = [m for m in everything if "status" not in m and "objective" in m["text"]]
    assert sorted(m["task_id"] for m in openings) == sorted([task, other, "mcp-task"])
    assert all(ref.verify(m) for m in openings)
    assert exported() == everything
    lines = [m for m in everything if m not in openings]
    assert len(lines) == 10
    for line in lines:
        assert ref.verify(line), line
        assert list(line) == [
            k
            for k in (
                "from",
                "to",
                "text",
                "ts",
                "msg_id",
                "kind",
                "task_id",
                "status",
                "in_reply_to",
                "reply_to",
                "sig",
            )
            if k in line
        ]
        assert len(line["msg_id"]) == 32
        assert len(line["sig"]) == 86
    statuses = [line.get("status") for line in lines]
    assert statuses.count("canceled") == 2
    assert statuses.count("needs_input") == 2
    # One task's messages alone, and an older-style id still resolves as it did.
    assert {m["task_id"] for m in exported("--task", task)} == {task}


def test_bad_input_is_named_never_a_traceback(repo: Path, tmp_path: Path) -> None:
    setup_peer_and_builder()
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\xff\xfe{\x00}\n" + b"[" * 100_000 + b"\n\xc3\x28\n")
    result = taskfs("interlink", "import", str(garbage), "--agent", "builder", "--json")
    assert result.code == 1
    assert {r["code"] for r in result.json["lines"]} == {"message_invalid"}
    assert "Traceback" not in result.stderr
    missing = taskfs("interlink", "import", str(tmp_path / "nope"), "--agent", "builder", "--json")
    assert missing.codes == ["file_unreadable"]
    keyless = taskfs("interlink", "import", "-", "--agent", "nobody", "--json", stdin=b"{}")
    assert keyless.codes == ["recipient_unknown"]
    assert taskfs("interlink", "export", "0" * 32, "--json").codes == ["message_not_found"]
    assert taskfs("interlink", "export", "--task", "nope", "--json").codes == ["task_not_found"]
    seed = tmp_path / "bad.key"
    seed.write_text("not a key\n")
    bad = taskfs("keys", "import", "--agent", "x", "--seed-file", str(seed), "--json")
    assert bad.codes == ["key_invalid"]
    # A message to an agent without a committed key cannot be addressed to a key.
    task = working_task(repo)
    result = taskfs("send", task, "hi", "--agent", "builder", "--to", "stranger", "--json")
    assert result.codes == ["recipient_unknown"]
