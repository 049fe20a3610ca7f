"""Priorities and labels (issue 38, item 1): an envelope may say how urgent it is (0 the most, 4
the least, as beads counts) and carry labels; `ready` offers the most urgent first, then the
oldest; the listings show both; a bad value is a named error; lint says nothing new of an
envelope without them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import git, submit, taskfs, taskfs_process, write_envelope


def plan(repo: Path) -> None:
    """Four tasks for builder, submitted one after the other (so each is older than the
    next): a plain one, a low one, an urgent one, and a second plain one."""
    for task_id, extra in (
        ("t-plain", {}),
        ("t-low", {"priority": 4, "labels": ["docs"]}),
        ("t-urgent", {"priority": 0, "labels": ["bug", "login"]}),
        ("t-plain-2", {"priority": 2}),
    ):
        files = [f"src/{task_id}.py"]
        submit(repo, id=task_id, filesAndInterfaces=files, **extra)


def ready_ids(*args: str, process: Path | None = None) -> list[str]:
    argv = ("ready", "--agent", "builder", "--json", *args)
    result = taskfs_process(*argv, cwd=process) if process else taskfs(*argv)
    assert result.code == 0, result.stdout + result.stderr
    return [t["id"] for t in result.json["tasks"]]


def test_ready_offers_the_most_urgent_first_then_the_oldest(repo: Path) -> None:
    plan(repo)
    order = ["t-urgent", "t-plain", "t-plain-2", "t-low"]
    assert ready_ids() == order
    # The same from a fresh process (the read model's stored answer) and after it is deleted.
    assert ready_ids(process=repo) == order
    cache = Path(git(repo, "rev-parse", "--git-dir")).resolve() / "taskfs" / "cache"
    for stored in cache.glob("readmodel-*.sqlite"):
        stored.unlink()
    assert ready_ids(process=repo) == order
    # The text for people keeps the order and shows the priority and labels.
    lines = taskfs("ready", "--agent", "builder").stdout.splitlines()
    assert [line.split()[0] for line in lines] == order
    assert "P0" in lines[0]
    assert "bug,login" in lines[0]


def test_the_listings_show_priority_and_labels(repo: Path) -> None:
    plan(repo)
    rows = {t["id"]: t for t in taskfs("ls", "--json").json["tasks"]}
    assert (rows["t-urgent"]["priority"], rows["t-urgent"]["labels"]) == (0, ["bug", "login"])
    assert "priority" not in rows["t-plain"]  # an envelope that says nothing shows nothing
    assert "labels" not in rows["t-plain"]
    shown = taskfs("show", "t-urgent", "--json").json
    assert (shown["priority"], shown["labels"]) == (0, ["bug", "login"])
    assert shown["envelope"]["labels"] == ["bug", "login"]
    fresh = taskfs_process("ls", "--json", cwd=repo).json["tasks"]
    assert [t.get("labels") for t in fresh] == [t.get("labels") for t in rows.values()]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"priority": 5}, "priority"),
        ({"priority": -1}, "priority"),
        ({"priority": "high"}, "priority"),
        ({"labels": ["two words"]}, "labels[0]"),
        ({"labels": ["bug", "bug"]}, "labels"),
        ({"labels": "bug"}, "labels"),
    ],
)
def test_a_bad_priority_or_label_is_a_named_error(
    repo: Path, changes: dict[str, object], field: str
) -> None:
    path = write_envelope(repo / "e.yaml", **changes)
    result = taskfs("new", str(path), "--json")
    assert result.code == 1
    assert [(e["code"], e["field"]) for e in result.json["errors"]] == [("invalid_value", field)]
    assert "Traceback" not in result.stderr


def test_lint_says_nothing_new_of_an_envelope_without_them(repo: Path) -> None:
    plain = write_envelope(repo / "plain.yaml")
    marked = write_envelope(repo / "marked.yaml", priority=1, labels=["ui"])
    linted = [taskfs("lint", str(p), "--json").json for p in (plain, marked)]
    assert [doc["errors"] for doc in linted] == [[], []]  # both are envelopes
    assert [w["code"] for w in linted[0]["warnings"]] == [w["code"] for w in linted[1]["warnings"]]
