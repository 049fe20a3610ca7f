"""A dependency that was completed and then archived counts as completed for the lint, as it
does for `ready` and `claim` (team day 2: `new` and `lint` warned `dependency_unknown`, "no task
is yet", for it while `ready` offered the dependent): one answer to what a dependency stands at."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import ENVELOPE, submit, taskfs, write_envelope

CHECK = {"passFailCommand": "true", "endToEndVerification": "nothing to see"}


def _completed_and_archived(repo: Path, task_id: str) -> None:
    submit(repo, id=task_id, acceptanceCheck=CHECK, filesAndInterfaces=[f"src/{task_id}/**"])
    for argv in (("claim", task_id), ("check", task_id), ("complete", task_id)):
        done = taskfs(*argv, "--agent", "builder")
        assert done.code == 0, done.stdout + done.stderr
    done = taskfs("archive", "--older-than", "0", "--json")
    assert done.json["archived"] == [task_id], done.stdout
    assert not (repo / "tasks" / task_id).exists()


def _codes(doc: dict[str, object]) -> list[str]:
    warnings = doc.get("warnings", [])
    assert isinstance(warnings, list)
    return [w["code"] for w in warnings]


def test_an_archived_completed_dependency_is_no_unknown_one(repo: Path) -> None:
    _completed_and_archived(repo, "base")
    path = write_envelope(
        repo.parent / "next.yaml",
        id="next",
        dependsOn=["base"],
        contextID=ENVELOPE["contextID"],
        acceptanceCheck=CHECK,
        filesAndInterfaces=["src/next/**"],
    )
    lint = taskfs("lint", str(path), "--json")
    assert "dependency_unknown" not in _codes(lint.json), lint.stdout
    made = taskfs("new", str(path), "--json")
    assert made.code == 0, made.stdout
    assert "dependency_unknown" not in _codes(made.json), made.stdout
    assert "dependency_unknown" not in _codes(taskfs("lint", "--json").json)
    ready = taskfs("ready", "--agent", "builder", "--json")
    assert "next" in [row["id"] for row in ready.json["tasks"]], ready.stdout


def test_a_dependency_no_task_ever_had_is_still_unknown(repo: Path) -> None:
    _completed_and_archived(repo, "base")
    path = write_envelope(
        repo.parent / "typo.yaml",
        id="next",
        dependsOn=["bsae"],
        acceptanceCheck=CHECK,
        filesAndInterfaces=["src/next/**"],
    )
    made = taskfs("new", str(path), "--json")
    assert made.code == 0, made.stdout
    assert "dependency_unknown" in _codes(made.json), made.stdout
