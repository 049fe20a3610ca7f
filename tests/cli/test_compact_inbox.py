"""The inbox is compact (issue 38, item 10): it cost 41% of an agent's tokens, because a
question appeared in both `questions` and `unread`, every record carried eight bookkeeping
keys, and an intake repeated its whole problem list. A record is now its id, task, sender,
status and text, shown once; `--full` gives every record whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers import submit, taskfs

COMPACT = {"msg_id", "task_id", "from", "status", "text"}


def inbox(agent: str, *extra: str) -> Any:
    result = taskfs("inbox", "--agent", agent, "--json", *extra)
    assert result.code == 0, result.stdout + result.stderr
    return result.json


def test_a_question_is_shown_once_as_a_compact_record(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    asked = taskfs("send", task, "log it?", "--agent", "builder", "--status", "needs_input")
    assert asked.code == 0
    noted = taskfs("send", task, "still on it", "--agent", "builder", "--status", "update")
    assert noted.code == 0
    box = inbox("planner")
    questions, unread = box["questions"], box["unread"]
    assert [q["text"] for q in questions] == ["log it?"]
    assert set(questions[0]) == COMPACT | {"asOwner"}
    # Unread, the note only: the question is not listed twice ...
    assert [m["text"] for m in unread] == ["still on it"]
    assert set(unread[0]) == COMPACT
    # ... though both count as unread, and the badge says so.
    assert box["counts"] == {**box["counts"], "unread": 2, "questions": 1}
    # The whole records, on request.
    full = inbox("planner", "--full")
    assert {m["text"] for m in full["unread"]} == {"log it?", "still on it"}
    assert {"delivery", "signed", "verified", "file", "at"} <= set(full["unread"][0])


def test_a_request_names_what_it_lacks_without_its_problem_list(repo: Path) -> None:
    opened = taskfs("intake", "open", "add a flag", "--agent", "alice", "--to", "bob", "--json")
    assert opened.code == 0, opened.stdout
    (request,) = inbox("bob")["requests"]
    assert request["from"] == "alice"
    assert request["text"] == "add a flag"
    assert "outputFormat" in request["missing"]
    assert "problems" not in request
    (mine,) = inbox("alice")["requested"]
    assert set(mine) == {"id", "to", "missing"}
