"""The order `taskfs a2a` streams a task's ledger entries in only ever grows at its end."""

from __future__ import annotations

import time
from pathlib import Path

from taskfs.api.sync import events
from taskfs.store.repository import Repository
from tests.helpers import git, send, submit, taskfs


def ids(repo: Path, task_id: str) -> list[str]:
    return [e.id for e in events.task_events(Repository.open(repo), task_id).events]


def test_entries_merged_in_come_after_what_was_already_streamed(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    git(repo, "branch", "side")
    git(repo, "checkout", "-q", "side")
    aside = send(task, "builder", "planner", "written on a side branch first", status="update")
    time.sleep(1.1)  # the main line's entry is the newer one by its commit's date
    git(repo, "checkout", "-q", "main")
    later = send(task, "builder", "planner", "written on main later", status="update")
    streamed = ids(repo, task)
    assert streamed[-1] == later
    git(repo, "merge", "-q", "--no-edit", "side")
    merged = events.task_events(Repository.open(repo), task)
    assert [e.id for e in merged.after(later)] == [aside]
    assert [e.id for e in merged.events][: len(streamed)] == streamed
    assert [e.kind for e in merged.events] == ["status", "status", "message", "message"]


def test_uncommitted_files_are_not_events(repo: Path) -> None:
    task = submit(repo)
    before = ids(repo, task)
    status = repo / "tasks" / task / "status"
    stray = status / "0002-working-zzzzzzzz.yaml"
    stray.write_text((status / sorted(p.name for p in status.iterdir())[0]).read_text())
    assert ids(repo, task) == before
