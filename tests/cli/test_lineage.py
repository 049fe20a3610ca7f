"""Retries and hand-overs keep the plan (issue 29): `taskfs retry`, and dependencies that
follow the lineage of reassigned and retried tasks, in `ready`, `claim` and ownership alike;
and a claim lost to another clone, told at the top of the loser's `prime`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_sync import clones, fixed_nonces, sync
from tests.helpers import git, submit, taskfs, write_envelope
from tests.remotes import make_remote, new_task


def ready_ids(agent: str | None = None) -> list[str]:
    args = ["ready", "--json"] + (["--agent", agent] if agent else [])
    return sorted(t["id"] for t in taskfs(*args).json["tasks"])


def fail_task(task: str, agent: str = "builder") -> None:
    assert taskfs("claim", task, "--agent", agent).code == 0
    moved = taskfs("move", task, "failed", "--agent", agent, "--reason", "too hard")
    assert moved.code == 0, moved.stderr


def complete(repo: Path, task: str, agent: str = "builder") -> None:
    """The default envelope's check passes once src/auth/login.py is committed."""
    if not (repo / "src" / "auth" / "login.py").exists():
        (repo / "src" / "auth").mkdir(parents=True)
        (repo / "src" / "auth" / "login.py").write_text("ok = True\n")
        git(repo, "add", "src")
        git(repo, "commit", "-q", "-m", "login")
    if taskfs("show", task, "--json").json["state"] == "submitted":
        assert taskfs("claim", task, "--agent", agent).code == 0
    assert taskfs("check", task, "--agent", agent).code == 0
    done = taskfs("complete", task, "--agent", agent, "--json")
    assert done.code == 0, done.stdout + done.stderr


def test_retry_submits_the_contract_again_once_and_only_for_its_sender(repo: Path) -> None:
    task = submit(repo, id="login")
    assert taskfs("retry", task, "--agent", "planner", "--json").codes == [
        "transition_not_allowed"  # open work is handed on with reassign, not retried
    ]
    fail_task(task)
    assert taskfs("retry", task, "--agent", "builder", "--json").codes == ["agent_not_allowed"]
    retried = taskfs("retry", task, "--agent", "planner", "--json")
    assert retried.code == 0, retried.stderr
    assert retried.json == {
        **retried.json,
        "id": "login",
        "newId": "login-r1",
        "to": "builder",
        "newState": "submitted",
    }
    shown = taskfs("show", "login-r1", "--json").json
    assert shown["envelope"]["x-retriedFrom"] == "login"
    assert shown["envelope"]["to"] == "builder"
    assert taskfs("show", "login", "--json").json["state"] == "failed"
    again = taskfs("retry", task, "--agent", "planner", "--json")
    assert again.codes == ["transition_not_allowed"]
    assert "login-r1" in again.json["errors"][0]["message"]
    # The successor may fail and be retried in turn, to someone else, as login-r2.
    fail_task("login-r1")
    to_helper = taskfs("retry", "login-r1", "--to", "helper", "--agent", "planner", "--json")
    assert (to_helper.json["newId"], to_helper.json["to"]) == ("login-r2", "helper")
    second = taskfs("show", "login-r2", "--json").json["envelope"]
    assert second["x-retriedFrom"] == "login-r1"


def test_a_dependency_is_satisfied_down_the_line_and_claim_names_the_successor(
    repo: Path,
) -> None:
    first = submit(repo, id="login")
    after = submit(repo, id="docs", dependsOn=[first], filesAndInterfaces=["docs/**"])
    fail_task(first)
    refused = taskfs("claim", after, "--agent", "builder", "--json")
    assert refused.codes == ["dependencies_unresolved"]
    taskfs("retry", first, "--agent", "planner")
    fail_task("login-r1")
    taskfs("retry", "login-r1", "--agent", "planner")
    refused = taskfs("claim", after, "--agent", "builder", "--json")
    assert refused.codes == ["dependencies_unresolved"]
    assert "login (failed; now login-r2: submitted)" in refused.json["errors"][0]["message"]
    assert "docs" not in ready_ids("builder")
    complete(repo, "login-r2")
    assert "docs" in ready_ids("builder")
    assert "docs" in ready_ids()
    assert taskfs("claim", after, "--agent", "builder").code == 0


