"""The sender's view (issue 29): `taskfs sent`, and the tasks that need their sender in its
inbox until it handles them."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import configure, submit, taskfs


def quiet_after(repo: Path, minutes: float) -> None:
    configure(repo, "quiet threshold", nudge={"senderQuietMinutes": minutes})


def ended(agent: str = "planner") -> list[str]:
    return [t["id"] for t in taskfs("inbox", "--agent", agent, "--json").json["ended"]]


def test_a_refusal_and_a_failure_wait_for_the_sender_until_it_handles_them(repo: Path) -> None:
    refused = submit(repo, id="one")
    failed = submit(repo, id="two", filesAndInterfaces=["two/**"])
    assert taskfs("refuse", refused, "--agent", "builder", "--reason", "no time").code == 0
    assert taskfs("claim", failed, "--agent", "builder").code == 0
    said = taskfs("send", failed, "stuck", "--agent", "builder", "--status", "failed")
    assert said.code == 0
    assert ended() == [refused, failed]
    assert ended("builder") == []  # only the sender is told
    rows = {t["id"]: t for t in taskfs("sent", "--agent", "planner", "--json").json["tasks"]}
    assert (rows[refused]["endedBy"], rows[refused]["reason"]) == ("builder", "no time")
    assert rows[failed]["needsYou"] is True
    # Writing on the task lets it go; so does reading the message that failed it.
    note = taskfs("send", refused, "fine, dropping it", "--agent", "planner")
    assert note.code == 0, note.stderr
    assert ended() == [failed]
    assert taskfs("inbox", "--agent", "planner", "--mark-read").code == 0
    assert ended() == []
    text = taskfs("sent", "--agent", "planner").stdout
    assert text.splitlines()[0].split()[:3] == ["id", "state", "to"]
    assert "you sent no tasks" in taskfs("sent", "--agent", "nobody").stdout


def test_a_quiet_holder_is_told_to_its_sender_after_the_configured_minutes(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    box = taskfs("inbox", "--agent", "planner", "--json").json
    assert box["quiet"] == []  # the default is an hour
    quiet_after(repo, 0.0001)
    box = taskfs("inbox", "--agent", "planner", "--json").json
    assert [(t["id"], t["holder"]) for t in box["quiet"]] == [(task, "builder")]
    assert box["counts"]["quiet"] == 1
    said = taskfs("inbox", "--agent", "planner").stdout
    assert f"quiet   {task} held by builder (working): quiet for" in said
    quiet_after(repo, 0)
    refused = taskfs("sent", "--agent", "planner", "--json")
    assert refused.codes == ["config_invalid"]
