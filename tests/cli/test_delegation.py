"""Delegation chains through `taskfs new` (contract section 8), in real repositories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Result, configure, git, taskfs, write_envelope


def set_limit(repo: Path, limit: int) -> None:
    configure(repo, f"delegation limit {limit}", delegationMaxDepth=limit)


def new(repo: Path, task_id: str, **changes: Any) -> Result:
    path = write_envelope(repo / f"{task_id}.yaml", id=task_id, **changes)
    result = taskfs("new", str(path), "--json")
    path.unlink()
    return result


def chain(repo: Path) -> None:
    """root (planner -> lead) -> c1 (lead -> b1) -> c2 (b1 -> b2) -> c3 (b2 -> b3): three hops."""
    hops = [
        ("root", None, "planner", "lead", ["src/**"], ["bash", "edit", "web"]),
        ("c1", "root", "lead", "b1", ["src/auth/**"], ["bash", "edit"]),
        ("c2", "c1", "b1", "b2", ["src/auth/login.py", "src/auth/*.md"], ["bash"]),
        ("c3", "c2", "b2", "b3", ["src/auth/login.py"], ["bash"]),
    ]
    for task_id, parent, sender, to, files, tools in hops:
        result = new(
            repo,
            task_id,
            parent=parent,
            filesAndInterfaces=files,
            toolsAllowed=tools,
            **{"from": sender, "to": to},
        )
        assert result.code == 0, result.stdout
        assert result.json["id"] == task_id


def refused(repo: Path, result: Result) -> list[str]:
    assert result.code == 1, result.stdout
    assert git(repo, "status", "--porcelain") == ""
    return result.codes


def test_a_three_hop_chain_works_and_its_tasks_do_not_conflict(repo: Path) -> None:
    set_limit(repo, 3)
    chain(repo)
    for task_id, agent in [("root", "lead"), ("c1", "b1"), ("c2", "b2"), ("c3", "b3")]:
        claim = taskfs("claim", task_id, "--agent", agent, "--json")
        assert claim.code == 0, claim.stdout
    assert taskfs("validate", "--json").json["ok"] is True


def test_a_fourth_hop_past_the_limit_is_refused(repo: Path) -> None:
    set_limit(repo, 3)
    chain(repo)
    result = new(
        repo,
        "c4",
        parent="c3",
        filesAndInterfaces=["src/auth/login.py"],
        **{"from": "b3", "to": "b4"},
    )
    assert refused(repo, result) == ["delegation_too_deep"]
    assert result.json["errors"][0]["depth"] == 4
    assert result.json["errors"][0]["limit"] == 3


def test_the_default_limit_is_four_hops(repo: Path) -> None:
    chain(repo)
    fourth = new(
        repo,
        "c4",
        parent="c3",
        filesAndInterfaces=["src/auth/login.py"],
        **{"from": "b3", "to": "b4"},
    )
    assert fourth.code == 0, fourth.stdout
    fifth = new(
        repo,
        "c5",
        parent="c4",
        filesAndInterfaces=["src/auth/login.py"],
        **{"from": "b4", "to": "b5"},
    )
    assert refused(repo, fifth) == ["delegation_too_deep"]


def test_a_loop_is_refused(repo: Path) -> None:
    itself = new(repo, "loop", parent="loop", **{"from": "planner"})
    assert refused(repo, itself) == ["delegation_loop"]
    a = write_envelope(repo / "a.yaml", id="a", parent="b", filesAndInterfaces=["x/**"])
    b = write_envelope(repo / "b.yaml", id="b", parent="a", filesAndInterfaces=["y/**"])
    result = taskfs("new", str(a), str(b), "--json")
    a.unlink()
    b.unlink()
    assert refused(repo, result) == ["delegation_loop", "delegation_loop"]


def test_a_child_owning_what_its_parent_does_not_is_refused(repo: Path) -> None:
    chain(repo)
    result = new(
        repo,
        "wide",
        parent="c1",
        filesAndInterfaces=["src/auth/session.py", "src/db/**", "lib/**", "docs/readme.md"],
        **{"from": "b1", "to": "b9"},
    )
    assert refused(repo, result) == ["ownership_not_held"] * 3
    # src/db/** lies inside the grandparent's src/** but not inside the parent's src/auth/**.
    assert [e["entry"] for e in result.json["errors"]] == ["src/db/**", "lib/**", "docs/readme.md"]


def test_a_child_asking_for_a_tool_its_parent_lacks_is_refused(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chain(repo)
    files = ["src/auth/session.py"]
    web = new(
        repo,
        "w",
        parent="c1",
        filesAndInterfaces=files,
        toolsAllowed=["web"],
        **{"from": "b1", "to": "b9"},
    )
    assert refused(repo, web) == ["tool_not_held"]
    assert web.json["errors"][0]["tool"] == "web"

    # With a ledger, the parent holds only what its recipient was granted.
    ledger = tmp_path / "ledger.yaml"
    ledger.write_text("agents:\n  b1: [bash]\n")
    monkeypatch.setenv("TASKFS_LEDGER", str(ledger))
    edit = new(
        repo,
        "e",
        parent="c1",
        filesAndInterfaces=files,
        toolsAllowed=["edit"],
        **{"from": "b1", "to": "b9"},
    )
    assert refused(repo, edit) == ["tool_not_held"]
    bash = new(
        repo,
        "b",
        parent="c1",
        filesAndInterfaces=files,
        toolsAllowed=["bash"],
        **{"from": "b1", "to": "b9"},
    )
    assert bash.code == 0, bash.stdout


def test_the_child_is_sent_by_the_parents_recipient(repo: Path) -> None:
    chain(repo)
    result = new(
        repo,
        "m",
        parent="c1",
        filesAndInterfaces=["src/auth/x.py"],
        **{"from": "mallory", "to": "b9"},
    )
    assert refused(repo, result) == ["delegation_sender_mismatch"]
    assert result.json["errors"][0]["expected"] == "b1"


def test_a_parent_that_does_not_exist_is_refused(repo: Path) -> None:
    result = new(repo, "orphan", parent="ghost", **{"from": "planner"})
    assert refused(repo, result) == ["parent_not_found"]


def test_a_closed_parent_owns_nothing_to_delegate(repo: Path) -> None:
    chain(repo)
    assert taskfs("move", "c1", "canceled", "--agent", "lead").code == 0
    result = new(
        repo,
        "late",
        parent="c1",
        filesAndInterfaces=["src/auth/x.py"],
        **{"from": "b1", "to": "b9"},
    )
    assert refused(repo, result) == ["ownership_not_held"]
