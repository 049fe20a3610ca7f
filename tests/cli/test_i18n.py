"""Two languages through the command line: `--lang`, `TASKFS_LANG` and the locale choose the
language of messages for people; codes and data stay the same, and `--json` stays clean."""

from __future__ import annotations

import gettext
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from taskfs import i18n
from taskfs.errors import MESSAGES
from tests.helpers import git, submit, taskfs, taskfs_process, write_envelope

CATALOG = Path(i18n.LOCALE_DIR) / "tr" / "LC_MESSAGES" / "taskfs.mo"
LOCALE = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG", "TASKFS_LANG")


def in_turkish(error: dict[str, Any]) -> str:
    """The message the shipped catalog gives for one JSON error, filled from its data."""
    with CATALOG.open("rb") as handle:
        template = gettext.GNUTranslations(handle).pgettext(error["code"], MESSAGES[error["code"]])
    assert template != MESSAGES[error["code"]] or template == "{reason}"
    return template.format_map(defaultdict(str, error))


def without_message(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "message"} for e in errors]


@pytest.fixture(autouse=True)
def _english_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in LOCALE:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")


def bad_envelope(repo: Path) -> Path:
    return write_envelope(
        repo / "bad.yaml", id="-bad", objective=None, boundaries="  ", dependsOn=["x", "x"]
    )


def test_new_json_gives_the_same_codes_and_data_in_both_languages(repo: Path) -> None:
    path = str(bad_envelope(repo))
    english = taskfs("new", path, "--json")
    turkish = taskfs("--lang", "tr", "new", path, "--json")
    assert english.code == turkish.code == 1
    assert english.codes == turkish.codes
    assert {"invalid_task_id", "objective_required", "boundaries_required"} <= set(english.codes)
    assert without_message(english.json["errors"]) == without_message(turkish.json["errors"])
    assert {k: v for k, v in english.json.items() if k != "errors"} == {
        k: v for k, v in turkish.json.items() if k != "errors"
    }
    for en, tr in zip(english.json["errors"], turkish.json["errors"], strict=True):
        assert en["message"] != tr["message"]
        assert en["message"] == MESSAGES[en["code"]].format_map(defaultdict(str, en))
        assert tr["message"] == in_turkish(tr)
    assert "'-bad' bir görev kimliği değil" in turkish.stderr
    assert "error[objective_required]" in turkish.stderr
    assert taskfs("ls", "--json").json["tasks"] == []


@pytest.mark.parametrize(
    ("environment", "args", "language"),
    [
        ({}, [], "en"),
        ({}, ["--lang", "tr"], "tr"),
        ({}, ["--lang", "tr_TR.UTF-8"], "tr"),
        ({}, ["--lang", "xx"], "en"),
        ({"TASKFS_LANG": "tr"}, [], "tr"),
        ({"TASKFS_LANG": "tr"}, ["--lang", "en"], "en"),
        ({"LANG": "tr_TR.UTF-8"}, [], "tr"),
        ({"LANG": "tr_TR.UTF-8", "TASKFS_LANG": "en"}, [], "en"),
        ({"LANG": "de_DE.UTF-8"}, [], "en"),
        ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "tr_TR.UTF-8"}, [], "tr"),
        ({"LANG": "en_US.UTF-8", "LC_ALL": "tr_TR.UTF-8"}, [], "tr"),
        ({"LANG": "tr_TR.UTF-8", "LC_ALL": "C"}, [], "en"),
        ({"LANG": "en_US.UTF-8", "LANGUAGE": "de:tr"}, [], "tr"),
        ({"LANG": "tr_TR.UTF-8", "LANGUAGE": "en:tr"}, [], "en"),
    ],
)
def test_lang_then_taskfs_lang_then_the_locale_choose_the_language(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    environment: dict[str, str],
    args: list[str],
    language: str,
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    result = taskfs(*args, "show", "nope", "--json")
    assert result.codes == ["task_not_found"]
    [error] = result.json["errors"]
    expected = {"en": "no task 'nope'; `taskfs ls` lists the tasks", "tr": in_turkish(error)}[
        language
    ]
    assert error["message"] == expected


def test_a_lang_chosen_for_one_command_is_not_kept_for_the_next(repo: Path) -> None:
    assert taskfs("--lang", "tr", "claim", "nope", "--agent", "b", "--json").json["errors"][0][
        "message"
    ] == in_turkish({"code": "task_not_found", "id": "nope"})
    after = taskfs("claim", "nope", "--agent", "b", "--json").json["errors"][0]
    assert after["message"] == "no task 'nope'; `taskfs ls` lists the tasks"


def test_a_real_process_speaks_turkish_on_stderr_and_clean_json_on_stdout(repo: Path) -> None:
    path = str(bad_envelope(repo))
    result = taskfs_process("new", path, "--json", cwd=repo, env={"TASKFS_LANG": "tr"})
    assert result.code == 1
    doc = json.loads(result.stdout)
    assert result.stdout.count("\n") == 1
    messages = {e["code"]: e["message"] for e in doc["errors"]}
    assert messages["objective_required"] == in_turkish({"code": "objective_required"})
    assert f"error[objective_required]: {path}: objective eksik ya da boş" in result.stderr


def test_listing_loads_no_catalog_and_imports_nothing_more_in_turkish(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    submit(repo, id="listed")
    monkeypatch.setenv("TASKFS_LANG", "tr")
    i18n._catalogs.clear()
    assert taskfs("ls", "--json").json["tasks"][0]["id"] == "listed"
    assert taskfs("ready", "--agent", "builder", "--json").code == 0
    assert i18n._catalogs == {}, "a listing opened a catalog"
    assert taskfs("show", "nope").code == 1
    assert list(i18n._catalogs) == [("tr",)]

    def imported(env: dict[str, str]) -> set[str]:
        result = taskfs_process(
            "ls", "--json", cwd=repo, env={"PYTHONPROFILEIMPORTTIME": "1", **env}
        )
        assert result.code == 0, result.stderr
        lines = [line.split("|")[-1].strip() for line in result.stderr.splitlines()]
        return {name for name in lines if name and "imported package" not in name}

    english, turkish = imported({"TASKFS_LANG": "en"}), imported({"TASKFS_LANG": "tr"})
    assert "taskfs.readmodel.db" in english  # the listing ran
    assert turkish == english
    assert "taskfs.catalogs" not in turkish


def test_a_message_passed_on_as_data_stays_english(repo: Path) -> None:
    """An envelope edited in the ledger: its problems become the `reason` of `file_invalid`."""
    task = submit(repo, id="edited")
    path = repo / "tasks" / task / "envelope.yaml"
    path.write_text("\n".join(x for x in path.read_text().splitlines() if "objective" not in x))
    git(repo, "commit", "-qam", "edited in the ledger")  # what show reads is HEAD's
    english = taskfs("show", task, "--json")
    turkish = taskfs("--lang", "tr", "show", task, "--json")
    assert english.codes == turkish.codes == ["file_invalid"]
    assert without_message(english.json["errors"]) == without_message(turkish.json["errors"])
    [error] = turkish.json["errors"]
    assert error["reason"].startswith("objective_required: objective is missing or empty")
    assert error["message"] == in_turkish(error)
