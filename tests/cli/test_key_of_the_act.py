"""A dependency's completion is checked against the key its holder had when the completion was
committed, by the claim, by `ready` and by `audit` alike: the one authority rule of a status
file (`taskfs.core.ledger_kinds`). A key made later does not void an unsigned completion made
before it, and a key revoked later does not turn an unsigned completion forged while it stood
into a genuine one."""

from __future__ import annotations

from pathlib import Path

from taskfs.core import yamlio
from tests.cli.test_authority import findings, forge, make_keys, status_files
from tests.helpers import check, git, submit, taskfs


def _plan(repo: Path) -> tuple[str, str]:
    first = submit(repo, id="first", filesAndInterfaces=["src/first.py"])
    second = submit(repo, id="second", dependsOn=[first], filesAndInterfaces=["src/second.py"])
    (repo / "src" / "auth").mkdir(parents=True, exist_ok=True)
    (repo / "src" / "auth" / "login.py").write_text("x\n")  # what their check asks for
    return first, second


def _ready(agent: str) -> list[str]:
    result = taskfs("ready", "--agent", agent, "--json")
    assert result.code == 0, result.stdout + result.stderr
    return [t["id"] for t in result.json["tasks"]]


def test_a_key_made_after_an_unsigned_completion_leaves_the_dependent_claimable(
    repo: Path,
) -> None:
    first, second = _plan(repo)
    assert taskfs("claim", first, "--agent", "builder").code == 0
    check(first)
    assert taskfs("complete", first, "--agent", "builder").code == 0
    make_keys("builder")  # builder had no key when it completed `first`
    assert second in _ready("builder")
    claimed = taskfs("claim", second, "--agent", "builder", "--json")
    assert claimed.code == 0, claimed.stdout
    assert findings() == []


def test_a_key_revoked_after_a_forged_completion_does_not_make_it_genuine(repo: Path) -> None:
    make_keys("builder")
    first, second = _plan(repo)
    assert taskfs("claim", first, "--agent", "builder").code == 0
    evidence = Path(check(first)).name
    # Unsigned, in builder's name, while builder's key stood: what taskfs refuses to write.
    rel = forge(
        repo,
        first,
        "0003-completed-aaaaaaaa.yaml",
        state="completed",
        by="builder",
        prev=status_files(repo, first)[-1],
        extra=f"evidence: {evidence}\n",
    )
    assert taskfs("keys", "remove", "--agent", "builder", "--by", "builder").code == 0
    assert ("transition_unauthorized", rel) in findings()
    assert taskfs("claim", second, "--agent", "builder", "--json").codes == [
        "dependencies_unresolved"
    ]
    assert second not in _ready("builder")


def test_a_key_made_after_an_unsigned_amendment_leaves_it_in_force(repo: Path) -> None:
    from tests.cli.test_amend import NEW_OBJECTIVE, amend, envelope_file

    task = submit(repo, id="t1")
    assert amend(task, envelope_file(repo, "a.yaml", objective=NEW_OBJECTIVE)).code == 0
    make_keys("planner")  # planner had no key when it amended the task
    shown = taskfs("show", task, "--json").json
    assert shown["envelope"]["objective"] == NEW_OBJECTIVE
    assert [a["status"] for a in shown["amendments"]] == ["in force"]
    listed = taskfs("ls", "--grep", "whitespace", "--json").json["tasks"]
    assert [t["id"] for t in listed] == [task]
    assert findings() == []


def test_a_key_made_for_another_repository_signs_nothing_here(repo: Path) -> None:
    """One machine, two repositories: bob's key was made in the other one. Here no key stands
    for bob, so its messages are unsigned (as its transitions are), not signed with a key this
    ledger does not hold and refused for want of the recipient's."""
    other = repo.parent / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    assert taskfs("init", cwd=other).code == 0
    assert taskfs("keys", "new", "--agent", "builder", "--json", cwd=other).code == 0
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    asked = taskfs("send", task, "--agent", "builder", "--status", "needs_input", "Which file?")
    assert asked.code == 0, asked.stderr
    (message,) = (repo / "tasks" / task / "messages").glob("*.yaml")
    assert "sig" not in yamlio.load(message.read_bytes())
    assert findings() == []