def test_a_link_written_by_someone_else_satisfies_nothing(repo: Path) -> None:
    """`x-` keys are free for anyone: a task claiming to follow another counts only with the
    same sender and acceptance command, after the other ended without completing."""
    first = submit(repo, id="login")
    after = submit(repo, id="docs", dependsOn=[first], filesAndInterfaces=["docs/**"])
    fail_task(first)
    forged = submit(
        repo,
        id="forged",
        **{"from": "mallory", "x-retriedFrom": first, "filesAndInterfaces": ["other/**"]},
    )
    other_check = submit(
        repo,
        id="easier",
        acceptanceCheck={"passFailCommand": "true", "endToEndVerification": "nothing at all"},
        filesAndInterfaces=["more/**"],
        **{"x-retriedFrom": first},
    )
    complete(repo, forged)
    complete(repo, other_check)
    assert "docs" not in ready_ids()
    assert taskfs("claim", after, "--agent", "builder", "--json").codes == [
        "dependencies_unresolved"
    ]


def test_a_task_ordered_after_one_is_ordered_after_its_successor(repo: Path) -> None:
    """Two open tasks may own the same files only when one depends on the other: a follow-up
    that owns what the task it depends on owns stays allowed beside the successor."""
    first = submit(repo, id="login")
    follow = submit(repo, id="login-tests", dependsOn=[first])  # the same files, ordered after
    assert taskfs("claim", first, "--agent", "builder").code == 0
    handed = taskfs("reassign", first, "--to", "helper", "--agent", "planner", "--json")
    assert handed.code == 0, handed.stdout + handed.stderr
    complete(repo, "login-r1", agent="helper")
    assert taskfs("claim", follow, "--agent", "builder").code == 0


def test_new_and_lint_warn_of_dependencies_that_will_never_complete(
    repo: Path, tmp_path: Path
) -> None:
    first = submit(repo, id="login")
    fail_task(first)
    path = tmp_path / "next.yaml"
    write_envelope(path, id="next", dependsOn=[first, "nowhere"], filesAndInterfaces=["n/**"])
    made = taskfs("new", str(path), "--json")
    assert made.code == 0
    codes = [(w["code"], w["dependency"]) for w in made.json["warnings"]]
    assert codes == [("dependency_final", "login"), ("dependency_unknown", "nowhere")]
    text = taskfs("lint", "next")
    assert "warning[dependency_final]" in text.stdout
    assert "taskfs retry login" in text.stdout
    assert "2 warnings" in text.stdout


def test_ready_with_nothing_to_claim_says_what_waits_for_what(repo: Path) -> None:
    assert "no submitted task is offered to you" in taskfs("ready", "--agent", "builder").stdout
    first = submit(repo, id="login")
    submit(repo, id="docs", dependsOn=[first, "later"], filesAndInterfaces=["docs/**"])
    assert taskfs("claim", first, "--agent", "builder").code == 0
    said = taskfs("ready", "--agent", "builder").stdout
    assert "nothing to claim: 1 task is blocked" in said
    assert "docs waits for login (working), later (does not exist yet)" in said
    assert taskfs("ready", "--agent", "builder", "--json").json["tasks"] == []


def test_a_lost_claim_is_at_the_top_of_the_losers_prime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = make_remote(tmp_path)
    a, b = clones(remote, "a", "b")
    task = new_task(a, to=None)
    sync(a)
    sync(b)
    fixed_nonces(monkeypatch, {a: "00000000", b: "zzzzzzzz"})
    assert taskfs("claim", task, "--agent", "alice", cwd=a).code == 0
    assert taskfs("claim", task, "--agent", "bob", cwd=b).code == 0
    sync(a)
    sync(b)
    prime = taskfs("prime", "--agent", "bob", cwd=b).stdout
    resume = prime.split("Resume first, the tasks you hold:", 1)[1]
    assert resume.lstrip().startswith(f"- STOP {task}: your claim lost to alice's"), prime
    assert "STOP" not in taskfs("prime", "--agent", "alice", cwd=b).stdout
