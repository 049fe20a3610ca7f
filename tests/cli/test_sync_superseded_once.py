"""`sync` reports a superseded transition once, where the merge that superseded it happened
(team day, item 3): a clone that later receives the fork already settled is not told again, nor
is anyone when the task has reached the lost transition's state anyway."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_sync import clones, fixed_nonces, state_of, sync
from tests.helpers import taskfs
from tests.remotes import clone, make_remote, new_task


def lost(result: dict[str, object]) -> list[tuple[str, str]]:
    return [(row["state"], row["by"]) for row in result["superseded"]]  # type: ignore[attr-defined,index]


def test_a_superseded_cancel_is_reported_once_and_not_once_the_task_is_canceled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = make_remote(tmp_path)
    planner, bob = clones(remote, "planner", "bob")
    task = new_task(planner, to="bob", **{"from": "planner"})
    sync(planner)
    sync(bob)
    fixed_nonces(monkeypatch, {planner: "mmmmmmmm", bob: "00000000"})
    # Offline, the planner cancels while bob claims; bob's claim wins the fork.
    assert (
        taskfs("move", task, "canceled", "--agent", "planner", "--reason", "x", cwd=planner).code
        == 0
    )
    assert taskfs("claim", task, "--agent", "bob", cwd=bob).code == 0
    sync(bob)
    # The merge that supersedes the cancel happens in the planner's clone: told there, once.
    assert lost(sync(planner)) == [("canceled", "planner")]
    assert state_of(planner, task) == ("working", "bob")
    # Bob's clone receives the fork settled already: nothing new to tell.
    assert lost(sync(bob)) == []
    assert taskfs("move", task, "input_required", "--agent", "bob", cwd=bob).code == 0
    sync(bob)
    assert lost(sync(planner)) == []
    # The planner cancels again, which ends the task; nobody is told of the old cancel again.
    moved = taskfs("move", task, "canceled", "--agent", "planner", "--reason", "y", cwd=planner)
    assert moved.code == 0, moved.stdout + moved.stderr
    assert lost(sync(planner)) == []
    assert lost(sync(bob)) == []
    # A third clone made now gets the whole history at once: no news either.
    third = clone(str(remote), tmp_path / "third")
    assert lost(sync(third)) == []
    assert "superseded" not in taskfs("sync", cwd=third).stdout


def test_a_superseded_cancel_of_a_task_canceled_anyway_is_not_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = make_remote(tmp_path)
    planner, bob = clones(remote, "planner", "bob")
    task = new_task(planner, to="bob", **{"from": "planner"})
    sync(planner)
    sync(bob)
    fixed_nonces(monkeypatch, {planner: "mmmmmmmm", bob: "00000000"})
    assert (
        taskfs("move", task, "canceled", "--agent", "planner", "--reason", "x", cwd=planner).code
        == 0
    )
    # Bob cancels too (he will not do it): the task is canceled whichever cancel wins.
    assert taskfs("move", task, "canceled", "--agent", "bob", "--reason", "no", cwd=bob).code == 0
    sync(bob)
    assert lost(sync(planner)) == []
    assert state_of(planner, task)[0] == "canceled"
