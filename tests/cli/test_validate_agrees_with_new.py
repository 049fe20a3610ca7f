"""`validate FILE` refuses exactly what `new FILE` refuses of an envelope on its own (issue 28,
item 7): a parent that is the task itself, parents that loop among the files named together,
and entries reaching into the ledger (the configured folder included). Each case is run
through both commands in a real repository, and the codes compared."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import configure, taskfs, write_envelope

CASES: dict[str, dict[str, Any]] = {
    "parent is itself": {"id": "selfy", "parent": "selfy"},
    "an entry in tasks/": {"filesAndInterfaces": ["src/a.py", "tasks/**"]},
    "an entry in .git/": {"filesAndInterfaces": [".git/hooks/pre-commit"]},
    "an entry in .taskfs/": {"filesAndInterfaces": [".taskfs/config.yaml"]},
}


def _codes(result: Any) -> list[str]:
    doc = result.json
    found = [e["code"] for e in doc.get("errors", [])]
    for report in doc.get("files", []):
        found += [e["code"] for e in report["errors"]]
    return sorted(found)


@pytest.mark.parametrize("case", sorted(CASES))
def test_validate_refuses_what_new_refuses(repo: Path, case: str) -> None:
    path = write_envelope(repo / "e.yaml", **CASES[case])
    validated = taskfs("validate", str(path), "--json")
    submitted = taskfs("new", str(path), "--json")
    assert submitted.code == 1, submitted.stdout
    assert validated.code == 1, validated.stdout
    assert _codes(validated) == _codes(submitted)
    assert not (repo / "tasks" / "selfy").exists()


def test_files_named_together_are_checked_as_new_checks_a_batch(repo: Path) -> None:
    a = write_envelope(repo / "a.yaml", id="a", parent="b", filesAndInterfaces=["src/a.py"])
    b = write_envelope(repo / "b.yaml", id="b", parent="a", filesAndInterfaces=["src/b.py"])
    submitted = taskfs("new", str(a), str(b), "--json")
    validated = taskfs("validate", str(a), str(b), "--json")
    assert "delegation_loop" in submitted.codes
    assert validated.code == 1
    assert "delegation_loop" in _codes(validated)
    # Alone, each names a parent validate cannot see: not a loop, as `new` of one file says.
    assert taskfs("validate", str(a), "--json").code == 0


def test_validate_protects_the_configured_ledger_folder(repo: Path) -> None:
    configure(repo, "ledger elsewhere", tasksDir="work/ledger")
    path = write_envelope(repo / "e.yaml", filesAndInterfaces=["work/ledger/**"])
    assert taskfs("new", str(path), "--json").codes == ["files_and_interfaces_invalid"]
    assert _codes(taskfs("validate", str(path), "--json")) == ["files_and_interfaces_invalid"]
    elsewhere = write_envelope(repo / "f.yaml", filesAndInterfaces=["tasks/**"])
    assert taskfs("validate", str(elsewhere), "--json").code == 0


def test_validate_outside_a_repository_protects_the_default_folders(tmp_path: Path) -> None:
    path = write_envelope(tmp_path / "e.yaml", filesAndInterfaces=["tasks/x.yaml"])
    result = taskfs("validate", str(path), "--json", cwd=tmp_path)
    assert _codes(result) == ["files_and_interfaces_invalid"]
