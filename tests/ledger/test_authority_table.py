"""The authority table (`taskfs.core.ledger_kinds`, issue 35): docs/trust.md carries it as the
code states it, every code it cites is one taskfs has, and taskfs commits no file in the
ledger's folders that is of no row."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskfs.core import ledger_kinds
from taskfs.errors import MESSAGES
from taskfs.store.repository import Repository
from tests.helpers import git

DOCS = Path(__file__).resolve().parents[2] / "docs" / "trust.md"


def test_docs_trust_carries_the_table_as_the_code_states_it() -> None:
    text = DOCS.read_text(encoding="utf-8")
    start = text.index("<!-- ledger-kinds")
    start = text.index("\n", start) + 1
    end = text.index("<!-- /ledger-kinds -->")
    assert text[start:end] == ledger_kinds.markdown_table(), (
        "docs/trust.md's table drifted: paste taskfs.core.ledger_kinds.markdown_table()"
    )


def test_every_code_the_table_cites_is_a_code_and_every_rule_is_named_once() -> None:
    names = [kind.name for kind in ledger_kinds.KINDS]
    assert len(names) == len(set(names))
    for kind in ledger_kinds.KINDS:
        assert set(kind.named_by) <= set(MESSAGES), kind.name
        assert all((kind.adds, kind.changes, kind.proves, kind.live)), kind.name
        assert {kind.edited, kind.deleted} <= set(MESSAGES)


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("tasks/a1/envelope.yaml", "envelope"),
        ("tasks/a1/status/0001-submitted-abcdefgh.yaml", "status"),
        ("tasks/a1/evidence/20260101T000000.000000Z-abcdefgh.yaml", "evidence"),
        ("tasks/a1/messages/20260101T000000.000000Z-abcdefgh.yaml", "message"),
        (".taskfs/conversations/20260101T000000.000000Z-abcdefgh.yaml", "message"),
        ("tasks/a1/reads/20260101T000000.000000Z-abcdefgh.yaml", "read"),
        ("tasks/a1/intake/20260101T000000.000000Z-abcdefgh.yaml", "intake"),
        ("tasks/a1/amendments/20260101T000000.000000Z-abcdefgh.yaml", "amendment"),
        (".taskfs/archive/20260101T000000.000000Z-abcdefgh.yaml", "archive"),
        (".taskfs/keys/agent/bob.pub", "agent-key"),
        (".taskfs/keys/revoked/agent/bob-0123456789abcdef.yaml", "revocation"),
        (".taskfs/keys/runner/ci.pub", "runner-key"),
        (".taskfs/config.yaml", "config"),
        (".taskfs/schema/envelope.schema.json", "schema"),
        ("tasks/new-task.yaml", "drop"),
        ("tasks/new-task+refused.yaml", "drop"),
        ("tasks/.gitkeep", "drop"),
        ("tasks/a1/notes.txt", None),
        (".taskfs/other/thing.yaml", None),
        ("src/main.py", None),
    ],
)
def test_each_path_is_of_its_row(path: str, rule: str | None) -> None:
    kind = ledger_kinds.kind_of(path)
    assert (kind.name if kind else None) == rule


def test_the_writer_commits_no_file_of_no_row(repo: Path) -> None:
    """A new kind of ledger file cannot be written before its row is: the writer refuses."""
    store = Repository.open(repo)
    head = git(repo, "rev-parse", "HEAD")
    with store.writing() as writer, pytest.raises(ValueError, match="no kind of ledger file"):
        writer.add("tasks/a1/notes/20260101T000000.000000Z-abcdefgh.yaml", b"x: 1\n")
    assert git(repo, "rev-parse", "HEAD") == head
