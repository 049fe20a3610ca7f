"""`lint RANGE` lints every contract the range added, as `review` does (issue 38, item 6).

On a branch, `lint` looked at open contracts only: a contract completed on the branch whose
check could not fail passed `lint` while `review main..HEAD` listed its warnings."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import check, git, submit, taskfs


def branch_with_a_weak_completed_contract(repo: Path) -> str:
    git(repo, "checkout", "-q", "-b", "feature")
    task = submit(
        repo,
        objective="Make it work.",
        acceptanceCheck={"passFailCommand": "true", "endToEndVerification": "look"},
    )
    assert taskfs("claim", task, "--agent", "builder").code == 0
    check(task)
    assert taskfs("complete", task, "--agent", "builder").code == 0
    return task


def codes(result: object) -> list[tuple[str, str]]:
    doc = result.json  # type: ignore[attr-defined]
    return sorted((w["code"], w["subject"]) for w in doc["warnings"])


def test_lint_of_a_range_names_what_review_names(repo: Path) -> None:
    task = branch_with_a_weak_completed_contract(repo)
    assert taskfs("lint", "--json").json["warnings"] == []  # nothing open: nothing to say
    reviewed = codes(taskfs("review", "main..HEAD", "--json"))
    assert ("check_cannot_fail", task) in reviewed
    linted = taskfs("lint", "main..HEAD", "--json")
    assert linted.code == 0
    assert codes(linted) == reviewed
    assert linted.json["checked"] == 1
    strict = taskfs("lint", "main..HEAD", "--strict", "--json")
    assert strict.code == 1  # what CI gates on
    # A range that adds no contract checks none; a range git does not know is refused.
    git(repo, "checkout", "-q", "main")
    assert taskfs("lint", "HEAD..HEAD", "--json").json["checked"] == 0
    assert taskfs("lint", "nope..HEAD", "--json").codes == ["range_invalid"]


def test_the_ci_example_lints_the_pull_requests_contracts() -> None:
    workflow = Path(__file__).resolve().parents[2] / "examples" / "github-actions" / "taskfs.yml"
    assert 'taskfs lint --strict "origin/$BASE_REF..HEAD"' in workflow.read_text()
