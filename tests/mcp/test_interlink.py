"""interlink's five tools, driven over stdio by the MCP SDK's own client against `taskfs mcp`."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import anyio

from taskfs.api.tasks.filing import record_bytes
from taskfs.core.layout import format_time, message_id, stamped_name
from taskfs.core.records import MessageRecord
from tests.helpers import git, send, taskfs, write_envelope
from tests.mcp.test_server import envelope, serve, server_env

INTERLINK_TOOLS = {
    "send_message": ({"to", "text", "session", "task_id", "status", "in_reply_to"}, {"to", "text"}),
    "cancel_task": ({"to", "task_id", "reason"}, {"to", "task_id"}),
    "message_status": ({"msg_id"}, {"msg_id"}),
    "conversation_history": ({"peer", "limit"}, {"peer"}),
    "list_pending": (set(), set()),
}


def offline_message(repo: Path, task_id: str, sender: str, to: str, text: str) -> str:
    """A message file written the way an agent without git writes one: not committed."""
    now = datetime.now(timezone.utc)
    name = stamped_name(now)
    record = MessageRecord.model_validate(
        {
            "msg_id": message_id(task_id, name),
            "task_id": task_id,
            "from": sender,
            "to": to,
            "at": format_time(now),
            "text": text,
        }
    )
    (repo / "tasks" / task_id / "messages").mkdir(exist_ok=True)
    (repo / "tasks" / task_id / "messages" / name).write_bytes(record_bytes(record.to_document()))
    return record.msg_id


def test_a_sender_works_through_the_interlink_tools_alone(repo: Path, tmp_path: Path) -> None:
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    git(repo, "remote", "add", "origin", str(origin))
    git(repo, "push", "-q", "-u", "origin", "main")
    env = server_env(tmp_path)

    async def walk() -> None:
        async with (
            serve(repo, "planner", env) as planner,
            serve(repo, "builder", env, session="tab-1") as builder,
            serve(repo, "builder", env, session="tab-2") as other_tab,
        ):
            listed = {t.name: t for t in (await planner.session.list_tools()).tools}
            for name, (arguments, required) in INTERLINK_TOOLS.items():
                schema = listed[name].input_schema
                assert set(schema.get("properties", {})) == arguments, name
                assert set(schema.get("required", [])) == required, name

            # No task_id and an envelope for text: a task opens, addressed to `to`.
            opened = await planner.ok("send_message", to="builder", text=envelope(id="login"))
            assert (opened["msg_id"], opened["task_id"]) == ("login/envelope", "login")
            assert (opened["state"], opened["opening"], opened["to"]) == (
                "submitted",
                True,
                "builder",
            )
            seen = await builder.ok("message_status", msg_id="login/envelope")
            # To its addressee a message (an opening too) is `received`, as interlink says.
            assert (seen["delivery"], seen["state"]) == ("received", "submitted")

            # The worker accepts with an update (a claim), then asks without naming the task:
            # replies stick to the task of the last message exchanged with that peer.
            accepted = await builder.ok(
                "send_message",
                to="planner",
                text="On it.",
                status="update",
                in_reply_to="login/envelope",
            )
            assert accepted["transition"] == {"from": "submitted", "to": "working"}
            assert (await planner.ok("message_status", msg_id="login/envelope"))["delivery"] == (
                "read"
            )
            asked = await builder.ok(
                "send_message", to="planner", text="Log a warning too?", status="needs_input"
            )
            assert (asked["task_id"], asked["state"]) == ("login", "input_required")

            answered = await planner.ok(
                "send_message", to="builder", text="No.", in_reply_to=asked["msg_id"]
            )
            assert answered["transition"] == {"from": "input_required", "to": "working"}
            status = await planner.ok("message_status", msg_id=answered["msg_id"])
            assert (status["msg_id"], status["delivery"], status["state"]) == (
                answered["msg_id"],
                "sent",
                "working",
            )

            # A routed message reaches one session of builder's, not the other.
            routed = await planner.ok(
                "send_message", to="builder", text="For tab 2.", session="tab-2"
            )
            # Without task_id or status: interlink's plain message, about no task.
            assert (routed["task_id"], routed["session"]) == (None, "tab-2")
            tab1 = await builder.ok("conversation_history", peer="planner")
            tab2 = await other_tab.ok("conversation_history", peer="planner")
            assert routed["msg_id"] not in [m["msg_id"] for m in tab1["messages"]]
            assert routed["msg_id"] in [m["msg_id"] for m in tab2["messages"]]

            # Canceling is a message and a transition; it stops nothing by force.
            await planner.ok(
                "send_message",
                to="builder",
                text=envelope(id="docs", filesAndInterfaces=["docs/**"], to=None),
            )
            await builder.ok(
                "send_message", to="planner", text="Taking it.", status="update", task_id="docs"
            )
            canceled = await planner.ok("cancel_task", to="builder", task_id="docs")
            assert canceled["transition"] == {"from": "working", "to": "canceled"}
            assert canceled["cooperative"] is True
            assert (await builder.ok("message_status", msg_id=canceled["msg_id"]))["state"] == (
                "canceled"
            )

            history = await planner.ok("conversation_history", peer="builder")
            rows = [(m.get("task_id"), m.get("status"), m["opening"]) for m in history["messages"]]
            assert rows == [
                ("login", None, True),
                ("login", "update", False),
                ("login", "needs_input", False),
                ("login", None, False),
                (None, None, False),
                ("docs", None, True),
                ("docs", "update", False),
                ("docs", "canceled", False),
            ]
            assert all(m["verified"] for m in history["messages"])

            # The outbox: committed but not pushed, then one written offline, not committed.
            outbox = await planner.ok("list_pending")
            assert outbox["upstream"] == "origin/main"
            assert [(m["msg_id"], m["pending"]) for m in outbox["messages"]] == [
                ("login/envelope", "unpushed"),
                (answered["msg_id"], "unpushed"),
                (routed["msg_id"], "unpushed"),
                ("docs/envelope", "unpushed"),
                (canceled["msg_id"], "unpushed"),
            ]
            git(repo, "push", "-q")
            assert (await planner.ok("list_pending"))["messages"] == []
            written = offline_message(repo, "login", "planner", "builder", "Written offline.")
            outbox = await planner.ok("list_pending")
            assert [(m["msg_id"], m["pending"]) for m in outbox["messages"]] == [
                (written, "uncommitted")
            ]
            assert (await planner.ok("message_status", msg_id=written))["delivery"] == "pending"
            assert (await builder.ok("list_pending"))["messages"] == []

            # A status is about a task: with none exchanged, taskfs does not guess one.
            assert await planner.refused(
                "send_message", to="stranger", text="Hello?", status="update"
            ) == ["no_conversation"]
            assert await planner.refused("message_status", msg_id="login/nope") == [
                "message_not_found"
            ]

    anyio.run(walk)
    # The offline file is delivered like any other, and the outbox reports it as unpushed.
    assert taskfs("deliver", "--json").json["ok"] is True
    assert git(repo, "status", "--porcelain", "--", "tasks") == ""
    assert taskfs("audit", "--json").json["ok"] is True


def test_the_tools_read_and_answer_as_interlinks_do(repo: Path, tmp_path: Path) -> None:
    for agent in ("planner", "builder"):
        assert taskfs("keys", "new", "--agent", agent).code == 0
    env = server_env(tmp_path)

    async def walk() -> None:
        async with serve(repo, "planner", env) as planner, serve(repo, "builder", env) as builder:
            listed = (await planner.session.list_tools()).tools
            for tool in listed:
                if tool.name in INTERLINK_TOOLS:
                    for name, schema in tool.input_schema.get("properties", {}).items():
                        assert schema.get("description"), (tool.name, name)
            described = {t.name: t.description or "" for t in listed}
            assert "acceptance check" in described["send_message"]
            assert "claims" in described["send_message"]

            opened = await planner.ok("send_message", to="builder", text=envelope(id="login"))
            # A signed opening has an opaque id, like every message (interlink's: 32 hex).
            assert len(opened["msg_id"]) == 32
            assert int(opened["msg_id"], 16) >= 0
            assert planner.text.startswith(
                f"queued for builder (msg_id {opened['msg_id']}) [task login] — task opened"
            )
            # status "" is no status: a plain message, which claims nothing.
            plain = await builder.ok(
                "send_message", to="planner", text="Reading it.", status="", task_id="login"
            )
            assert (plain["status"], plain["transition"], plain["state"]) == (
                None,
                None,
                "submitted",
            )
            assert builder.text == (
                f"queued for planner (msg_id {plain['msg_id']}) [task login] — committed to git "
                f"({plain['commit'][:12]})"
            )
            claimed = await builder.ok(
                "send_message", to="planner", text="On it.", status="update", task_id="login"
            )
            assert builder.text.endswith(
                "[task login · update] — committed to git "
                f"({claimed['commit'][:12]}); the task moved submitted -> working"
            )
            # to "self" is one's own identity.
            note = await planner.ok("send_message", to="self", text="Remember.", task_id="login")
            assert (note["from"], note["to"]) == ("planner", "planner")
            assert planner.text.startswith(f"queued for planner (msg_id {note['msg_id']})")

            status = await planner.ok("message_status", msg_id=claimed["msg_id"])
            assert status["state"] == "working"
            assert planner.text == f"← builder [received] (msg_id {claimed['msg_id']}): On it."
            mine = await builder.ok("message_status", msg_id=claimed["msg_id"])
            assert mine["msg_id"] == claimed["msg_id"]
            assert builder.text == f"→ planner [sent] (msg_id {claimed['msg_id']}): On it."

            for n in range(20):
                await builder.ok("send_message", to="planner", text=f"step {n}", status="update")
            everything = taskfs("conversation", "builder", "--agent", "planner", "--json")
            assert everything.code == 0, everything.stdout
            history = await planner.ok("conversation_history", peer="builder")
            texts = [m["text"] for m in history["messages"]]
            assert len(texts) == 20  # interlink's default limit: the latest twenty, newest last
            assert texts[-1] == "step 19"
            assert texts[0] == "step 0"  # the opening and the first two replies are older
            # The opening, kept with the task as its first message, the two replies, 20 steps.
            assert len(everything.json["messages"]) == 23
            lines = planner.text.splitlines()
            assert len(lines) == 20
            assert lines[-1].startswith("← builder [received] (msg_id ")
            assert lines[-1].endswith(": step 19")
            two = await planner.ok("conversation_history", peer="builder", limit=2)
            assert [m["text"] for m in two["messages"]] == ["step 18", "step 19"]
            assert (await planner.ok("conversation_history", peer="builder", limit=0))[
                "messages"
            ] == []
            assert planner.text == "no message history with builder"
            # `limit` is an unsigned 32-bit number, as interlink types it.
            schema = {t.name: t.input_schema for t in listed}["conversation_history"]
            assert schema["properties"]["limit"]["type"] == ["integer", "null"]
            assert schema["properties"]["limit"]["minimum"] == 0
            assert schema["properties"]["limit"]["maximum"] == 2**32 - 1
            wrong = await planner.session.call_tool(
                "conversation_history", {"peer": "builder", "limit": -1}
            )
            assert wrong.is_error

            # The reason is the signed text of the cancel.
            canceled = await planner.ok(
                "cancel_task", to="builder", task_id="login", reason="Priorities changed."
            )
            assert canceled["transition"] == {"from": "working", "to": "canceled"}
            assert planner.text == (
                f"sent cancel for task 'login' to builder (msg_id {canceled['msg_id']})"
            )
            row = (await builder.ok("message_status", msg_id=canceled["msg_id"]))["message"]
            assert (row["text"], row["signed"], row["verified"]) == (
                "Priorities changed.",
                True,
                True,
            )

            assert (await planner.ok("list_pending"))["messages"] == []
            assert planner.text == "nothing pending; all sent messages were accepted by the bus"
            assert await planner.refused(
                "send_message", to="stranger", text="Hello?", status="update"
            ) == ["no_conversation"]
            assert planner.text.startswith("refused: no_conversation: ")

            # No task_id, no status, no envelope: a conversation message, signed, moving
            # nothing; a reply to it is conversation too, and it has a status of its own.
            said = await planner.ok("send_message", to="builder", text="Lunch?")
            assert (said["task_id"], said["state"], said["signed"]) == (None, None, True)
            assert planner.text == (
                f"queued for builder (msg_id {said['msg_id']}) — committed to git "
                f"({said['commit'][:12]})"
            )
            reply = await builder.ok(
                "send_message", to="planner", text="Sure.", in_reply_to=said["msg_id"]
            )
            assert reply["task_id"] is None
            seen = await builder.ok("message_status", msg_id=said["msg_id"])
            assert (seen["task_id"], seen["state"], seen["verified"]) == (None, None, True)
            assert builder.text == f"← planner [received] (msg_id {said['msg_id']}): Lunch?"
            last = await planner.ok("conversation_history", peer="builder", limit=2)
            assert [m["text"] for m in last["messages"]] == ["Lunch?", "Sure."]
            assert await planner.refused(
                "send_message", to="builder", text="x", status="update", in_reply_to=said["msg_id"]
            ) == ["invalid_value"]

    anyio.run(walk)
    assert taskfs("audit", "--json").json["ok"] is True


def test_the_chains_owner_answers_a_relayed_question_through_send_message(
    repo: Path, tmp_path: Path
) -> None:
    for task_id, parent, sender, to, files in [
        ("root", None, "alice", "bob", ["src/**"]),
        ("leaf", "root", "bob", "carol", ["src/auth/**"]),
    ]:
        made = taskfs(
            "new",
            str(
                write_envelope(
                    repo / f"{task_id}.yaml",
                    id=task_id,
                    parent=parent,
                    filesAndInterfaces=files,
                    **{"from": sender, "to": to},
                )
            ),
            "--json",
        )
        assert made.code == 0, made.stdout
        (repo / f"{task_id}.yaml").unlink()
        assert taskfs("claim", task_id, "--agent", to).code == 0
    question = send("leaf", "carol", "bob", "Which format?", status="needs_input")
    env = server_env(tmp_path)

    async def walk() -> None:
        async with serve(repo, "alice", env) as alice:
            box = await alice.ok("agent_inbox")
            assert [(q["msg_id"], q["asOwner"]) for q in box["questions"]] == [(question, True)]
            answered = await alice.ok(
                "send_message", to="carol", text="JSON.", in_reply_to=question
            )
            assert answered["transition"] == {"from": "input_required", "to": "working"}

    anyio.run(walk)
    assert taskfs("show", "leaf", "--json").json["state"] == "working"
