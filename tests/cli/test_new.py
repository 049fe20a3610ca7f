"""`taskfs new` and `taskfs validate` through the command line: every named error of the
envelope, each fed as a real file, and the proof that a refusal changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskfs.core import yamlio
from tests.helpers import ENVELOPE, git, submit, taskfs, write_envelope

REQUIRED = [
    ("objective", "objective_required"),
    ("outputFormat", "output_format_required"),
    ("toolAndSourceGuidance", "tool_and_source_guidance_required"),
    ("boundaries", "boundaries_required"),
    ("filesAndInterfaces", "files_and_interfaces_required"),
    ("contextID", "context_id_required"),
]


def ledger_snapshot(repo: Path) -> tuple[str, list[str]]:
    files = sorted(str(p.relative_to(repo)) for p in (repo / "tasks").rglob("*"))
    return git(repo, "rev-parse", "HEAD"), files


def refused(repo: Path, path: Path, *extra: str) -> list[str]:
    """Submit `path`, assert it was refused and changed nothing; return the error codes."""
    before = ledger_snapshot(repo)
    result = taskfs("new", str(path), *extra, "--json")
    assert result.code == 1, result.stdout + result.stderr
    assert result.json["ok"] is False
    assert result.json["schemaVersion"] == 1
    assert ledger_snapshot(repo) == before
    assert "Traceback" not in result.stderr
    return result.codes


@pytest.mark.parametrize(("key", "code"), REQUIRED)
def test_each_missing_required_field_is_named(repo: Path, key: str, code: str) -> None:
    assert refused(repo, write_envelope(repo / "e.yaml", **{key: None})) == [code]


def test_missing_acceptance_check_names_both_of_its_parts(repo: Path) -> None:
    codes = refused(repo, write_envelope(repo / "e.yaml", acceptanceCheck=None))
    assert sorted(codes) == [
        "acceptance_check_command_required",
        "acceptance_check_verification_required",
    ]


@pytest.mark.parametrize(
    ("part", "code"),
    [
        ("passFailCommand", "acceptance_check_command_required"),
        ("endToEndVerification", "acceptance_check_verification_required"),
    ],
)
def test_each_missing_acceptance_part_is_named(repo: Path, part: str, code: str) -> None:
    check = {k: v for k, v in ENVELOPE["acceptanceCheck"].items() if k != part}
    assert refused(repo, write_envelope(repo / "e.yaml", acceptanceCheck=check)) == [code]


def test_all_eight_missing_give_eight_errors(repo: Path) -> None:
    path = repo / "e.yaml"
    path.write_text("from: planner\n")
    codes = refused(repo, path)
    assert sorted(codes) == sorted(
        [code for _, code in REQUIRED]
        + ["acceptance_check_command_required", "acceptance_check_verification_required"]
    )
    assert len(codes) == 8


@pytest.mark.parametrize("blank", ["", "   ", "\n\t "])
def test_empty_and_white_space_values_count_as_missing(repo: Path, blank: str) -> None:
    check = {**ENVELOPE["acceptanceCheck"], "passFailCommand": blank}
    path = write_envelope(repo / "e.yaml", objective=blank, acceptanceCheck=check)
    assert sorted(refused(repo, path)) == [
        "acceptance_check_command_required",
        "objective_required",
    ]


def test_null_value_counts_as_missing(repo: Path) -> None:
    path = repo / "e.yaml"
    text = yamlio.dump({k: v for k, v in ENVELOPE.items() if k != "boundaries"})
    path.write_text(text + "boundaries:\n")
    assert refused(repo, path) == ["boundaries_required"]


def test_misspelt_key_is_unknown_and_the_objective_still_missing(repo: Path) -> None:
    data = {k: v for k, v in ENVELOPE.items() if k != "objective"}
    path = repo / "e.yaml"
    path.write_text(yamlio.dump({**data, "objectve": "typo"}))
    result = taskfs("new", str(path), "--json")
    assert sorted(result.codes) == ["objective_required", "unknown_field"]
    unknown = next(e for e in result.json["errors"] if e["code"] == "unknown_field")
    assert unknown["suggestion"] == "objective"


def test_extension_keys_are_kept(repo: Path) -> None:
    task = submit(repo, **{"x-priority": "high"})
    shown = taskfs("show", task, "--json").json
    assert shown["envelope"]["x-priority"] == "high"


@pytest.mark.parametrize(
    ("changes", "code", "field"),
    [
        ({"objective": ["a", "list"]}, "invalid_value", "objective"),
        ({"filesAndInterfaces": "src/a.py"}, "invalid_value", "filesAndInterfaces"),
        ({"toolsAllowed": "bash"}, "invalid_value", "toolsAllowed"),
        ({"dependsOn": "other"}, "invalid_value", "dependsOn"),
        ({"acceptanceCheck": "pytest"}, "invalid_value", "acceptanceCheck"),
        ({"contextID": 12}, "invalid_value", "contextID"),
        ({"to": ["a"]}, "invalid_value", "to"),
    ],
)
def test_wrong_types(repo: Path, changes: dict[str, object], code: str, field: str) -> None:
    result = taskfs("new", str(write_envelope(repo / "e.yaml", **changes)), "--json")
    assert result.code == 1
    assert [(e["code"], e["field"]) for e in result.json["errors"]] == [(code, field)]


def test_timeout_must_be_a_positive_whole_number(repo: Path) -> None:
    for bad in ("30", -1, 0, 1.5, True):
        check = {**ENVELOPE["acceptanceCheck"], "timeoutSeconds": bad}
        path = write_envelope(repo / "e.yaml", acceptanceCheck=check)
        assert refused(repo, path) == ["invalid_value"], bad


def test_depends_on_itself(repo: Path) -> None:
    path = write_envelope(repo / "e.yaml", id="t1", dependsOn=["t1"])
    assert refused(repo, path) == ["depends_on_self"]


def test_depends_on_the_same_id_twice(repo: Path) -> None:
    path = write_envelope(repo / "e.yaml", dependsOn=["a1", "b2", "a1"])
    assert refused(repo, path) == ["depends_on_duplicate"]


@pytest.mark.parametrize(
    "bad_id", ["a/b", "..", ".", "has space", "Upper", "x" * 65, "-lead", ".hidden", ""]
)
def test_invalid_task_ids(repo: Path, bad_id: str) -> None:
    codes = refused(repo, write_envelope(repo / "e.yaml", id=bad_id))
    assert codes == ["invalid_task_id"]


def test_invalid_ids_in_depends_on_and_parent(repo: Path) -> None:
    path = write_envelope(repo / "e.yaml", dependsOn=["ok-1", "../etc"], parent="A B")
    result = taskfs("new", str(path), "--json")
    assert [(e["code"], e["field"]) for e in result.json["errors"]] == [
        ("invalid_task_id", "dependsOn[1]"),
        ("invalid_task_id", "parent"),
    ]


def test_sixty_four_character_id_is_fine(repo: Path) -> None:
    assert submit(repo, id="a" * 64) == "a" * 64


@pytest.mark.parametrize("entry", ["/etc/passwd", "../outside.py", "src/../../x", "", 5])
def test_files_and_interfaces_entries_that_escape_or_are_not_text(
    repo: Path, entry: object
) -> None:
    path = write_envelope(repo / "e.yaml", filesAndInterfaces=["src/ok.py", entry])
    assert refused(repo, path) == ["files_and_interfaces_invalid"]


def test_empty_files_and_interfaces(repo: Path) -> None:
    path = write_envelope(repo / "e.yaml", filesAndInterfaces=[])
    assert refused(repo, path) == ["files_and_interfaces_required"]


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"- just\n- a list\n", "not a mapping"),
        (b"just text\n", "a scalar"),
        (b"!!python/object/apply:os.system ['echo pwned']\n", "python tag"),
        (b"objective: a\nobjective: b\n", "duplicate keys"),
        (b"", "empty"),
        (b"# only a comment\n", "only comments"),
        ("objective: caf\xe9\n".encode("latin-1"), "latin-1"),
        ("objective: x\n".encode("utf-16"), "utf-16"),
        (b"a: [1, 2\n", "broken syntax"),
        (b"a: 1\n---\nb: 2\n", "two documents"),
    ],
)
def test_files_that_are_not_envelopes(repo: Path, content: bytes, why: str) -> None:
    path = repo / "e.yaml"
    path.write_bytes(content)
    assert refused(repo, path) == ["yaml_invalid"], why


def test_billion_laughs_is_refused(repo: Path) -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        refs = ",".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    path = repo / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    assert refused(repo, path) == ["yaml_invalid"]


def test_twenty_megabyte_file_is_refused(repo: Path) -> None:
    path = repo / "big.yaml"
    path.write_bytes(b"objective: " + b"x" * (20 * 1024 * 1024) + b"\n")
    assert refused(repo, path) == ["yaml_invalid"]


def test_a_directory_given_as_file(repo: Path) -> None:
    (repo / "adir").mkdir()
    assert refused(repo, repo / "adir") == ["file_unreadable"]


def test_a_missing_file(repo: Path) -> None:
    assert refused(repo, repo / "nope.yaml") == ["file_unreadable"]


def test_all_or_none_across_several_files(repo: Path) -> None:
    good = write_envelope(repo / "good.yaml")
    bad = write_envelope(repo / "bad.yaml", objective=None)
    before = ledger_snapshot(repo)
    result = taskfs("new", str(good), str(bad), "--json")
    assert result.code == 1
    assert result.codes == ["objective_required"]
    assert result.json["errors"][0]["source"] == str(bad)
    assert ledger_snapshot(repo) == before


def test_several_files_in_one_commit(repo: Path) -> None:
    first = write_envelope(repo / "a.yaml", id="plan-a", filesAndInterfaces=["src/a.py"])
    second = write_envelope(
        repo / "b.yaml", id="plan-b", filesAndInterfaces=["src/b.py"], dependsOn=["plan-a"]
    )
    head = git(repo, "rev-parse", "HEAD")
    result = taskfs("new", str(first), str(second), "--json")
    assert result.code == 0, result.stdout
    assert result.json["tasks"] == [
        {"id": "plan-a", "state": "submitted"},
        {"id": "plan-b", "state": "submitted"},
    ]
    assert git(repo, "rev-list", "--count", f"{head}..HEAD") == "1"
    changed = git(repo, "show", "--name-only", "--format=", "HEAD").splitlines()
    assert len(changed) == 4
    assert all(p.startswith(("tasks/plan-a/", "tasks/plan-b/")) for p in changed)


def test_envelope_from_stdin(repo: Path) -> None:
    data = write_envelope(repo / "e.yaml").read_bytes()
    result = taskfs("new", "-", "--json", stdin=data)
    assert result.code == 0
    assert result.json["state"] == "submitted"


def test_task_exists(repo: Path) -> None:
    submit(repo, id="same")
    assert refused(repo, write_envelope(repo / "e.yaml", id="same")) == ["task_exists"]


def test_same_id_twice_in_one_batch(repo: Path) -> None:
    a = write_envelope(repo / "a.yaml", id="twin", filesAndInterfaces=["a.py"])
    b = write_envelope(repo / "b.yaml", id="twin", filesAndInterfaces=["b.py"])
    result = taskfs("new", str(a), str(b), "--json")
    assert result.codes == ["task_exists"]


def test_dependency_cycle_through_an_existing_task(repo: Path) -> None:
    submit(repo, id="first", dependsOn=["second"], filesAndInterfaces=["one.py"])
    path = write_envelope(
        repo / "e.yaml", id="second", dependsOn=["first"], filesAndInterfaces=["two.py"]
    )
    result = taskfs("new", str(path), "--json")
    assert result.codes == ["dependency_cycle"]
    assert result.json["errors"][0]["cycle"] == ["second", "first", "second"]


def test_new_writes_envelope_and_submitted_status_in_one_commit(repo: Path) -> None:
    (repo / "staged.txt").write_text("user work\n")
    git(repo, "add", "staged.txt")
    task = submit(repo)
    files = git(repo, "show", "--name-only", "--format=", "HEAD").splitlines()
    assert files[0] == f"tasks/{task}/envelope.yaml"
    assert files[1].startswith(f"tasks/{task}/status/0001-submitted-")
    assert len(files) == 2
    assert git(repo, "log", "-1", "--format=%an") == "planner"
    # the user's staged work is still staged, and nothing else is dirty
    assert git(repo, "status", "--porcelain") == "A  staged.txt"
    envelope = (repo / files[0]).read_text()
    assert envelope.startswith("# yaml-language-server: $schema=")
    assert taskfs("validate", "--json").json["ok"] is True


def test_generated_ids_are_distinct_and_path_safe(repo: Path) -> None:
    seen = {submit(repo, filesAndInterfaces=[f"f{i}.py"], to=None) for i in range(5)}
    assert len(seen) == 5
    for task in seen:
        assert len(task) == 10


def test_validate_names_every_bad_file_and_changes_nothing(repo: Path) -> None:
    folder = repo / "drafts"
    folder.mkdir()
    write_envelope(folder / "good.yaml")
    write_envelope(folder / "bad.yaml", objective=None, contextID=None)
    (folder / "worse.yaml").write_bytes(b"\xff\xfe")
    before = ledger_snapshot(repo)
    result = taskfs("validate", str(folder), "--json")
    assert result.code == 1
    by_path = {Path(f["path"]).name: f for f in result.json["files"]}
    assert by_path["good.yaml"]["ok"] is True
    assert sorted(e["code"] for e in by_path["bad.yaml"]["errors"]) == [
        "context_id_required",
        "objective_required",
    ]
    assert [e["code"] for e in by_path["worse.yaml"]["errors"]] == ["yaml_invalid"]
    assert ledger_snapshot(repo) == before


def test_validate_whole_ledger_names_garbage_status_file(repo: Path) -> None:
    task = submit(repo)
    status = next((repo / "tasks" / task / "status").iterdir())
    status.write_text("state: [garbage\n")
    result = taskfs("validate", "--json")
    assert result.code == 1
    bad = [f for f in result.json["files"] if not f["ok"]]
    assert bad
    assert bad[0]["path"] == f"tasks/{task}/status/{status.name}"
    assert bad[0]["errors"][0]["code"] == "file_invalid"


def test_validate_names_a_stray_file(repo: Path) -> None:
    submit(repo, id="t1")
    (repo / "tasks" / "t1" / "notes.txt").write_text("hello\n")
    result = taskfs("validate", "--json")
    assert result.code == 1
    assert [f["path"] for f in result.json["files"] if not f["ok"]] == ["tasks/t1/notes.txt"]


def test_human_output_names_codes_on_stderr(repo: Path) -> None:
    result = taskfs("new", str(write_envelope(repo / "e.yaml", objective=None)))
    assert result.code == 1
    assert "objective_required" in result.stderr
    assert result.stdout == ""
