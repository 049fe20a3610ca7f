"""interlink's five tools, driven over stdio by the MCP SDK's own client against `taskfs mcp`."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import anyio

from taskfs.api.submit import record_bytes
from taskfs.core.names import format_time, message_id, stamped_name
from taskfs.core.records import MessageRecord
from tests.helpers import git, taskfs
from tests.mcp.test_server import envelope, serve, server_env

INTERLINK_TOOLS = {
    "send_message": ({"to", "text", "session", "task_id", "status", "in_reply_to"}, {"to", "text"}),
    "cancel_task": ({"to", "task_id"}, {"to", "task_id"}),
    "message_status": ({"msg_id"}, {"msg_id"}),
    "conversation_history": ({"peer"}, {"peer"}),
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
            assert (seen["delivery"], seen["state"]) == ("sent", "submitted")

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
            assert (routed["task_id"], routed["session"]) == ("login", "tab-2")
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
            rows = [(m["task_id"], m.get("status"), m["opening"]) for m in history["messages"]]
            assert rows == [
                ("login", None, True),
                ("login", "update", False),
                ("login", "needs_input", False),
                ("login", None, False),
                ("login", None, False),
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

            assert await planner.refused("send_message", to="stranger", text="Hello?") == [
                "no_conversation"
            ]
            assert await planner.refused("message_status", msg_id="login/nope") == [
                "message_not_found"
            ]

    anyio.run(walk)
    # The offline file is delivered like any other, and the outbox reports it as unpushed.
    assert taskfs("deliver", "--json").json["ok"] is True
    assert git(repo, "status", "--porcelain", "--", "tasks") == ""
    assert taskfs("audit", "--json").json["ok"] is True
