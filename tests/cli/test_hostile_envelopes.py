"""Envelopes written to hurt, through the command line in real repositories: entries past the
glob limits (submitted, or committed with plain git), control characters, entries reaching into
the ledger, parents that `new` refuses, and a 1,000-task dependsOn cycle.

Commands that must not stall run as subprocesses with a generous timeout (`SLOW`): a hang or a
30 s search fails the test; no wall-clock time is compared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from taskfs.core import yamlio
from tests.helpers import ENVELOPE, configure, git, submit, taskfs, taskfs_process, write_envelope

SLOW = 20.0  # seconds: each command here takes well under one; before the fix each took 30+
HUGE_ENTRY = "a*" * 1500 + "b"  # 3 KB, issue 16


def _new_file(repo: Path, name: str, **changes: Any) -> Path:
    return write_envelope(repo / name, **changes)


def _commit_task_by_hand(repo: Path, task_id: str, **changes: Any) -> None:
    """A task folder written and committed with plain git, bypassing `new`: the envelope and a
    `submitted` status copied from a task that `new` made."""
    model = submit(repo, filesAndInterfaces=[f"model/{task_id}.txt"])
    status_dir = repo / "tasks" / model / "status"
    folder = repo / "tasks" / task_id
    (folder / "status").mkdir(parents=True)
    data = {**ENVELOPE, "id": task_id, **changes}
    (folder / "envelope.yaml").write_text(
        yamlio.dump({k: v for k, v in data.items() if v is not None})
    )
    for status in status_dir.iterdir():
        (folder / "status" / status.name).write_bytes(status.read_bytes())
    git(repo, "add", "tasks")
    git(repo, "commit", "-q", "-m", f"{task_id} by hand")


# ---------------------------------------------------------------------------------------------
# Entries past the limits


def test_new_refuses_the_3kb_entry_at_once(repo: Path) -> None:
    path = _new_file(repo, "huge.yaml", filesAndInterfaces=["src/a.py", HUGE_ENTRY])
    result = taskfs_process("new", str(path), "--json", cwd=repo, timeout=SLOW)
    assert result.code == 1
    assert [(e["code"], e["field"]) for e in result.json["errors"]] == [
        ("files_and_interfaces_invalid", "filesAndInterfaces[1]")
    ]
    assert "512" in result.json["errors"][0]["reason"]
    assert len(result.stdout) < 4000  # the entry is not echoed whole


def test_the_watcher_refuses_it_too(repo: Path) -> None:
    dropped = _new_file(repo, "tasks/huge.yaml", filesAndInterfaces=[HUGE_ENTRY])
    result = taskfs_process("watch", "--once", cwd=repo, timeout=SLOW * 3)
    assert result.code == 0, result.stderr
    report = yamlio.load((repo / "tasks" / "huge+refused.yaml").read_bytes())
    assert isinstance(report, dict)
    assert [e["code"] for e in report["errors"]] == ["files_and_interfaces_invalid"]
    assert dropped.exists()


def test_an_over_limit_envelope_in_the_ledger_stalls_no_command(repo: Path) -> None:
    honest = submit(repo, filesAndInterfaces=["src/honest.py"])
    _commit_task_by_hand(repo, "hostile", filesAndInterfaces=[HUGE_ENTRY])
    for args in (["ls"], ["ready"], ["owners", "src/honest.py", "aab"]):
        result = taskfs_process(*args, "--json", cwd=repo, timeout=SLOW)
        assert result.code == 0, (args, result.stderr)
    assert honest in {t["id"] for t in taskfs_process("ls", "--json", cwd=repo).json["tasks"]}
    validate = taskfs_process("validate", "--json", cwd=repo, timeout=SLOW)
    assert validate.code == 1
    bad = {f["path"]: f for f in validate.json["files"] if not f["ok"]}
    assert "files_and_interfaces_invalid" in json.dumps(bad["tasks/hostile/envelope.yaml"])
    assert not any(path.startswith(f"tasks/{honest}") for path in bad)
    audit = taskfs_process("audit", "--json", cwd=repo, timeout=SLOW)
    assert audit.code == 1
    assert "tasks/hostile/envelope.yaml" in {f["path"] for f in audit.json["findings"]}
    claim = taskfs_process("claim", honest, "--agent", "builder", "--json", cwd=repo, timeout=SLOW)
    assert claim.code == 0, claim.stderr


def test_a_pathological_parent_and_child_decide_at_once(repo: Path) -> None:
    # the pair of issue 16 (101 s in the covers check): the parent is past the limits now
    parent = _new_file(repo, "p.yaml", id="par", filesAndInterfaces=["*a????????????????*"])
    result = taskfs_process("new", str(parent), "--json", cwd=repo, timeout=SLOW)
    assert result.codes == ["files_and_interfaces_invalid"]
    # the same shape at the limits is decided, and decided right, both ways
    for task_id, entries in (("wide", ["*a??????????????*"]), ("narrow", ["x/*a?????????????"])):
        path = _new_file(repo, f"{task_id}.yaml", id=task_id, filesAndInterfaces=entries)
        made = taskfs_process("new", str(path), "--json", cwd=repo, timeout=SLOW)
        assert made.code == 0, made.stdout
    inside = _new_file(
        repo,
        "c1.yaml",
        id="c1",
        parent="wide",
        filesAndInterfaces=["*a??????????????"],
        **{"from": "builder", "to": "helper"},
    )
    result = taskfs_process("new", str(inside), "--json", cwd=repo, timeout=SLOW)
    assert result.code == 0, result.stdout
    outside = _new_file(
        repo,
        "c2.yaml",
        id="c2",
        parent="narrow",
        filesAndInterfaces=["x/*a??????????????*"],
        **{"from": "builder", "to": "helper"},
    )
    result = taskfs_process("new", str(outside), "--json", cwd=repo, timeout=SLOW)
    assert result.codes == ["ownership_not_held"]


def test_a_pathological_parent_committed_by_hand_decides_at_once(repo: Path) -> None:
    _commit_task_by_hand(repo, "par", filesAndInterfaces=["*a????????????????*"], to="builder")
    child = _new_file(
        repo,
        "c.yaml",
        id="child",
        parent="par",
        filesAndInterfaces=["*a????????????????"],
        **{"from": "builder", "to": "helper"},
    )
    result = taskfs_process("new", str(child), "--json", cwd=repo, timeout=SLOW)
    assert result.code == 1
    assert "files_and_interfaces_invalid" in result.codes


# ---------------------------------------------------------------------------------------------
# Control characters and NUL


@pytest.mark.parametrize("char", ["\x00", "\n", "\r", "\x1b", "\u2028"])
def test_control_characters_in_entries_are_refused(repo: Path, char: str) -> None:
    path = _new_file(
        repo, "c.yaml", filesAndInterfaces=[f"src/a{char}b.py", f"interface:x{char}", "ok.py"]
    )
    result = taskfs("new", str(path), "--json")
    assert result.code == 1
    assert [(e["code"], e["field"]) for e in result.json["errors"]] == [
        ("files_and_interfaces_invalid", "filesAndInterfaces[0]"),
        ("files_and_interfaces_invalid", "filesAndInterfaces[1]"),
    ]
    assert not list((repo / "tasks").glob("*/envelope.yaml"))


def test_nul_in_the_commands_is_refused(repo: Path) -> None:
    check = {**ENVELOPE["acceptanceCheck"], "passFailCommand": "true\x00; rm -rf ~"}
    result = taskfs("new", str(_new_file(repo, "n.yaml", acceptanceCheck=check)), "--json")
    assert result.code == 1
    assert [(e["code"], e["field"]) for e in result.json["errors"]] == [
        ("invalid_value", "acceptanceCheck.passFailCommand")
    ]
    check = {**ENVELOPE["acceptanceCheck"], "endToEndCommand": "x\x00y"}
    result = taskfs("new", str(_new_file(repo, "m.yaml", acceptanceCheck=check)), "--json")
    assert result.codes == ["invalid_value"]


def test_validate_names_control_characters_committed_by_hand(repo: Path) -> None:
    _commit_task_by_hand(repo, "ctl", filesAndInterfaces=["src/a\nb.py"])
    result = taskfs("validate", "--json")
    assert result.code == 1
    bad = {f["path"]: f for f in result.json["files"] if not f["ok"]}
    assert "files_and_interfaces_invalid" in json.dumps(bad["tasks/ctl/envelope.yaml"])


# ---------------------------------------------------------------------------------------------
# The ledger can never be owned

REACHING = [
    "tasks/**",
    "tasks/",
    "tasks/*/envelope.yaml",
    "tasks/x/status/0001.yaml",
    "t*/**",
    "[t]asks/x",
    "?asks/*",
    "*s/**",
    "**/tasks/**",
    ".git/**",
    ".git/config",
    ".gi?/hooks/pre-commit",
    "**/.git/**",
    ".taskfs/config.yaml",
    ".taskfs/",
    ".*/**",
]
ALLOWED = ["**", "*", "*/x.py", "**/*.py", ".git*", ".gitignore", "src/**", "tasks-old/x", "tasks"]


@pytest.mark.parametrize("entry", REACHING)
def test_an_entry_reaching_into_the_ledger_is_refused(repo: Path, entry: str) -> None:
    path = _new_file(repo, "l.yaml", filesAndInterfaces=["src/ok.py", entry])
    result = taskfs("new", str(path), "--json")
    assert result.code == 1, entry
    assert [(e["code"], e["field"]) for e in result.json["errors"]] == [
        ("files_and_interfaces_invalid", "filesAndInterfaces[1]")
    ]


@pytest.mark.parametrize("entry", ALLOWED)
def test_an_entry_that_only_shares_wildcards_with_the_ledger_is_allowed(
    repo: Path, entry: str
) -> None:
    path = _new_file(repo, "l.yaml", filesAndInterfaces=[entry])
    result = taskfs("new", str(path), "--json")
    assert result.code == 0, result.stdout


def test_the_configured_ledger_folder_is_the_one_protected(repo: Path) -> None:
    configure(repo, "ledger elsewhere", tasksDir="work/ledger")
    for entry in ("work/ledger/**", "work/l*/x", "w*/ledger/*/envelope.yaml"):
        refused = taskfs("new", str(_new_file(repo, "a.yaml", filesAndInterfaces=[entry])))
        assert refused.code == 1, entry
        assert "files_and_interfaces_invalid" in refused.stderr
    allowed = taskfs("new", str(_new_file(repo, "b.yaml", filesAndInterfaces=["tasks/**"])))
    assert allowed.code == 0, allowed.stderr


def test_validate_and_audit_name_a_ledger_entry_committed_by_hand(repo: Path) -> None:
    _commit_task_by_hand(repo, "grab", filesAndInterfaces=["src/x.py", ".git/hooks/**"])
    result = taskfs("validate", "--json")
    assert result.code == 1
    codes = [(e["code"], e.get("id")) for e in result.json["errors"]]
    assert ("files_and_interfaces_invalid", "grab") in codes
    audit = taskfs("audit", "--json")
    assert audit.code == 1
    assert "files_and_interfaces_invalid" in {f["code"] for f in audit.json["findings"]}


# ---------------------------------------------------------------------------------------------
# Parents validate refuses as new does


@pytest.mark.parametrize(
    ("parent", "code"), [("me", "delegation_loop"), ("nosuch", "parent_not_found")]
)
def test_validate_refuses_the_parents_new_refuses(repo: Path, parent: str, code: str) -> None:
    task_id = "me" if parent == "me" else "orphan"
    path = _new_file(repo, "p.yaml", id=task_id, parent=parent)
    assert taskfs("new", str(path), "--json").codes == [code]
    _commit_task_by_hand(repo, task_id, parent=parent)
    result = taskfs("validate", "--json")
    assert result.code == 1
    assert [e["code"] for e in result.json["errors"]] == [code]
    audit = taskfs("audit", "--json")
    assert code in {f["code"] for f in audit.json["findings"]}


def test_validate_names_a_parent_loop_once(repo: Path) -> None:
    _commit_task_by_hand(repo, "a", parent="b")
    _commit_task_by_hand(repo, "b", parent="a")
    result = taskfs("validate", "--json")
    assert [e["code"] for e in result.json["errors"]] == ["delegation_loop"]


# ---------------------------------------------------------------------------------------------
# A 1,000-task cycle is named once

CYCLE = 1000


def _plan(repo: Path, close: bool) -> list[str]:
    plan = repo / "plan"
    plan.mkdir()
    for k in range(CYCLE):
        nxt = (k + 1) % CYCLE
        depends = [f"t{nxt:04d}"] if close or nxt else []
        write_envelope(
            plan / f"t{k:04d}.yaml",
            id=f"t{k:04d}",
            dependsOn=depends or None,
            filesAndInterfaces=[f"src/m{k}.py"],
        )
    return sorted(str(p) for p in plan.iterdir())


def test_a_1000_task_cycle_through_new_is_named_once(repo: Path) -> None:
    files = _plan(repo, close=True)
    result = taskfs_process("new", *files, "--json", cwd=repo, timeout=SLOW * 6)
    assert result.code == 1
    assert [e["code"] for e in result.json["errors"]] == ["dependency_cycle"]
    found = result.json["errors"][0]
    assert found["cycle_length"] == CYCLE
    assert len(result.stdout) < 8_000, len(result.stdout)
    text = taskfs_process("new", *files, cwd=repo, timeout=SLOW * 6)
    assert text.stderr.count("dependency_cycle") == 1
    assert len(text.stderr) < 4_000, len(text.stderr)


def test_a_1000_task_cycle_committed_by_hand_is_named_once(repo: Path) -> None:
    files = _plan(repo, close=False)
    assert taskfs_process("new", *files, "--json", cwd=repo, timeout=SLOW * 6).code == 0
    last = repo / "tasks" / f"t{CYCLE - 1:04d}" / "envelope.yaml"
    data = yamlio.load(last.read_bytes())
    assert isinstance(data, dict)
    last.write_text(yamlio.dump({**data, "dependsOn": ["t0000"]}))
    git(repo, "commit", "-q", "-am", "close the cycle by hand")
    validate = taskfs_process("validate", "--json", cwd=repo, timeout=SLOW * 3)
    assert validate.code == 1
    cycles = [e for e in validate.json["errors"] if e["code"] == "dependency_cycle"]
    assert len(cycles) == 1
    assert len(json.dumps(cycles)) < 2_000
    text = taskfs_process("validate", cwd=repo, timeout=SLOW * 3)
    assert text.stdout.count("dependency_cycle") + text.stderr.count("dependency_cycle") == 1
    assert len(text.stdout) + len(text.stderr) < 20_000
    audit = taskfs_process("audit", cwd=repo, timeout=SLOW * 3)
    assert audit.code == 1
    assert audit.stdout.count("dependency_cycle") + audit.stderr.count("dependency_cycle") == 1
    assert len(audit.stdout) + len(audit.stderr) < 20_000
