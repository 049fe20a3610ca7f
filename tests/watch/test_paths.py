"""Which names the watcher reads, and how it decides that a file is complete (pure)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taskfs.core import layout
from taskfs.watch.reconcile import drop_rel, report_rel
from taskfs.watch.settle import Look, Settler

EDITOR_TEMPORARIES = [
    ".#fix.yaml",  # emacs lock link
    "#fix.yaml#",  # emacs auto-save
    "fix.yaml~",  # backup
    ".fix.yaml.swp",  # vim swap
    ".fix.yaml.swx",
    "4913",  # vim's probe of the folder
    ".fix.yaml.tmp",  # a tool's temporary before an atomic rename
    "fix.yaml.part",
    "fix.yml",
]


@pytest.mark.parametrize("name", EDITOR_TEMPORARIES)
def test_editor_temporaries_are_not_drops_nor_hints(name: str) -> None:
    assert not layout.is_drop([name])
    assert not layout.is_watch_hint([name], is_dir=False)


@pytest.mark.parametrize(
    ("parts", "drop"),
    [
        (["fix.yaml"], True),
        (["fix+refused.yaml"], False),
        (["t1", "envelope.yaml"], True),
        ([".hidden", "envelope.yaml"], False),
        (["t1", "envelope+refused.yaml"], False),
        (["t1", "status", "0001-submitted-abcdefgh.yaml"], False),
        (["t1", "other.yaml"], False),
    ],
)
def test_drops(parts: list[str], drop: bool) -> None:
    assert layout.is_drop(parts) is drop


def test_hints_are_drops_folders_and_messages_only() -> None:
    assert layout.is_watch_hint(["new-task"], is_dir=True)
    assert not layout.is_watch_hint(["t1", "status"], is_dir=True)
    assert layout.is_watch_hint(["t1", "messages", "20250101T000000.000000Z-abcdefgh.yaml"], False)
    assert not layout.is_watch_hint(["t1", "status", "0002-working-abcdefgh.yaml"], False)
    assert not layout.is_watch_hint(["t1", "evidence", "x.yaml"], False)
    assert not layout.is_watch_hint(["fix+refused.yaml"], False)
    assert not layout.is_watch_hint([], False)


def test_report_names() -> None:
    assert report_rel("tasks/fix.yaml") == "tasks/fix+refused.yaml"
    assert report_rel("tasks/t1/envelope.yaml") == "tasks/t1/envelope+refused.yaml"
    assert drop_rel("tasks/t1/envelope+refused.yaml") == "tasks/t1/envelope.yaml"


@given(st.from_regex(r"[a-z0-9][a-z0-9._-]{0,20}", fullmatch=True))
def test_a_report_names_its_drop(stem: str) -> None:
    drop = f"tasks/{stem}.yaml"
    if layout.is_drop([drop.split("/")[1]]):
        assert drop_rel(report_rel(drop)) == drop
        assert layout.is_report([report_rel(drop).split("/")[1]])


def test_ready_after_two_agreeing_looks_far_enough_apart() -> None:
    settler = Settler(1.0)
    look = Look(10, 5, 1)
    assert not settler.ready("a", look, 0.0)
    assert not settler.ready("a", look, 0.5)
    assert settler.due("a", 0.5) == 0.5
    assert settler.ready("a", look, 1.0)


@pytest.mark.parametrize("changed", [Look(11, 5, 1), Look(10, 6, 1), Look(10, 5, 2)])
def test_any_change_between_looks_starts_again(changed: Look) -> None:
    settler = Settler(1.0)
    assert not settler.ready("a", Look(10, 5, 1), 0.0)
    assert not settler.ready("a", changed, 1.0)
    assert not settler.ready("a", changed, 1.5)
    assert settler.ready("a", changed, 2.0)


def test_a_file_that_went_away_is_forgotten() -> None:
    settler = Settler(1.0)
    settler.ready("a", Look(1, 1, 1), 0.0)
    settler.keep_only([])
    assert not settler.ready("a", Look(1, 1, 1), 5.0)


def test_without_a_settle_time_two_looks_still_have_to_agree() -> None:
    settler = Settler(0.0)
    assert not settler.ready("a", Look(1, 1, 1), 0.0)
    assert settler.ready("a", Look(1, 1, 1), 0.0)
