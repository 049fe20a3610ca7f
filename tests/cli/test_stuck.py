"""Held work that is stuck (issue 18): the stale-holder report in nudge, prime and the board,
and `taskfs reassign`, which hands the work on within the lifecycle."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from tests.helpers import configure, git, submit, taskfs


def _stale_after(repo: Path, hours: float) -> None:
    configure(repo, "stale threshold", nudge={"staleHours": hours})


def test_a_quiet_holder_is_reported_in_nudge_prime_and_the_board(
    repo: Path, tmp_path: Path
) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    # Under the default threshold (24 h) a task claimed a moment ago is not stale.
    assert taskfs("nudge", "--agent", "planner", "--json").json["stale"] == []
    assert "stale" not in taskfs("prime", "--agent", "planner").stdout
    _stale_after(repo, 0.000001)
    doc = taskfs("nudge", "--agent", "planner", "--json").json
    assert [(s["id"], s["holder"], s["from"], s["state"]) for s in doc["stale"]] == [
        (task, "builder", "planner", "working")
    ]
    text = taskfs("nudge", "--agent", "planner").stdout
    assert f"{task} held by builder (working)" in text
    prime = taskfs("prime", "--agent", "planner").stdout
    assert f"taskfs reassign {task} --to B" in prime  # the sender learns how to hand it on
    held = taskfs("prime", "--agent", "builder").stdout
    assert f"you hold {task} quiet for" in held
    page = tmp_path / "board.html"
    assert taskfs("board", "--html", str(page)).code == 0
    marker = re.search(r'<span class="marker marker-stale" title="([^"]*)">', page.read_text())
    assert marker, "no stale marker"
    assert marker.group(1).startswith(f"{task} held by builder (working) for ")


def test_a_commit_touching_owned_files_counts_as_activity(repo: Path) -> None:
    from taskfs.api.lifecycle.stale import stale_holders
    from taskfs.store.repository import Repository

    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    later = datetime.now(timezone.utc) + timedelta(hours=30)
    opened = Repository.open(repo)
    assert [s.id for s in stale_holders(opened, now=later, hours=24)] == [task]
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "login.py").write_text("x = 1\n")
    git(repo, "add", "src")
    date = (later - timedelta(hours=2)).isoformat()
    env_date = {"GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": date}
    import os
    import subprocess

    subprocess.run(
        ["git", "commit", "-q", "-m", "work"], cwd=repo, env={**os.environ, **env_date}, check=True
    )
    assert stale_holders(Repository.open(repo), now=later, hours=24) == []


def test_reassign_cancels_and_resubmits_the_same_contract_linked_both_ways(repo: Path) -> None:
    task = submit(repo, id="login-fix")
    assert taskfs("claim", task, "--agent", "builder").code == 0
    result = taskfs(
        "reassign", task, "--to", "helper", "--agent", "planner", "--reason", "no news", "--json"
    )
    assert result.code == 0, result.stdout + result.stderr
    assert result.json["id"] == task
    assert result.json["state"] == "canceled"
    new = result.json["newId"]
    assert new == "login-fix-r1"
    old_doc = taskfs("show", task, "--json").json
    assert old_doc["state"] == "canceled"
    log = taskfs("log", task, "--json").json
    assert log["timeline"][-1]["detail"] == f"reassigned to helper as {new}: no news"
    new_doc = taskfs("show", new, "--json").json
    assert new_doc["state"] == "submitted"
    old_env, new_env = old_doc["envelope"], new_doc["envelope"]
    assert new_env["to"] == "helper"
    assert new_env["x-reassignedFrom"] == task
    assert new_env == {**old_env, "id": new, "to": "helper", "x-reassignedFrom": task}
    # The board links the two cards both ways.
    page = repo.parent / "board.html"
    assert taskfs("board", "--html", str(page)).code == 0
    board = page.read_text()
    link = '<a class="lineage lineage-reassigned" href="#task-{}" data-kind="reassigned">{}</a>'
    assert f"<dt>reassigned to</dt><dd>{link.format(new, new)}</dd>" in board
    assert f"<dt>reassigned from</dt><dd>{link.format(task, task)}</dd>" in board
    # One commit holds both; the new holder can claim the files the old task owned.
    assert git(repo, "show", "--name-only", "--format=", "HEAD").count("\n") == 2
    assert taskfs("claim", new, "--agent", "helper").code == 0
    # And once more: the next id follows.
    again = taskfs("reassign", new, "--to", "third", "--agent", "planner", "--json")
    assert again.json["newId"] == "login-fix-r2"


def test_reassign_is_refused_by_name(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    by_holder = taskfs("reassign", task, "--to", "x", "--agent", "builder", "--json")
    assert (by_holder.code, by_holder.codes) == (1, ["agent_not_allowed"])
    assert "only its sender (planner)" in by_holder.json["errors"][0]["message"]
    assert taskfs("move", task, "canceled", "--agent", "planner").code == 0
    final = taskfs("reassign", task, "--to", "x", "--agent", "planner", "--json")
    assert (final.code, final.codes) == (1, ["transition_not_allowed"])
    missing = taskfs("reassign", task, "--agent", "planner")
    assert missing.code == 2  # --to is required
    assert taskfs("reassign", "nope", "--to", "x", "--agent", "planner").code == 1
    # Keys required: a recipient without a committed key cannot be handed the work.
    other = submit(repo, id="other", filesAndInterfaces=["src/other.py"])
    configure(repo, "keys required", requireSignedMessages=True)
    before = git(repo, "rev-parse", "HEAD")
    unknown = taskfs("reassign", other, "--to", "stranger", "--agent", "planner", "--json")
    assert (unknown.code, unknown.codes) == (1, ["recipient_unknown"])
    assert git(repo, "rev-parse", "HEAD") == before  # nothing written
    assert not (repo / "tasks" / "other-r1").exists()
