"""audit replays the live rule of every transition and names every refusal it gives, whatever
its code (issue 28, item 8): not only the three codes it knew. The claim gate of today refuses a
claim whose dependencies are not completed (`dependencies_unresolved`); a claim committed with
plain git while they were not is named, as the commit that added it held the ledger."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_authority import findings, forge, status_files
from tests.helpers import check, submit, taskfs


def _plan(repo: Path) -> tuple[str, str]:
    first = submit(repo, id="first", filesAndInterfaces=["src/first.py"])
    second = submit(repo, id="second", dependsOn=[first], filesAndInterfaces=["src/second.py"])
    return first, second


def _forged_claim(repo: Path, task: str) -> str:
    """What the live rule refused, written and committed with plain git under the right name."""
    first = status_files(repo, task)[0]
    return forge(
        repo, task, "0002-working-aaaaaaaa.yaml", state="working", by="builder", prev=first
    )


def _complete(repo: Path, task: str) -> None:
    (repo / "src" / "auth").mkdir(parents=True, exist_ok=True)
    (repo / "src" / "auth" / "login.py").write_text("x\n")
    assert taskfs("claim", task, "--agent", "builder").code == 0
    check(task)
    assert taskfs("complete", task, "--agent", "builder").code == 0


def test_a_claim_past_unfinished_dependencies_is_named(repo: Path) -> None:
    _first, second = _plan(repo)
    assert taskfs("claim", second, "--agent", "builder", "--json").codes == [
        "dependencies_unresolved"
    ]
    rel = _forged_claim(repo, second)
    assert findings() == [("dependencies_unresolved", rel)]


def test_a_claim_made_once_the_dependency_was_completed_is_clean(repo: Path) -> None:
    first, second = _plan(repo)
    _complete(repo, first)
    assert taskfs("claim", second, "--agent", "builder").code == 0
    assert findings() == []


def test_a_dependency_completed_after_the_forged_claim_does_not_clear_it(repo: Path) -> None:
    first, second = _plan(repo)
    rel = _forged_claim(repo, second)
    _complete(repo, first)
    # The ledger is consistent today; the claim was not when it was committed.
    assert findings() == [("dependencies_unresolved", rel)]


def test_a_claim_on_a_dependency_archived_completed_is_clean(repo: Path) -> None:
    first, second = _plan(repo)
    _complete(repo, first)
    assert taskfs("archive", "--older-than", "0").code == 0
    assert taskfs("claim", second, "--agent", "builder").code == 0
    assert findings() == []


def test_archiving_the_dependency_does_not_clear_a_forged_claim(repo: Path) -> None:
    first, second = _plan(repo)
    rel = _forged_claim(repo, second)
    _complete(repo, first)
    assert taskfs("archive", "--older-than", "0").code == 0
    # The claim was committed while `first` was submitted, and its files are in history still.
    assert findings() == [("dependencies_unresolved", rel)]


def test_a_completion_without_evidence_on_a_branch_that_lost_a_fork_is_named(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    submitted, claim = status_files(repo, task)
    # A sibling whose nonce sorts first makes the claim's branch lose the fork...
    forge(repo, task, "0002-rejected-00000000.yaml", state="rejected", by="builder", prev=submitted,
          reason="no")  # fmt: skip
    # ...and the completion after the claim, which no evidence backs, sits on the losing branch.
    rel = forge(repo, task, "0003-completed-aaaaaaaa.yaml", state="completed", by="builder",
                prev=claim)  # fmt: skip
    assert ("completion_requires_evidence", rel) in findings()
