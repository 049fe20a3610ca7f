"""The refusal of evidence from an uncommitted tree names only what is still to do (team day,
item 4): once the owned files were committed, `complete` still said "commit calc/arith.py,
tests/test_div.py, then run taskfs check again", naming files HEAD already held."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import git, submit, taskfs

FILES = ("calc/arith.py", "tests/test_div.py")


def dirty_pass(repo: Path) -> str:
    task = submit(
        repo,
        id="div-zero",
        filesAndInterfaces=list(FILES),
        acceptanceCheck={"passFailCommand": "test -f calc/arith.py", "endToEndVerification": "e"},
    )
    assert taskfs("claim", task, "--agent", "builder").code == 0
    for path in FILES:
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(f"# {path}\n")
    checked = taskfs("check", task, "--agent", "builder", "--json")
    assert (checked.code, checked.json["workTree"]) == (0, "dirty"), checked.stdout
    return task


def refusal(task: str) -> str:
    done = taskfs("complete", task, "--agent", "builder", "--json")
    assert (done.code, done.codes) == (1, ["work_uncommitted"]), done.stdout
    return str(done.json["errors"][0]["message"])


def test_after_committing_only_the_check_is_left_to_do(repo: Path) -> None:
    task = dirty_pass(repo)
    assert all(path in refusal(task) for path in FILES)
    git(repo, "add", *FILES)
    git(repo, "commit", "-q", "-m", "the work")
    said = refusal(task)
    assert not any(path in said for path in FILES), said
    assert taskfs("check", task, "--agent", "builder").code == 0
    assert taskfs("complete", task, "--agent", "builder").code == 0


def test_a_file_still_uncommitted_is_the_only_one_named(repo: Path) -> None:
    task = dirty_pass(repo)
    git(repo, "add", FILES[0])
    git(repo, "commit", "-q", "-m", "half the work")
    said = refusal(task)
    assert FILES[1] in said, said
    assert FILES[0] not in said, said
