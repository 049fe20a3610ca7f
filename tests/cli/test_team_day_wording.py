"""Wording the team day found wrong (its log, /tmp/teamday/LOG.md): what a command says must be
what it did, and a value it refuses names the one meant."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import check, submit, taskfs


def test_a_refusal_names_who_made_the_transition_quoted_once(repo: Path) -> None:
    task = submit(repo, acceptanceCheck={"passFailCommand": "true", "endToEndVerification": "-"})
    assert taskfs("claim", task, "--agent", "builder").code == 0
    check(task)
    assert taskfs("complete", task, "--agent", "builder").code == 0
    refused = taskfs("claim", task, "--agent", "builder", "--json")
    assert (refused.code, refused.codes) == (1, ["transition_not_allowed"])
    message = refused.json["errors"][0]["message"]
    # It said "completed since 'builder''s transition": a name quoted, then a quote doubled.
    assert "since builder's transition" in message
    assert "''" not in message
    assert refused.json["errors"][0]["by"] == "builder"
