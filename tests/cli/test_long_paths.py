"""Paths the file system refuses to look at (issue 28, item 6): a 5,000-character path, a name
over 255 bytes, a folder deeper than a glob may be. `validate`, `lint` and `owners` answer each
with a named error and exit 1, never `internal_error`, and the path is not echoed whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import submit, taskfs

LONG = "a/" * 2500 + "x.yaml"  # 5,006 characters: over PATH_MAX
LONG_NAME = "x" * 300 + ".yaml"  # one name over NAME_MAX
DEEP_FOLDER = "/".join(f"d{k}" for k in range(40)) + "/"  # more segments than a glob may have


def _codes(doc: dict[str, object]) -> list[str]:
    found = [e["code"] for e in doc.get("errors", [])]  # type: ignore[attr-defined]
    for report in doc.get("files", []):  # type: ignore[attr-defined]
        found += [e["code"] for e in report["errors"]]
    return found


@pytest.mark.parametrize("path", [LONG, LONG_NAME], ids=["5000 characters", "300-byte name"])
def test_validate_names_a_path_too_long(repo: Path, path: str) -> None:
    result = taskfs("validate", path, "--json")
    assert result.code == 1, result.stdout
    assert _codes(result.json) == ["file_unreadable"]
    assert "internal_error" not in result.stdout + result.stderr


@pytest.mark.parametrize("path", [LONG, LONG_NAME], ids=["5000 characters", "300-byte name"])
def test_lint_names_a_path_too_long(repo: Path, path: str) -> None:
    result = taskfs("lint", path, "--json")
    assert result.code == 1, result.stdout
    assert _codes(result.json) == ["file_unreadable"]


@pytest.mark.parametrize(
    "path",
    [LONG, LONG.removesuffix("x.yaml"), LONG_NAME, DEEP_FOLDER],
    ids=["5000 characters", "a 5000-character folder", "300-byte name", "40 folders deep"],
)
def test_owners_names_a_path_it_cannot_answer_for(repo: Path, path: str) -> None:
    submit(repo, filesAndInterfaces=["src/**"])
    result = taskfs("owners", path, "--json")
    assert result.code in (0, 1), result.stdout
    assert "internal_error" not in result.stdout + result.stderr
    if result.code == 1:
        assert _codes(result.json) == ["invalid_value"]
        assert len(result.stdout) < 2000  # the path is not echoed whole
    else:  # a file no task owns: answered
        assert result.json["paths"][0]["owners"] == []


def test_owners_of_a_long_path_a_task_owns_is_answered(repo: Path) -> None:
    task = submit(repo, filesAndInterfaces=["src/**"])
    result = taskfs("owners", "src/" + LONG, "--json")
    assert result.code == 0, result.stdout
    assert [o["id"] for o in result.json["paths"][0]["owners"]] == [task]


def test_board_names_a_target_too_long_to_write(repo: Path) -> None:
    result = taskfs("board", "--html", LONG, "--json")
    assert result.code == 1
    assert _codes(result.json) == ["file_unwritable"]
