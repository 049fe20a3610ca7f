"""A task must name who sent it (the team day's orphan): an envelope without `from`, with no
acting agent to stand for it, made a task from `anonymous` whose questions nobody could answer
and which nobody could cancel. The watcher and `new` refuse it alike, `sender_required`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_watch import envelope_text, report_codes, task_ids
from tests.cli.watcher import FAST
from tests.helpers import git, taskfs, taskfs_process, write_envelope


def test_the_watcher_refuses_a_drop_that_names_no_sender(repo: Path) -> None:
    tasks = repo / "tasks"
    (tasks / "docs.yaml").write_text(envelope_text(1, **{"from": None, "to": "alice"}))
    (tasks / "signed.yaml").write_text(envelope_text(2, id="signed", to="alice"))
    head = git(repo, "rev-parse", "HEAD")
    result = taskfs_process("watch", "--once", *FAST, cwd=repo)
    assert result.code == 0, result.stderr  # refusals included, as the contract says
    assert report_codes(tasks / "docs.yaml") == ["sender_required"]
    assert task_ids(repo) == ["signed"]
    log = git(repo, "log", "--format=%an", f"{head}..HEAD").splitlines()
    assert "anonymous" not in log
    # Adding `from:` is the way forward: the next pass takes it in.
    (tasks / "docs.yaml").write_text(envelope_text(1, **{"from": "planner", "to": "alice"}))
    again = taskfs_process("watch", "--once", *FAST, cwd=repo)
    assert again.code == 0, again.stderr
    assert len(task_ids(repo)) == 2
    assert not (tasks / "docs+refused.yaml").exists()


def test_new_refuses_an_envelope_that_names_no_sender_without_an_agent(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TASKFS_AGENT", raising=False)
    path = write_envelope(repo.parent / "orphan.yaml", **{"from": None})
    refused = taskfs("new", str(path), "--json")
    assert (refused.code, refused.codes) == (1, ["sender_required"])
    assert taskfs("ls", "--json").json["tasks"] == []
    # An acting agent stands for the sender (contract section 12), as before.
    done = taskfs("new", str(path), "--agent", "planner", "--json")
    assert done.code == 0, done.stdout
    assert taskfs("show", done.json["id"], "--json").json["envelope"]["from"] == "planner"
