"""A message id is named the same way wherever a command takes one (the team day: `send
--in-reply-to e5b6` answered a question, and `read 39cd ccfb` said message_not_found for the
same kind of prefix): the whole id, a unique prefix of it, or its file's stem; a prefix that fits
more than one message is refused by name (`message_ambiguous`), the same in both."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.helpers import git, send, submit, taskfs


def _updates(task: str, count: int) -> list[str]:
    """`count` updates from builder to planner about `task`; their msg_ids."""
    return [send(task, "builder", "planner", f"step {n}", status="update") for n in range(count)]


def test_read_takes_the_prefixes_send_takes(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    first, second = _updates(task, 2)
    head = git(repo, "rev-parse", "HEAD")
    # A prefix as long as the shortest that tells these two apart.
    length = next(n for n in range(4, 33) if first[:n] != second[:n])
    read = taskfs("read", first[:length], "--agent", "planner", "--json")
    assert read.code == 0, read.stdout
    assert read.json["marked"] == [first]  # the whole id, as the mark records it
    assert git(repo, "rev-list", "--count", f"{head}..HEAD") == "1"
    # Its file's stem names it too, as --in-reply-to's does.
    stem = Path(taskfs("messages", task, "--json").json["messages"][-1]["file"]).stem
    again = taskfs("read", stem, "--agent", "planner", "--json")
    assert again.code == 0, again.stdout
    assert again.json["marked"] == [second]
    inbox = taskfs("inbox", "--agent", "planner", "--json").json
    assert [m["msg_id"] for m in inbox["unread"]] == []


def test_an_ambiguous_prefix_is_refused_by_name_by_read_and_send(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    # Seventeen ids in sixteen first digits: two share one (pigeonhole).
    sent = _updates(task, 17)
    shared = next(c for c, n in Counter(m[0] for m in sent).items() if n > 1)
    fits = sorted(m for m in sent if m.startswith(shared))
    head = git(repo, "rev-parse", "HEAD")
    read = taskfs("read", shared, "--agent", "planner", "--json")
    assert (read.code, read.codes) == (1, ["message_ambiguous"])
    assert sorted(read.json["errors"][0]["matches"]) == fits
    reply = taskfs("send", task, "ok", "--agent", "planner", "--in-reply-to", shared, "--json")
    assert (reply.code, reply.codes) == (1, ["message_ambiguous"])
    assert sorted(reply.json["errors"][0]["matches"]) == fits
    assert git(repo, "rev-parse", "HEAD") == head
    # An id that fits none is still not found, in both.
    assert taskfs("read", "nope", "--agent", "planner", "--json").codes == ["message_not_found"]
