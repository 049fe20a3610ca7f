"""Completion means the work is committed (issue 16): evidence records whether the owned files
were what HEAD held when the check ran, and evidence from a dirty tree never completes."""

from __future__ import annotations

from pathlib import Path

from taskfs.core import yamlio
from tests.helpers import git, submit, taskfs


def _task(repo: Path) -> str:
    return submit(
        repo,
        id="login",
        filesAndInterfaces=["src/auth/*.py", "interface:login"],
        acceptanceCheck={
            "passFailCommand": "test -f src/auth/login.py",
            "endToEndVerification": "x",
        },
    )


def _work(repo: Path) -> None:
    (repo / "src" / "auth").mkdir(parents=True, exist_ok=True)
    (repo / "src" / "auth" / "login.py").write_text("def login(p):\n    return bool(p)\n")
    (repo / "notes.txt").write_text("not owned, not committed\n")


def test_check_then_complete_with_the_work_uncommitted_is_refused(repo: Path) -> None:
    task = _task(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    _work(repo)
    checked = taskfs("check", task, "--agent", "builder", "--json")
    assert checked.code == 0, checked.stdout
    evidence = yamlio.load((repo / checked.json["evidence"]).read_bytes())
    assert evidence["workTree"] == "dirty"
    assert evidence["uncommitted"] == {"count": 1, "paths": ["src/auth/login.py"]}

    done = taskfs("complete", task, "--agent", "builder", "--json")
    assert done.code == 1
    assert done.codes == ["work_uncommitted"]
    assert "src/auth/login.py" in done.json["errors"][0]["message"]
    assert taskfs("show", task, "--json").json["state"] == "working"

    # Committing the files is not enough: the evidence says the check ran on a dirty tree.
    git(repo, "add", "src/auth/login.py")
    git(repo, "commit", "-q", "-m", "the work")
    done = taskfs("complete", task, "--agent", "builder", "--json")
    assert done.codes == ["work_uncommitted"]

    checked = taskfs("check", task, "--agent", "builder", "--json")
    evidence = yamlio.load((repo / checked.json["evidence"]).read_bytes())
    assert evidence["workTree"] == "clean"
    assert "uncommitted" not in evidence
    done = taskfs("complete", task, "--agent", "builder", "--json")
    assert done.code == 0
    assert done.json["state"] == "completed"
    audit = taskfs("audit", "--json")
    assert "work_uncommitted" not in [f["code"] for f in audit.json["findings"]]


def test_a_fresh_check_is_clean(repo: Path) -> None:
    task = _task(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    _work(repo)
    git(repo, "add", "src/auth/login.py")
    git(repo, "commit", "-q", "-m", "the work")
    (repo / "src" / "auth" / "login.py").write_text("edited after the commit\n")
    checked = taskfs("check", task, "--fresh", "--agent", "builder", "--json")
    assert checked.code == 0
    evidence = yamlio.load((repo / checked.json["evidence"]).read_bytes())
    assert evidence["workTree"] == "clean"  # a fresh checkout of HEAD holds only HEAD


def test_audit_and_review_name_a_completion_on_dirty_evidence(repo: Path) -> None:
    task = _task(repo)
    base = git(repo, "rev-parse", "HEAD")
    assert taskfs("claim", task, "--agent", "builder").code == 0
    _work(repo)
    checked = taskfs("check", task, "--agent", "builder", "--json")
    rel = checked.json["evidence"]
    # A completed status written and committed by hand, resting on the dirty evidence.
    status = repo / "tasks" / task / "status"
    working = sorted(status.iterdir())[-1]
    document = yamlio.load(working.read_bytes())
    document.update(
        state="completed", prev=working.name, evidence=rel.rsplit("/", 1)[-1], by="builder"
    )
    (status / "0003-completed-aaaaaaaa.yaml").write_text(yamlio.dump(document))
    git(repo, "add", "tasks")
    git(repo, "commit", "-q", "-m", "completed by hand")

    audit = taskfs("audit", "--json")
    found = [f for f in audit.json["findings"] if f["code"] == "work_uncommitted"]
    assert [f["path"] for f in found] == [f"tasks/{task}/status/0003-completed-aaaaaaaa.yaml"]
    review = taskfs("review", f"{base}..HEAD")
    assert "work_uncommitted" in review.stdout
    assert "src/auth/login.py" in review.stdout
