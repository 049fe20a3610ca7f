"""`taskfs prime`: the start-up text for an agent, short enough for any context."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import submit, taskfs

# A generous reading of "well under 2,000 tokens": English runs near 4 characters and 0.75
# words per token, so these bounds sit near 1,000 tokens whichever way one counts.
MAX_CHARS = 4_000
MAX_WORDS = 700


def test_prime_names_the_agent_and_what_waits_for_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    waiting = submit(repo)
    asked = submit(repo, filesAndInterfaces=["docs/**"], **{"from": "builder", "to": "planner"})
    assert taskfs("claim", asked, "--agent", "planner").code == 0
    question = taskfs(
        "send", asked, "Which tone?", "--agent", "planner", "--status", "needs_input", "--json"
    )
    monkeypatch.setenv("TASKFS_AGENT", "builder")
    result = taskfs("prime")
    assert result.code == 0, result.stderr
    text = result.stdout
    assert "You are agent 'builder'" in text
    assert "builder: 1 to claim, 1 to answer, 0 to review" in text
    assert f"claim {waiting}" in text
    assert f"answer {question.json['msg_id']}" in text
    assert "taskfs send ID --status needs_input" in text
    assert len(text) < MAX_CHARS
    assert len(text.split()) < MAX_WORDS


def test_prime_without_an_agent_says_how_to_name_one(repo: Path) -> None:
    result = taskfs("prime", "--json")
    assert result.code == 0
    assert "TASKFS_AGENT" in result.json["text"]
    assert len(result.json["text"]) < MAX_CHARS


def test_prime_stays_short_with_a_full_inbox(repo: Path) -> None:
    for n in range(20):
        submit(repo, filesAndInterfaces=[f"m{n}/**"], objective="x " * 400)
    text = taskfs("prime", "--agent", "builder").stdout
    assert "builder: 20 to claim" in text
    assert len(text) < MAX_CHARS
    assert len(text.split()) < MAX_WORDS
