"""Amending a contract before anyone works on it (issue 38, item 3).

The sender of a task nobody has claimed amends its envelope: a new committed version, checked
again (ownership, dependencies), the old one kept in history and shown by `log` and `review`.
After a claim, an amendment waits for the holder's acceptance. Audit knows amendments: who may
write one, and every forgery of one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from taskfs.core import yamlio
from tests.helpers import ENVELOPE, check, commit_as, git, submit, taskfs


def envelope_file(repo: Path, name: str, **changes: Any) -> str:
    path = repo / name
    path.write_text(yamlio.dump({**ENVELOPE, **changes}))
    return str(path)


def amend(task: str, file: str, agent: str = "planner", *extra: str) -> Any:
    return taskfs("amend", task, file, "--agent", agent, *extra, "--json")


NEW_OBJECTIVE = "Refuse empty and whitespace-only passwords at login, with a regression test."


def test_the_sender_amends_an_unclaimed_task_and_history_keeps_the_old_version(
    repo: Path,
) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    task = submit(repo, id="t1")
    before = (repo / "tasks" / task / "envelope.yaml").read_bytes()
    done = amend(task, envelope_file(repo, "a.yaml", objective=NEW_OBJECTIVE), "planner",
                 "--reason", "whitespace too")  # fmt: skip
    assert done.code == 0, done.stdout
    assert (done.json["inForce"], done.json["changed"]) == (True, ["objective"])
    # The new version is the contract: show, ls and the claim's rules read it ...
    shown = taskfs("show", task, "--json").json
    assert shown["envelope"]["objective"] == NEW_OBJECTIVE
    assert [(a["by"], a["status"], a["reason"]) for a in shown["amendments"]] == [
        ("planner", "in force", "whitespace too")
    ]
    assert NEW_OBJECTIVE in taskfs("show", task).stdout
    # ... the old one is kept: envelope.yaml untouched, and log and review show both.
    assert (repo / "tasks" / task / "envelope.yaml").read_bytes() == before
    log = taskfs("log", task, "--json").json["timeline"]
    amended = [r for r in log if r["kind"] == "amendment"]
    assert [(r["actor"], r["what"]) for r in amended] == [("planner", "amended")]
    assert "objective" in amended[0]["detail"]
    assert "amended" in taskfs("log", task).stdout
    review = taskfs("review", "main..HEAD").stdout
    assert "objective" in review
    assert "whitespace too" in review
    # The claim takes the amended contract; audit is clean.
    assert taskfs("claim", task, "--agent", "builder").code == 0
    assert taskfs("show", task, "--json").json["envelope"]["objective"] == NEW_OBJECTIVE
    assert taskfs("audit", "--json").json["ok"] is True


def test_an_amendment_is_checked_again_and_refused_by_name(repo: Path) -> None:
    task = submit(repo, id="t1")
    submit(repo, id="t2", filesAndInterfaces=["src/other/**"])
    refusals = {
        "someone else": amend(task, envelope_file(repo, "a.yaml", objective=NEW_OBJECTIVE), "eve"),
        "an overlap": amend(task, envelope_file(repo, "b.yaml", filesAndInterfaces=["src/**"])),
        "its sender": amend(task, envelope_file(repo, "d.yaml", **{"from": "eve"})),
        "nothing": amend(task, envelope_file(repo, "e.yaml")),
        "a bad key": amend(task, envelope_file(repo, "f.yaml", objectve="typo")),
    }
    codes = {name: result.codes for name, result in refusals.items()}
    assert codes["someone else"] == ["agent_not_allowed"]
    assert codes["an overlap"] == ["ownership_conflict"]
    assert codes["its sender"] == ["amendment_not_allowed"]
    assert codes["nothing"] == ["amendment_not_allowed"]
    assert codes["a bad key"] == ["unknown_field"]
    # t2 depending on t1 is fine; t1 then depending on t2 would close a cycle.
    assert amend("t2", envelope_file(repo, "g.yaml", filesAndInterfaces=["src/other/**"],
                                     dependsOn=["t1"])).code == 0  # fmt: skip
    assert amend(task, envelope_file(repo, "h.yaml", dependsOn=["t2"])).codes == [
        "dependency_cycle"
    ]
    assert not list((repo / "tasks" / task).glob("amendments/*"))  # nothing half-written
    # A finished contract stays as it was.
    assert taskfs("refuse", task, "--agent", "builder", "--reason", "no").code == 0
    late = amend(task, envelope_file(repo, "i.yaml", objective=NEW_OBJECTIVE))
    assert late.codes == ["amendment_not_allowed"]


def test_after_a_claim_an_amendment_waits_for_the_holders_acceptance(repo: Path) -> None:
    task = submit(repo, id="t1")
    assert taskfs("claim", task, "--agent", "builder").code == 0
    proposed = amend(task, envelope_file(repo, "a.yaml", objective=NEW_OBJECTIVE))
    assert proposed.code == 0
    assert proposed.json["inForce"] is False
    # Not in force: the holder works to what it claimed until it accepts.
    assert taskfs("show", task, "--json").json["envelope"]["objective"] == ENVELOPE["objective"]
    assert "taskfs amend t1 --accept" in taskfs("show", task).stdout
    box = taskfs("inbox", "--agent", "builder", "--json").json
    assert [(a["task_id"], a["from"]) for a in box["amendments"]] == [(task, "planner")]
    # Its recipient changes only before a claim; only the holder accepts.
    readdressed = amend(task, envelope_file(repo, "b.yaml", to="helper"))
    assert readdressed.codes == ["amendment_not_allowed"]
    assert taskfs("amend", task, "--accept", "--agent", "planner", "--json").codes == [
        "agent_not_allowed"
    ]
    accepted = taskfs("amend", task, "--accept", "--agent", "builder", "--json")
    assert accepted.code == 0, accepted.stdout
    assert taskfs("show", task, "--json").json["envelope"]["objective"] == NEW_OBJECTIVE
    assert taskfs("inbox", "--agent", "builder", "--json").json["amendments"] == []
    assert taskfs("amend", task, "--accept", "--agent", "builder", "--json").codes == [
        "amendment_not_found"
    ]
    assert taskfs("audit", "--json").json["ok"] is True


def test_a_changed_command_needs_evidence_of_the_new_command(repo: Path) -> None:
    task = submit(repo, id="t1", acceptanceCheck={"passFailCommand": "true",
                                                  "endToEndVerification": "e"})  # fmt: skip
    assert taskfs("claim", task, "--agent", "builder").code == 0
    check(task)
    stricter = {"passFailCommand": "test -f src/auth/login.py", "endToEndVerification": "e"}
    assert amend(task, envelope_file(repo, "a.yaml", acceptanceCheck=stricter)).code == 0
    assert taskfs("amend", task, "--accept", "--agent", "builder").code == 0
    assert taskfs("complete", task, "--agent", "builder", "--json").codes == [
        "completion_requires_evidence"
    ]


# -- audit: every forgery of an amendment ---------------------------------------------------


def forged_amendment(repo: Path, task: str, by: str, author: str, **changes: Any) -> Path:
    """An amendment file written by hand, committed as `author`."""
    from taskfs.core.layout import format_time, stamped_name

    folder = repo / "tasks" / task / "amendments"
    folder.mkdir(exist_ok=True)
    from datetime import datetime, timezone

    now = datetime.now(timezone.utc)
    document = {
        "task": task,
        "kind": "amendment",
        "by": by,
        "at": format_time(now),
        "envelope": {**ENVELOPE, "id": task, **changes},
    }
    path = folder / stamped_name(now)
    path.write_text(yamlio.dump(document))
    commit_as(repo, author, "an amendment", str(path.relative_to(repo)))
    return path


def audit_codes() -> set[str]:
    return {f["code"] for f in taskfs("audit", "--json").json["findings"]}


def test_audit_names_an_amendment_by_someone_else_and_it_counts_for_nothing(repo: Path) -> None:
    task = submit(repo, id="t1")
    forged_amendment(repo, task, "eve", "eve", objective=NEW_OBJECTIVE)
    assert taskfs("show", task, "--json").json["envelope"]["objective"] == ENVELOPE["objective"]
    assert "amendment_unauthorized" in audit_codes()


def test_audit_names_an_amendment_whose_author_is_spoofed(repo: Path) -> None:
    task = submit(repo, id="t1")
    forged_amendment(repo, task, "planner", "eve", objective=NEW_OBJECTIVE)
    assert "author_mismatch" in audit_codes()


def test_audit_names_an_amendment_edited_or_deleted(repo: Path) -> None:
    task = submit(repo, id="t1")
    assert amend(task, envelope_file(repo, "a.yaml", objective=NEW_OBJECTIVE)).code == 0
    (path,) = (repo / "tasks" / task / "amendments").glob("*.yaml")
    path.write_text(path.read_text().replace("whitespace", "anything"))
    path.write_text(path.read_text().replace(NEW_OBJECTIVE, "Something else entirely here."))
    git(repo, "commit", "-q", "-am", "edit")
    assert "ledger_file_edited" in audit_codes()
    path.unlink()
    git(repo, "commit", "-q", "-am", "delete")
    assert "ledger_file_deleted" in audit_codes()


def test_audit_names_an_acceptance_by_someone_else(repo: Path) -> None:
    from datetime import datetime, timezone

    from taskfs.core.layout import format_time, stamped_name

    task = submit(repo, id="t1")
    assert taskfs("claim", task, "--agent", "builder").code == 0
    assert amend(task, envelope_file(repo, "a.yaml", objective=NEW_OBJECTIVE)).code == 0
    (pending,) = (repo / "tasks" / task / "amendments").glob("*.yaml")
    now = datetime.now(timezone.utc)
    record = {"task": task, "kind": "accepted", "by": "planner", "at": format_time(now),
              "accepts": pending.name}  # fmt: skip
    path = pending.parent / stamped_name(now)
    path.write_text(yamlio.dump(record))
    commit_as(repo, "planner", "an acceptance", str(path.relative_to(repo)))
    assert taskfs("show", task, "--json").json["envelope"]["objective"] == ENVELOPE["objective"]
    assert "amendment_unauthorized" in audit_codes()


# -- the authority row: signed where the writer has a key (issue 35's table) ----------------


def test_a_keyed_sender_signs_its_amendment_and_an_unsigned_one_counts_for_nothing(
    repo: Path, monkeypatch: Any
) -> None:
    for agent in ("planner", "builder"):
        assert taskfs("keys", "new", "--agent", agent, "--json").code == 0
    task = submit(repo, id="t1")
    assert amend(task, envelope_file(repo, "a.yaml", objective=NEW_OBJECTIVE)).code == 0
    (signed,) = (repo / "tasks" / task / "amendments").glob("*.yaml")
    assert "sig" in yamlio.load(signed.read_bytes())
    assert audit_codes() == set()
    # One in planner's name written by hand, unsigned: void for every reader; audit names it.
    other = "Accept any password at all, as the forger wishes."
    forged = forged_amendment(repo, task, "planner", "planner", objective=other)
    shown = taskfs("show", task, "--json").json
    assert shown["envelope"]["objective"] == NEW_OBJECTIVE
    assert [a["status"] for a in shown["amendments"]] == ["in force", "void"]
    assert "void" in taskfs("show", task).stdout
    assert taskfs("ls", "--grep", "forger", "--json").json["tasks"] == []
    found = taskfs("audit", "--json").json["findings"]
    assert [(f["code"], f["rule"]) for f in found if f["path"].endswith(forged.name)] == [
        ("amendment_unauthorized", "amendment")
    ]
    # The claim takes the signed version, and names it.
    assert taskfs("claim", task, "--agent", "builder").code == 0
    claim = sorted((repo / "tasks" / task / "status").glob("*-working-*.yaml"))[-1]
    assert yamlio.load(claim.read_bytes())["amendment"] == signed.name
    # Where planner's key is not, nothing is written in its name.
    away = repo.parent / "elsewhere"
    away.mkdir(mode=0o700)
    monkeypatch.setenv("TASKFS_KEY_DIR", str(away))
    refused = amend(task, envelope_file(repo, "b.yaml", boundaries="Nothing else at all."))
    assert refused.codes == ["signature_required"]
    assert len(list((repo / "tasks" / task / "amendments").glob("*.yaml"))) == 2


def test_the_read_model_and_the_full_reader_agree_when_a_key_decides_an_amendment(
    repo: Path,
) -> None:
    """Whether an amendment counts depends on its writer's key: when a key comes (a commit
    outside the task's folder), the rows of amended tasks are read again."""
    task = submit(repo, id="t1")
    assert amend(task, envelope_file(repo, "a.yaml", objective=NEW_OBJECTIVE)).code == 0
    assert [t["id"] for t in taskfs("ls", "--grep", "whitespace", "--json").json["tasks"]] == [task]
    assert taskfs("keys", "new", "--agent", "planner", "--json").code == 0
    shown = taskfs("show", task, "--json").json
    counted = shown["envelope"]["objective"] == NEW_OBJECTIVE
    listed = taskfs("ls", "--grep", "whitespace", "--json").json["tasks"]
    assert [t["id"] for t in listed] == ([task] if counted else [])


def test_an_amendment_not_accepted_before_the_task_ended_lapses(repo: Path) -> None:
    """The team day: planner amended while builder held the task; builder completed to the
    version it claimed. The amendment was shown as pending still, and accepting it was refused
    as if builder did not hold the task."""
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "login.py").write_text("x\n")
    commit_as(repo, "builder", "the work", "src/auth/login.py")
    task = submit(repo, id="t1")
    assert taskfs("claim", task, "--agent", "builder").code == 0
    assert amend(task, envelope_file(repo, "a.yaml", objective=NEW_OBJECTIVE)).code == 0
    check(task)
    assert taskfs("complete", task, "--agent", "builder").code == 0
    shown = taskfs("show", task, "--json").json
    assert [a["status"] for a in shown["amendments"]] == ["lapsed"]
    assert "taskfs amend t1 --accept" not in taskfs("show", task).stdout
    late = taskfs("amend", task, "--accept", "--agent", "builder", "--json")
    assert late.codes == ["amendment_not_allowed"]
