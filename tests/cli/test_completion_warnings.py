"""What a check and a completion say beside their answer (the team day's frictions): warnings,
on stderr and in the document's `warnings`, never refusals.

- An amendment waiting for the holder's answer: a check names it and how to accept or decline
  it (`amendment_pending`); a completion says it lapsed (`amendment_lapsed`).
- A completion whose task owns files that no commit since the claim touched
  (`owned_files_untouched`).
- A completion repeated by the agent that made it, the same way, is no error: it says so.
"""

from __future__ import annotations

from pathlib import Path

from taskfs.core import yamlio
from tests.helpers import ENVELOPE, git, submit, taskfs

# The default envelope's check: it passes once src/auth/login.py exists.
PASSES = ENVELOPE["acceptanceCheck"]


def _work(repo: Path, text: str = "def login(p):\n    return bool(p)\n") -> None:
    """builder's work on the owned file, committed."""
    path = repo / "src" / "auth" / "login.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "the work")


def _codes(doc: dict[str, object]) -> list[str]:
    warnings = doc["warnings"]
    assert isinstance(warnings, list)
    return [w["code"] for w in warnings]


def _amended(repo: Path, task: str) -> str:
    """planner amends the claimed task (its boundaries): pending until builder answers."""
    path = repo.parent / "amended.yaml"
    path.write_text(yamlio.dump({**ENVELOPE, "boundaries": "Do not touch the schema, nor docs."}))
    done = taskfs("amend", task, str(path), "--agent", "planner", "--json")
    assert (done.code, done.json["inForce"]) == (0, False), done.stdout
    return str(done.json["file"]).rsplit("/", 1)[-1]


def test_a_check_names_the_amendment_waiting_and_a_completion_says_it_lapsed(
    repo: Path,
) -> None:
    task = submit(repo, acceptanceCheck=PASSES)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    amendment = _amended(repo, task)
    _work(repo)
    checked = taskfs("check", task, "--agent", "builder", "--json")
    assert (checked.code, checked.json["verdict"]) == (0, "pass"), checked.stdout
    assert _codes(checked.json) == ["amendment_pending"]
    warning = checked.json["warnings"][0]
    assert (warning["file"], warning["by"], warning["holder"]) == (amendment, "planner", "builder")
    assert warning["changed"] == ["boundaries"]
    assert "warning[amendment_pending]" in taskfs("check", task, "--agent", "builder").stderr
    completed = taskfs("complete", task, "--agent", "builder", "--json")
    assert (completed.code, completed.json["state"]) == (0, "completed"), completed.stdout
    assert _codes(completed.json) == ["amendment_lapsed"]
    assert "warning[amendment_lapsed]" in completed.stderr
    statuses = [a["status"] for a in taskfs("show", task, "--json").json["amendments"]]
    assert statuses == ["lapsed"]


def test_an_accepted_amendment_is_not_warned_of(repo: Path) -> None:
    task = submit(repo, acceptanceCheck=PASSES)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    _amended(repo, task)
    assert taskfs("amend", task, "--accept", "--agent", "builder").code == 0
    _work(repo)
    checked = taskfs("check", task, "--agent", "builder", "--json")
    assert (checked.code, _codes(checked.json)) == (0, [])
    completed = taskfs("complete", task, "--agent", "builder", "--json")
    assert (completed.code, _codes(completed.json)) == (0, [])
    assert "warning[" not in completed.stderr


def test_a_completion_with_no_work_since_the_claim_is_warned_of_not_refused(repo: Path) -> None:
    _work(repo)  # the file exists before anyone claims the task: its check passes at once
    task = submit(repo, acceptanceCheck=PASSES)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    assert taskfs("check", task, "--agent", "builder", "--json").json["verdict"] == "pass"
    completed = taskfs("complete", task, "--agent", "builder", "--json")
    assert (completed.code, completed.json["state"]) == (0, "completed"), completed.stdout
    assert _codes(completed.json) == ["owned_files_untouched"]
    warning = completed.json["warnings"][0]
    assert (warning["id"], warning["holder"]) == (task, "builder")
    assert warning["owned"] == ENVELOPE["filesAndInterfaces"]
    assert "warning[owned_files_untouched]" in completed.stderr
    # `move ID completed` is a completion too, and says the same.
    other = submit(repo, acceptanceCheck=PASSES, filesAndInterfaces=["src/auth/*.py"])
    assert taskfs("claim", other, "--agent", "builder").code == 0
    assert taskfs("check", other, "--agent", "builder").code == 0
    moved = taskfs("move", other, "completed", "--agent", "builder", "--json")
    assert (moved.code, _codes(moved.json)) == (0, ["owned_files_untouched"])


