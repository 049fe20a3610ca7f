"""`intake accept` submits exactly the proposal its requester saw, and a proposal does not change
who the task is for without the requester's own word (issue 35, item 6); empty agent names and
empty requests are refused (item 7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from taskfs.core import yamlio
from tests.helpers import ENVELOPE, git, submit, taskfs

PROPOSED = {k: v for k, v in ENVELOPE.items() if k not in ("from", "to")}


def _propose(repo: Path, task: str, agent: str, name: str, **changes: Any) -> dict[str, Any]:
    path = repo.parent / name
    path.write_text(yamlio.dump({**PROPOSED, **changes}))
    result = taskfs("intake", "propose", task, str(path), "--agent", agent, "--json")
    assert result.code == 0, result.stdout + result.stderr
    return dict(result.json)


def _open(*args: str) -> str:
    result = taskfs("intake", "open", *args, "--json")
    assert result.code == 0, result.stdout + result.stderr
    return str(result.json["id"])


def test_accept_submits_the_proposal_shown_and_refuses_one_that_came_after(repo: Path) -> None:
    task = _open("fix the login bug", "--agent", "alice", "--to", "builder")
    first = _propose(repo, task, "builder", "p1.yaml")
    shown = taskfs("show", task, "--json").json
    assert shown["proposalId"] == first["proposalId"]
    assert shown["proposalDigest"] == first["proposalDigest"]
    inbox = taskfs("inbox", "--agent", "alice", "--json").json
    [asked] = [i for i in inbox["requested"] if i["id"] == task]
    assert (asked["proposalId"], asked["proposalDigest"]) == (
        first["proposalId"],
        first["proposalDigest"],
    )
    # The recipient slips in a wider proposal before the requester answers.
    wider = {
        "filesAndInterfaces": ["src/**"],
        "acceptanceCheck": {"passFailCommand": "true", "endToEndVerification": "none"},
    }
    second = _propose(repo, task, "builder", "p2.yaml", **wider)  # fmt: skip
    head = git(repo, "rev-parse", "HEAD")
    for named in ([], ["--proposal", first["proposalId"]], ["--proposal", first["proposalDigest"]]):
        refused = taskfs("intake", "accept", task, *named, "--agent", "alice", "--json")
        assert (refused.code, refused.codes) == (1, ["proposal_superseded"]), named
        assert refused.json["errors"][0]["proposal"] == second["proposalId"]
        assert git(repo, "rev-parse", "HEAD") == head
    assert taskfs("show", task, "--json").json["state"] == "intake"
    # Naming the one it now read submits exactly that one, and says what was submitted.
    accepted = taskfs(
        "intake", "accept", task, "--proposal", second["proposalDigest"], "--agent", "alice",
        "--json",
    )  # fmt: skip
    assert accepted.code == 0, accepted.stdout
    assert accepted.json["state"] == "submitted"
    assert accepted.json["accepted"] == second["proposalId"]
    assert accepted.json["envelope"]["filesAndInterfaces"] == ["src/**"]
    assert taskfs("show", task, "--json").json["envelope"]["filesAndInterfaces"] == ["src/**"]
    assert taskfs("audit", "--json").json["findings"] == []


def test_a_proposal_does_not_readdress_the_task_without_the_requesters_word(repo: Path) -> None:
    task = _open("somebody fix the login bug", "--agent", "alice")  # to anyone
    proposed = _propose(repo, task, "mallory", "p.yaml", to="mallory")
    head = git(repo, "rev-parse", "HEAD")
    refused = taskfs(
        "intake", "accept", task, "--proposal", proposed["proposalId"], "--agent", "alice",
        "--json",
    )  # fmt: skip
    assert (refused.code, refused.codes) == (1, ["invalid_value"])
    assert refused.json["errors"][0]["field"] == "to"
    assert git(repo, "rev-parse", "HEAD") == head
    said = taskfs(
        "intake", "accept", task, "--proposal", proposed["proposalId"], "--to", "mallory",
        "--agent", "alice", "--json",
    )  # fmt: skip
    assert said.code == 0, said.stdout
    assert taskfs("show", task, "--json").json["envelope"]["to"] == "mallory"


# -- item 7 -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        ["intake", "open", "fix it", "--to", "", "--agent", "alice"],
        ["retry", "ta", "--to", "", "--agent", "planner"],
        ["reassign", "ta", "--to", "", "--agent", "planner"],
        ["archive", "--agent", ""],
        ["claim", "ta", "--agent", ""],
        ["send", "ta", "hello", "--agent", "builder", "--to", ""],
        ["keys", "remove", "--agent", "planner", "--by", ""],
    ],
    ids=lambda line: "-".join(w for w in line if w and not w.startswith("-"))[:40],
)
def test_an_empty_agent_name_is_invalid_agent(repo: Path, line: list[str]) -> None:
    submit(repo, id="ta")
    head = git(repo, "rev-parse", "HEAD")
    result = taskfs(*line, "--json")
    assert (result.code, result.codes) == (1, ["invalid_agent"]), result.stdout
    assert git(repo, "rev-parse", "HEAD") == head


def test_an_empty_request_is_refused(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    for words in ("", "  \n"):
        refused = taskfs("intake", "open", words, "--agent", "alice", "--json")
        assert (refused.code, refused.codes) == (1, ["request_empty"]), refused.stdout
    assert git(repo, "rev-parse", "HEAD") == head
    task = _open("fix the login bug", "--agent", "alice")
    head = git(repo, "rev-parse", "HEAD")
    refused = taskfs("intake", "add", task, "", "--agent", "alice", "--json")
    assert (refused.code, refused.codes) == (1, ["request_empty"])
    assert git(repo, "rev-parse", "HEAD") == head
