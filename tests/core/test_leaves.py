"""The two leaf modules of issue 17: `taskfs.core.layout` (on-disk names, id rules, finding the
checkout) and `taskfs.core.shapes` (every JSON shape)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from taskfs.core import layout, shapes
from taskfs.errors import problem

PACKAGE = Path(__file__).resolve().parents[2] / "taskfs"

text = st.text(max_size=12)
rows = st.lists(
    st.builds(
        lambda i, s, f, t, c, h, n: shapes.task_row(
            i, s, sender=f, recipient=t, context_id=c, holder=h, superseded=n
        ),
        text,
        text,
        st.none() | text,
        st.none() | text,
        st.none() | text,
        st.none() | text,
        st.integers(0, 99),
    ),
    max_size=5,
)


@given(rows)
def test_a_listing_stored_as_text_is_what_json_prints_for_its_document(found: list) -> None:
    printed = json.dumps(shapes.document(True, tasks=found), ensure_ascii=False)
    as_text = shapes.listing_text(json.dumps(row, ensure_ascii=False) for row in found)
    assert as_text == printed
    assert printed.startswith(shapes.listing_head())
    assert printed.endswith(shapes.LISTING_TAIL)


def test_a_refusal_is_a_failed_document_with_every_code() -> None:
    doc = shapes.refusal([problem("task_not_found", id="x"), problem("invalid_agent", agent="!")])
    assert doc["schemaVersion"] == shapes.SCHEMA_VERSION
    assert doc["ok"] is False
    assert [e["code"] for e in doc["errors"]] == ["task_not_found", "invalid_agent"]


def test_the_leaves_import_nothing_of_taskfs() -> None:
    probe = (
        "import sys, taskfs.core.layout, taskfs.core.shapes\n"
        "print(sorted(m for m in sys.modules if m.startswith('taskfs')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['taskfs', 'taskfs.core', 'taskfs.core.layout', 'taskfs.core.shapes']"


def test_on_disk_names_are_spelled_only_in_the_layout_module() -> None:
    # A settings path or a cache folder spelled by hand is one more place to miss on a rename.
    spelled = re.compile(r"""["']\.taskfs/(config\.yaml|keys|schema|conversations)\b""")
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.name != "layout.py" and spelled.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_the_checkout_is_found_from_a_subfolder_and_a_linked_worktree(tmp_path: Path) -> None:
    main = tmp_path / "main"
    (main / ".git").mkdir(parents=True)
    (main / "a" / "b").mkdir(parents=True)
    assert layout.find_worktree(main / "a" / "b") == main.resolve()
    assert layout.find_git_dir(main) == main / ".git"
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".git").write_text("gitdir: ../main/.git/worktrees/linked\n", encoding="utf-8")
    assert layout.find_git_dir(linked) == (main / ".git" / "worktrees" / "linked").resolve()
    assert layout.find_worktree(tmp_path) is None


def test_generated_names_follow_their_own_rules() -> None:
    from datetime import datetime, timezone

    assert layout.is_task_id(layout.new_task_id())
    assert layout.STATUS_NAME_RE.fullmatch(layout.status_name(3, "working"))
    moment = datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=timezone.utc)
    assert layout.STAMPED_NAME_RE.fullmatch(layout.stamped_name(moment))
    assert layout.parse_time(layout.format_time(moment)) == moment
    assert layout.report_name("x.yaml") == "x+refused.yaml"
    assert layout.drop_name(layout.report_name("x.yaml")) == "x.yaml"
