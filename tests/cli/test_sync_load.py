"""Sync under load: clones racing `claim --sync` over a git daemon, and many offline changes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.cli.test_sync import clones, state_of, sync
from tests.helpers import git, taskfs
from tests.remotes import clone, git_daemon, make_remote, new_task, offline_work, race_claims

RACE_TRIALS = 10  # bench/sync_race.py runs 100


def test_two_clones_racing_claim_sync_over_git_daemon_have_one_winner(tmp_path: Path) -> None:
    remote = make_remote(tmp_path)
    with git_daemon(tmp_path) as url:
        planner, one, two = (clone(f"{url}/remote.git", tmp_path / n) for n in ("p", "1", "2"))
        tasks = [
            new_task(planner, to=None, filesAndInterfaces=[f"race/{trial}.py"])
            for trial in range(RACE_TRIALS)
        ]
        for where in (planner, one, two):
            sync(where)
        won = {}
        for task in tasks:
            winners, errors = race_claims(task, {"one": one, "two": two})
            assert len(winners) == 1, errors
            assert [e["code"] for e in errors] == ["transition_not_allowed"]
            assert errors[0]["by"] == winners[0]
            won[task] = winners[0]
        for where in (one, two, one):
            sync(where)
    assert git(remote, "rev-parse", "main") == git(one, "rev-parse", "HEAD")
    assert git(two, "rev-parse", "HEAD") == git(one, "rev-parse", "HEAD")
    for task, winner in won.items():
        assert state_of(one, task) == state_of(two, task) == ("working", winner)
        assert len(list((one / "tasks" / task / "status").iterdir())) == 2
    assert taskfs("audit", "--json", cwd=one).json["ok"] is True


# -- many tasks and transitions on both sides ------------------------------------------

# The full size (200 tasks and 1,000 transitions a clone) runs in bench/sync_scale.py;
# here the same scenario at a tenth of it keeps the file fast.
TASKS, PER_TASK = 20, 5


def test_two_clones_working_offline_end_with_the_same_ledger(tmp_path: Path) -> None:
    a, b = clones(make_remote(tmp_path), "a", "b")
    mine = offline_work(a, "alice", TASKS, PER_TASK)
    theirs = offline_work(b, "bob", TASKS, PER_TASK)
    sync(a)
    git(b, "fetch", "-q")
    merge = subprocess.run(
        ["git", "merge", "--no-commit", "--no-ff", "origin/main"],
        cwd=b,
        capture_output=True,
        text=True,
        check=False,
    )
    assert merge.returncode == 0, merge.stdout + merge.stderr
    git(b, "merge", "--abort")
    assert sync(b)["integration"] == "merge"
    sync(a)
    listings = [
        sorted((t["id"], t["state"]) for t in taskfs("ls", "--json", cwd=where).json["tasks"])
        for where in (a, b)
    ]
    assert listings[0] == listings[1]
    assert sorted(i for i, _ in listings[0]) == sorted(mine + theirs)
    final = "working" if PER_TASK % 2 == 1 else "input_required"
    assert {state for _, state in listings[0]} == {final}
    assert git(a, "rev-parse", "HEAD") == git(b, "rev-parse", "HEAD")
    status_files = list((a / "tasks").glob("*/status/*.yaml"))
    assert len(status_files) == 2 * TASKS * (PER_TASK + 1)
    assert taskfs("audit", "--json", cwd=a).json["ok"] is True
