"""A writer decides on the ledger as HEAD holds it, without reading every task (issue 19):
the rows it read last, and the tasks whose folders HEAD changed since, read again.

Each test moves HEAD with plain git (a pull, a commit by hand), runs no listing, and then has a
writer decide on a task that HEAD changed: the decision must be HEAD's.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from taskfs.store import index
from taskfs.store.repository import Repository
from tests.helpers import check, git, submit, taskfs


def _clone(repo: Path, where: Path) -> Path:
    git(repo.parent, "clone", "-q", str(repo), str(where))
    git(where, "config", "user.name", "other")
    git(where, "config", "user.email", "other@example.invalid")
    return where


def test_a_dependency_completed_in_another_clone_unblocks_a_claim_after_a_pull(
    repo: Path,
) -> None:
    dep = submit(
        repo,
        id="dep",
        filesAndInterfaces=["src/dep.py"],
        acceptanceCheck={"passFailCommand": "true", "endToEndVerification": "x"},
    )
    submit(repo, id="later", dependsOn=[dep], filesAndInterfaces=["src/later.py"])
    assert taskfs("ls", "--json").code == 0  # the rows are settled against this HEAD
    other = _clone(repo, repo.parent / "other")
    assert taskfs("claim", dep, "--agent", "builder", cwd=other).code == 0
    check(dep, cwd=other)
    assert taskfs("complete", dep, "--agent", "builder", cwd=other).code == 0
    refused = taskfs("claim", "later", "--agent", "builder", "--json")
    assert "dependencies_unresolved" in refused.codes  # before the pull: dep is not done
    git(repo, "pull", "-q", "--ff-only", str(other), "main")
    claimed = taskfs("claim", "later", "--agent", "builder", "--json")
    assert claimed.code == 0, claimed.stdout
    assert index.summaries(Repository.open(repo))[dep].state == "completed"


def test_a_task_removed_by_a_commit_owns_nothing_for_the_next_new(repo: Path) -> None:
    submit(repo, id="first", filesAndInterfaces=["src/x/**"])
    assert taskfs("ls", "--json").code == 0
    refused = taskfs("new", str(_envelope(repo, "second")), "--json")
    assert "ownership_conflict" in refused.codes
    git(repo, "rm", "-q", "-r", "tasks/first")
    git(repo, "commit", "-q", "-m", "drop the first task by hand")
    admitted = taskfs("new", str(_envelope(repo, "second")), "--json")
    assert admitted.code == 0, admitted.stdout
    listed = taskfs("ls", "--json").json
    assert [t["id"] for t in listed["tasks"]] == ["second"]


def test_what_a_writer_stored_agrees_with_a_reading_of_every_task(repo: Path) -> None:
    """After writers that read only what HEAD changed, the cache says what a cache built from
    nothing says, and so do the listings."""
    submit(repo, id="a", filesAndInterfaces=["src/a/**"])
    submit(repo, id="b", filesAndInterfaces=["src/b/**"], dependsOn=["a"])
    assert taskfs("ls", "--json").code == 0
    other = _clone(repo, repo.parent / "other")
    submit_there = _envelope(other, "c", entry="src/a/c.py", depends="a")
    assert taskfs("new", str(submit_there), "--agent", "planner", cwd=other).code == 0
    git(repo, "pull", "-q", "--ff-only", str(other), "main")
    assert taskfs("claim", "a", "--agent", "builder").code == 0  # a writer, after the pull
    store = Repository.open(repo)
    kept = dict(index.summaries(store).items())
    assert kept["c"].overlaps == ("a",)
    assert kept["a"].overlaps == ("c",)
    before = taskfs("ls", "--json").stdout
    shutil.rmtree(repo / ".git" / "taskfs" / "cache")
    assert index.summaries(store) == kept
    assert taskfs("ls", "--json").stdout == before


def _envelope(repo: Path, task_id: str, entry: str = "src/x/**", depends: str = "") -> Path:
    from tests.helpers import write_envelope

    extra = {"dependsOn": [depends]} if depends else {}
    path = repo.parent / f"{repo.name}-{task_id}.yaml"
    return write_envelope(path, id=task_id, filesAndInterfaces=[entry], **extra)
