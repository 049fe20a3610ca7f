"""One view of a task (issue 36, item 6): `show`, `ls`, `ready` and the decisions read the same
state, the one HEAD holds, and a ledger file no commit holds is named as such wherever the task
is shown, instead of passing for the task's state."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import git, submit, taskfs


def _uncommitted_claim(repo: Path) -> Path:
    """A task whose folder holds a claim no commit holds (the claim's commit undone with
    `git reset`, its status file left in the working tree, as a hand edit or an interrupted
    sync leaves one)."""
    submit(repo, id="task", filesAndInterfaces=["src/task/**"])
    assert taskfs("claim", "task", "--agent", "builder").code == 0
    claim = max((repo / "tasks" / "task" / "status").iterdir())
    git(repo, "reset", "-q", "HEAD~1")
    assert claim.is_file()
    assert git(repo, "status", "--porcelain", "--untracked-files=all").strip().endswith(claim.name)
    return claim


def test_show_ls_ready_and_claim_read_the_same_state(repo: Path) -> None:
    claim = _uncommitted_claim(repo)
    rel = claim.relative_to(repo).as_posix()
    listed = {t["id"]: t["state"] for t in taskfs("ls", "--json").json["tasks"]}
    assert listed == {"task": "submitted"}
    shown = taskfs("show", "task", "--json")
    assert shown.code == 0, shown.stdout
    assert shown.json["state"] == "submitted"
    assert shown.json["holder"] is None
    # The uncommitted file is named, by code, where the task is shown.
    named = [p for p in shown.json["problems"] if p["code"] == "ledger_file_uncommitted"]
    assert [p["path"] for p in named] == [rel]
    text = taskfs("show", "task")
    assert text.stdout.startswith("# task: submitted")
    assert "ledger_file_uncommitted" in text.stdout
    assert rel in text.stdout
    # ready goes by the same state, and claim refuses to build on the loose file.
    assert [t["state"] for t in taskfs("ready", "--json").json["tasks"]] == ["submitted"]
    assert taskfs("claim", "task", "--agent", "builder", "--json").codes == [
        "ledger_file_uncommitted"
    ]


def test_the_stored_show_answer_is_not_kept_past_a_change_of_head(repo: Path) -> None:
    """`show` answered once (and stored), then HEAD moves back under the same files: the next
    `show` goes by the new HEAD, as `ls` does."""
    submit(repo, id="task", filesAndInterfaces=["src/task/**"])
    assert taskfs("claim", "task", "--agent", "builder").code == 0
    assert taskfs("show", "task", "--json").json["state"] == "working"
    assert taskfs("show", "task", "--json").json["state"] == "working"  # the stored answer
    git(repo, "reset", "-q", "--soft", "HEAD~1")  # the files stay; no commit holds the claim
    shown = taskfs("show", "task", "--json").json
    assert shown["state"] == "submitted"
    assert [p["code"] for p in shown["problems"]] == ["ledger_file_uncommitted"]
    assert {t["id"]: t["state"] for t in taskfs("ls", "--json").json["tasks"]} == {
        "task": "submitted"
    }


def test_a_committed_task_shows_no_problem(repo: Path) -> None:
    submit(repo, id="task", filesAndInterfaces=["src/task/**"])
    assert taskfs("claim", "task", "--agent", "builder").code == 0
    shown = taskfs("show", "task", "--json").json
    assert (shown["state"], shown["problems"]) == ("working", [])