def test_work_committed_after_the_claim_or_an_interface_only_task_is_not_warned_of(
    repo: Path,
) -> None:
    task = submit(repo, acceptanceCheck=PASSES)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    _work(repo)
    assert taskfs("check", task, "--agent", "builder").code == 0
    done = taskfs("complete", task, "--agent", "builder", "--json")
    assert (done.code, _codes(done.json)) == (0, [])
    check = {"passFailCommand": "true", "endToEndVerification": "nothing to see"}
    named = submit(repo, acceptanceCheck=check, filesAndInterfaces=["interface:login-api"])
    assert taskfs("claim", named, "--agent", "builder").code == 0
    assert taskfs("check", named, "--agent", "builder").code == 0
    done = taskfs("complete", named, "--agent", "builder", "--json")
    assert (done.code, _codes(done.json)) == (0, [])


def test_work_is_found_by_the_whole_glob_not_by_its_literal_folder_alone(repo: Path) -> None:
    """Whether a commit touched an owned file is asked of the folder the entry's literal part
    names first (git cannot prune a wildcard's walk): a file under that folder the glob does
    not own is no work on the task, a file it owns is."""
    check = {"passFailCommand": "true", "endToEndVerification": "nothing to see"}
    task = submit(repo, acceptanceCheck=check, filesAndInterfaces=["src/**/login.py"])
    assert taskfs("claim", task, "--agent", "builder").code == 0
    notes = repo / "src" / "auth" / "notes.txt"  # below src/, not owned
    notes.parent.mkdir(parents=True)
    notes.write_text("thoughts\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "notes, not the work")
    assert taskfs("check", task, "--agent", "builder").code == 0
    done = taskfs("complete", task, "--agent", "builder", "--json")
    assert (done.code, _codes(done.json)) == (0, ["owned_files_untouched"])
    other = submit(repo, acceptanceCheck=check, filesAndInterfaces=["src/**/login.py"])
    assert taskfs("claim", other, "--agent", "builder").code == 0
    _work(repo)  # src/auth/login.py: owned
    assert taskfs("check", other, "--agent", "builder").code == 0
    done = taskfs("complete", other, "--agent", "builder", "--json")
    assert (done.code, _codes(done.json)) == (0, [])


def test_completing_again_the_same_way_is_said_done_anything_else_is_refused(repo: Path) -> None:
    task = submit(repo, acceptanceCheck=PASSES)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    _work(repo)
    assert taskfs("check", task, "--agent", "builder").code == 0
    args = ("complete", task, "--agent", "builder", "--artifact", "fix=src/auth/login.py")
    first = taskfs(*args, "--json")
    assert first.code == 0, first.stdout
    head = git(repo, "rev-parse", "HEAD")
    again = taskfs(*args, "--json")
    assert again.code == 0, again.stdout
    assert (again.json["state"], again.json["already"]) == ("completed", True)
    assert again.json["commit"] == first.json["commit"]
    said = taskfs(*args)
    assert (said.code, said.stdout.strip()) == (
        0,
        f"{task}: already completed by you; nothing changed",
    )
    assert git(repo, "rev-parse", "HEAD") == head
    # Another agent, other artifacts, or `move`: the lifecycle's refusal, as before.
    other = taskfs("complete", task, "--agent", "planner", "--json")
    assert (other.code, other.codes) == (1, ["transition_not_allowed"])
    changed = taskfs("complete", task, "--agent", "builder", "--json")
    assert (changed.code, changed.codes) == (1, ["transition_not_allowed"])
    moved = taskfs("move", task, "completed", "--agent", "builder", "--json")
    assert (moved.code, moved.codes) == (1, ["transition_not_allowed"])
    # Its message names who made the transition once, quoted once: "since builder's transition".
    message = moved.json["errors"][0]["message"]
    assert "builder's transition" in message
    assert "''" not in message
    assert git(repo, "rev-parse", "HEAD") == head
