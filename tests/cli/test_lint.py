"""`taskfs lint` through the command line: files before submission, tasks in the ledger,
settings from .taskfs/config.yaml, and --strict."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import configure, git, submit, taskfs, write_envelope

CHECK = {"passFailCommand": "true", "endToEndVerification": "Log in and see it refused."}


def warning_codes(result_json: dict[str, object]) -> list[str]:
    return [w["code"] for w in result_json["warnings"]]  # type: ignore[attr-defined, index]


def test_a_weak_file_is_warned_about_before_it_is_submitted(repo: Path) -> None:
    path = write_envelope(repo / "plan.yaml", acceptanceCheck=CHECK, boundaries="n/a")
    result = taskfs("lint", str(path), "--json")
    assert result.code == 0
    assert result.json["ok"] is True
    assert warning_codes(result.json) == ["check_cannot_fail", "boundaries_vague"]
    assert result.json["warnings"][0]["subject"] == str(path)
    assert result.json["warnings"][0]["field"] == "acceptanceCheck.passFailCommand"
    plain = taskfs("lint", str(path))
    assert "warning[check_cannot_fail]" in plain.stdout
    assert "1 contract checked, 2 warnings" in plain.stdout


def test_strict_makes_warnings_fail(repo: Path) -> None:
    path = write_envelope(repo / "plan.yaml", acceptanceCheck=CHECK)
    result = taskfs("lint", "--strict", str(path), "--json")
    assert result.code == 1
    assert result.json["ok"] is False
    good = write_envelope(repo / "good.yaml")
    assert taskfs("lint", "--strict", str(good), "--json").code == 0


def test_without_arguments_the_open_tasks_are_linted(repo: Path) -> None:
    weak = submit(repo, id="weak", boundaries="none", filesAndInterfaces=["src/auth/weak.py"])
    submit(repo, id="fine")
    done = submit(repo, id="done", boundaries="none", filesAndInterfaces=["src/auth/done.py"])
    assert taskfs("move", done, "canceled", "--agent", "planner").code == 0
    result = taskfs("lint", "--json")
    assert result.json["checked"] == 2
    assert [(w["subject"], w["code"]) for w in result.json["warnings"]] == [
        (weak, "boundaries_vague")
    ]
    by_id = taskfs("lint", done, "--json")
    assert warning_codes(by_id.json) == ["boundaries_vague"]


def test_a_dependency_in_another_context_is_named(repo: Path) -> None:
    submit(repo, id="billing-base", contextID="billing", filesAndInterfaces=["billing/**"])
    path = write_envelope(repo / "plan.yaml", dependsOn=["billing-base"])
    result = taskfs("lint", str(path), "--json")
    assert warning_codes(result.json) == ["dependency_other_context"]
    assert result.json["warnings"][0]["other_context"] == "billing"


def test_new_names_a_dependency_in_another_context_reading_only_that_envelope(
    repo: Path,
) -> None:
    submit(repo, id="billing-base", contextID="billing", filesAndInterfaces=["billing/**"])
    # A broken envelope elsewhere in the ledger is not read: `new`'s lint looks only at the
    # envelopes its dependencies name, so it neither fails nor names that task.
    submit(repo, id="elsewhere", filesAndInterfaces=["docs/**"])
    (repo / "tasks" / "elsewhere" / "envelope.yaml").write_text("objective: [unclosed\n")
    path = write_envelope(repo / "plan.yaml", id="plan", dependsOn=["billing-base", "no-such-task"])
    result = taskfs("new", str(path), "--agent", "planner", "--json")
    assert result.code == 0, result.output
    codes = [(w["code"], w.get("dependency")) for w in result.json["warnings"]]
    assert ("dependency_other_context", "billing-base") in codes
    assert all(w["subject"] == "plan" for w in result.json["warnings"])


def test_settings_in_the_config_disable_codes_and_set_the_objective_length(repo: Path) -> None:
    path = write_envelope(repo / "plan.yaml", objective="Fix the login bug", boundaries="none")
    assert warning_codes(taskfs("lint", str(path), "--json").json) == ["boundaries_vague"]
    configure(repo, lint={"disable": ["boundaries_vague"], "objectiveMinWords": 6})
    assert warning_codes(taskfs("lint", str(path), "--json").json) == ["objective_too_short"]


def test_an_unknown_code_in_the_config_is_refused(repo: Path) -> None:
    configure(repo, lint={"disable": ["no_such_warning"]})
    result = taskfs("lint", "--json")
    assert result.code == 1
    assert result.codes == ["config_invalid"]


def test_an_invalid_envelope_is_an_error_not_a_warning(repo: Path) -> None:
    bad = write_envelope(repo / "bad.yaml", objective=None)
    good = write_envelope(repo / "good.yaml", boundaries="none")
    result = taskfs("lint", str(bad), str(good), "--json")
    assert result.code == 1
    assert [e["code"] for e in result.json["errors"]] == ["objective_required"]
    assert warning_codes(result.json) == ["boundaries_vague"]
    missing = taskfs("lint", "no-such-task", "--json")
    assert missing.code == 1
    assert [e["code"] for e in missing.json["errors"]] == ["task_not_found"]


def test_files_can_be_linted_outside_a_repository(tmp_path: Path) -> None:
    path = write_envelope(tmp_path / "plan.yaml", filesAndInterfaces=["**"])
    result = taskfs("lint", str(path), "--json", cwd=tmp_path)
    assert result.code == 0
    assert warning_codes(result.json) == ["owns_everything"]
    assert taskfs("lint", "--json", cwd=tmp_path).codes == ["not_a_repository"]


def test_lint_changes_nothing(repo: Path) -> None:
    submit(repo, boundaries="none")
    head = git(repo, "rev-parse", "HEAD")
    taskfs("lint", "--strict")
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""


def test_new_lints_with_the_settings_as_they_are_now(repo: Path) -> None:
    """new remembers the validated lint settings by the settings file's bytes: a change of the
    settings is seen at once, and settings that fail validation are never remembered."""

    def new_warnings(name: str) -> list[str]:
        path = write_envelope(
            repo / f"{name}.yaml",
            id=name,
            objective="Fix the login bug",
            boundaries="none",
            filesAndInterfaces=[f"src/{name}.py"],
        )
        result = taskfs("new", str(path), "--json")
        assert result.code == 0, result.stdout
        return warning_codes(result.json)

    assert "boundaries_vague" in new_warnings("first")
    configure(repo, lint={"disable": ["boundaries_vague"], "objectiveMinWords": 6})
    second = new_warnings("second")
    assert "boundaries_vague" not in second
    assert "objective_too_short" in second
    configure(repo, lint={})
    assert "boundaries_vague" in new_warnings("third")
