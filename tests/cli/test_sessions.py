"""`--session`: a message routed to one session of an agent reaches that session only; the
inbox and the conversation of its other sessions leave it out."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import submit, taskfs


def test_a_routed_message_shows_in_its_session_only(repo: Path) -> None:
    submit(repo, id="login")
    assert taskfs("claim", "login", "--agent", "builder").code == 0
    routed = taskfs(
        "send", "login", "For tab 2.", "--agent", "planner", "--session", "tab-2", "--json"
    )
    plain = taskfs("send", "login", "For everyone.", "--agent", "planner", "--json")
    assert routed.json["session"] == "tab-2"
    ids = (routed.json["msg_id"], plain.json["msg_id"])

    def unread(*session: str) -> list[str]:
        box = taskfs("inbox", "--agent", "builder", *session, "--json").json
        return [m["msg_id"] for m in box["unread"]]

    def talk(*session: str) -> list[str]:
        found = taskfs("conversation", "planner", "--agent", "builder", *session, "--json").json
        return [m["msg_id"] for m in found["messages"]]

    assert unread() == list(ids)
    assert unread("--session", "tab-2") == list(ids)
    assert unread("--session", "tab-1") == [ids[1]]
    assert talk("--session", "tab-1") == [ids[1]]
    assert talk("--session", "tab-2") == list(ids)
    # The sender's own view is not filtered by the recipient's sessions.
    mine = taskfs("conversation", "builder", "--agent", "planner", "--session", "x", "--json")
    assert [m["msg_id"] for m in mine.json["messages"]] == list(ids)
