"""Sync under contention: a push the remote refuses because its ref is locked by another push
(`[remote rejected] (failed to update ref)`) or because the remote moved is tried again, with
jittered back-off, until `syncTimeoutSeconds` has passed; many agents on one bare remote claim,
check, complete and sync with no sync giving up and nothing claimed or completed twice."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.cli.test_sync import clones, sync
from tests.helpers import configure, git, taskfs
from tests.many_clones import run_agents, settle
from tests.remotes import make_remote, new_task


@contextmanager
def ref_locked(remote: Path, release_after: float | None) -> Iterator[Path]:
    """The remote's `main` locked as a concurrent push holds it (`refs/heads/main.lock`),
    released after `release_after` seconds (never, when None) or at the end."""
    lock = remote / "refs" / "heads" / "main.lock"
    lock.write_text("")
    timer = threading.Timer(release_after or 0, lambda: lock.unlink(missing_ok=True))
    if release_after is not None:
        timer.start()
    try:
        yield lock
    finally:
        timer.cancel()
        lock.unlink(missing_ok=True)


def test_a_push_refused_while_another_push_holds_the_ref_lock_is_retried(tmp_path: Path) -> None:
    remote = make_remote(tmp_path)
    [a] = clones(remote, "a")
    new_task(a)
    with ref_locked(remote, release_after=1.5):
        result = sync(a)
    assert result["pushed"] == git(a, "rev-parse", "HEAD") == git(remote, "rev-parse", "main")
    assert int(str(result["attempts"])) > 1


def test_claim_sync_waits_out_a_locked_ref_too(tmp_path: Path) -> None:
    remote = make_remote(tmp_path)
    a, b = clones(remote, "a", "b")
    task = new_task(a, to=None)
    sync(a)
    sync(b)
    with ref_locked(remote, release_after=1.5):
        claimed = taskfs("claim", task, "--sync", "--agent", "builder", "--json", cwd=b)
    assert claimed.code == 0, claimed.stdout
    assert claimed.json["attempts"] > 1
    assert git(remote, "rev-parse", "main") == git(b, "rev-parse", "HEAD")


def test_a_sync_that_loses_several_races_publishes_one_merge_not_one_per_round(
    tmp_path: Path,
) -> None:
    """Each lost round merges this clone's work with the remote's new tip afresh: what is
    pushed at last is one merge, and each round costs what the first did."""
    remote = make_remote(tmp_path)
    a, b = clones(remote, "a", "b")
    for n in (1, 2, 3):
        new_task(b, filesAndInterfaces=[f"b/{n}/**"])
        git(b, "push", "-q", "origin", f"HEAD:refs/heads/p{n}")
    counter = tmp_path / "pushes"
    hook = remote / "hooks" / "pre-receive"
    # The first three pushes find main moved under them, each time a commit further.
    hook.write_text(
        "#!/bin/sh\n"
        f"n=$(cat {counter} 2>/dev/null || echo 0); n=$((n + 1)); echo $n > {counter}\n"
        'if [ "$n" -le 3 ]; then '
        "env -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES "
        'git update-ref refs/heads/main "$(git rev-parse refs/heads/p$n)"; fi\n'
    )
    hook.chmod(0o755)
    mine = new_task(a, filesAndInterfaces=["a/**"])
    ours = git(a, "rev-parse", "HEAD")
    result = sync(a)
    assert result["attempts"] == 4
    head = git(remote, "rev-parse", "main")
    assert head == git(a, "rev-parse", "HEAD")
    assert git(a, "rev-list", "--merges", f"{ours}..{head}").split() == [head]
    assert git(a, "rev-parse", f"{head}^1", f"{head}^2").split() == [
        ours,
        git(remote, "rev-parse", "p3"),
    ]
    assert len(taskfs("ls", "--json", cwd=a).json["tasks"]) == 4
    assert taskfs("show", mine, "--json", cwd=a).code == 0
    assert taskfs("audit", "--json", cwd=a).json["ok"] is True


def test_a_lock_held_past_the_bound_is_named_and_nothing_is_lost(tmp_path: Path) -> None:
    remote = make_remote(tmp_path)
    [a] = clones(remote, "a")
    configure(a, "a short bound", syncTimeoutSeconds=1)
    sync(a)
    task = new_task(a)
    head = git(a, "rev-parse", "HEAD")
    with ref_locked(remote, release_after=None):
        refused = taskfs("sync", "--json", cwd=a)
    assert refused.codes == ["sync_push_rejected"]
    [error] = refused.json["errors"]
    # Given up for the time bound (on a loaded machine one round may take all of it).
    assert (error["gave_up"], error["attempts"] >= 1) == (True, True)
    assert "failed to update ref" in error["reason"]
    assert "syncTimeoutSeconds" in error["reason"]
    assert git(a, "rev-parse", "HEAD") == head  # merged here, kept, pushed by the next sync
    assert sync(a)["pushed"] == head == git(remote, "rev-parse", "main")
    assert taskfs("show", task, "--json", cwd=a).code == 0


def test_a_lock_left_by_a_crashed_push_is_named_long_before_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A branch that stays locked while nothing lands is no push in flight: sync says so
    after STALE_LOCK_S (shortened here), not after syncTimeoutSeconds."""
    monkeypatch.setattr("taskfs.api.sync.remote.STALE_LOCK_S", 1)
    remote = make_remote(tmp_path)
    [a] = clones(remote, "a")
    configure(a, "a long bound", syncTimeoutSeconds=120)
    sync(a)
    new_task(a)
    with ref_locked(remote, release_after=None):
        refused = taskfs("sync", "--json", cwd=a)
    assert refused.codes == ["sync_push_rejected"]
    [error] = refused.json["errors"]
    assert error["gave_up"] is True
    assert "refs/heads/main.lock" in error["reason"]


def test_many_agents_on_one_remote_claim_check_complete_and_sync_without_giving_up(
    tmp_path: Path,
) -> None:
    """The Done-when of issue 37 (16 agents, 5 rounds) at a size a test affords; the full size
    runs in bench/many_clones.py."""
    agents, rounds = 4, 2
    remote = make_remote(tmp_path)
    report = run_agents(tmp_path, str(remote), agents=agents, rounds=rounds)
    assert report.sync_failures == [], report.sync_failures
    assert report.errors == [], report.errors
    completed = [task for agent in report.agents for task in agent.completed]
    assert len(completed) == agents * rounds
    assert len(set(completed)) == len(completed)  # no task completed twice
    claimed = [task for agent in report.agents for task in agent.claimed]
    assert sorted(claimed) == sorted(completed)  # every claim won was completed, once
    final = settle(report.clones)
    assert final.heads == {git(remote, "rev-parse", "main")}  # every clone identical
    assert len(set(final.listings)) == 1
    for task, chain in final.chains.items():
        assert [state for state, _by in chain] == ["submitted", "working", "completed"], task
        assert chain[1][1] == chain[2][1]  # claimed and completed by the same agent
    assert final.audits_clean
