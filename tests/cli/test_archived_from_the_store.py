"""An archived task is answered from the store (issue 36, item 7): `show`, `log` and `messages`
of a task `taskfs archive` took out of the working tree cost what they cost for a live one, and
none of them reads every archive record to find the one task.

What a command costs is not timed here (bench/paired.py --archived measures it): it is seen in
what the command reads and loads.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taskfs.readmodel import archive
from tests.helpers import check, send, submit, taskfs
from tests.test_startup import _fast

TRUE = {"passFailCommand": "true", "endToEndVerification": "it runs"}


def _archived(repo: Path, count: int) -> list[str]:
    """`count` finished tasks archived over as many archive acts (one record file each), and
    one live task."""
    ids = []
    for n in range(count):
        task = submit(
            repo, id=f"old-{n}", filesAndInterfaces=[f"src/old{n}/**"], acceptanceCheck=TRUE
        )
        assert taskfs("claim", task, "--agent", "builder").code == 0
        send(task, "builder", "planner", f"done with {n}")
        check(task)
        assert taskfs("complete", task, "--agent", "builder").code == 0
        assert taskfs("archive", "--older-than", "0").code == 0
        ids.append(task)
    submit(repo, id="live", filesAndInterfaces=["src/live/**"])
    assert taskfs("ls", "--json").code == 0  # the store is at HEAD
    return ids


@pytest.fixture
def records_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many archive records were parsed (watched, not replaced)."""
    count = [0]
    real = archive.read

    def counted(data: object) -> archive.Record:
        count[0] += 1
        return real(data)

    monkeypatch.setattr(archive, "read", counted)
    return count


def test_show_log_and_messages_of_an_archived_task_read_no_archive_record(
    repo: Path, records_read: list[int]
) -> None:
    ids = _archived(repo, 4)
    records_read[0] = 0
    for args in (
        ("show", ids[1], "--json"),
        ("show", ids[1]),
        ("log", ids[1], "--json"),
        ("messages", ids[1], "--json"),
    ):
        result = taskfs(*args)
        assert result.code == 0, (args, result.stdout)
        assert records_read[0] == 0, args
    shown = taskfs("show", ids[1], "--json").json
    assert (shown["state"], shown.get("archived")) == ("completed", True)
    messages = taskfs("messages", ids[1], "--json").json
    assert [m["text"] for m in messages["messages"]] == ["done with 1"]


def test_an_archived_task_is_shown_as_a_live_one_is_the_second_time(repo: Path) -> None:
    """The second `show` of an archived task, like a live one's, loads no model, no YAML and
    no command-line framework: the answer was stored the first time."""
    ids = _archived(repo, 2)
    for task in (ids[0], "live"):
        first = _fast(repo, ["show", task, "--json"], {"TASKFS_RACY_MARGIN_MS": "0"})
        second = _fast(repo, ["show", task, "--json"], {"TASKFS_RACY_MARGIN_MS": "0"})
        assert (first["code"], second["code"]) == (0, 0), task
        assert second["stdout"] == first["stdout"]
        assert second["loaded"] == [], task
        assert json.loads(str(second["stdout"]))["id"] == task
