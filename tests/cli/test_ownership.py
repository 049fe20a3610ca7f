"""Ownership through the command line, in real repositories: `new` and `claim` refusing
overlaps, `owners`, `guard` on staged changes and on ranges of commits, the hook that
`init --hooks` installs run by a real `git commit`, and the bad entries people write."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import git, submit, taskfs, write_envelope

ROOT = Path(__file__).resolve().parents[2]


def run_git(repo: Path, *args: str, agent: str | None = None, author: str | None = None) -> int:
    """A git command as a user runs it (hooks included), as `agent` ($TASKFS_AGENT) and with
    `author` as the commit's author name; returns the exit status."""
    env = {k: v for k, v in os.environ.items() if k != "TASKFS_AGENT"}
    if agent is not None:
        env["TASKFS_AGENT"] = agent
    if author is not None:
        env["GIT_AUTHOR_NAME"] = author
    proc = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=False)
    return proc.returncode


def write(repo: Path, rel: str, text: str = "content\n") -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def commit_file(repo: Path, rel: str, author: str, text: str = "content\n") -> str:
    """Commit `rel` by hand (no hook installed in the caller's repo), authored by `author`."""
    write(repo, rel, text)
    git(repo, "add", rel)
    assert run_git(repo, "commit", "-q", "--no-verify", "-m", f"{author} edits", author=author) == 0
    return git(repo, "rev-parse", "HEAD")


def login_task(repo: Path) -> str:
    """The issue's first task: builder owns src/auth/login.py, and is working on it."""
    task = submit(repo, id="login", filesAndInterfaces=["src/auth/login.py"], to="builder")
    assert taskfs("claim", task, "--agent", "builder").code == 0
    return task


def guard(*args: str) -> tuple[int, list[dict[str, object]]]:
    result = taskfs("guard", *args, "--json")
    assert "Traceback" not in result.stderr
    return result.code, result.json.get("errors", [])


# -- new and claim: the rule of contract section 5 -------------------------------------


def test_wider_task_refused_while_narrower_is_open_and_accepted_when_it_depends(
    repo: Path,
) -> None:
    submit(repo, id="login", filesAndInterfaces=["src/auth/login.py"])
    path = write_envelope(repo / "wide.yaml", id="wide", filesAndInterfaces=["src/**"])
    refused = taskfs("new", str(path), "--json")
    assert refused.code == 1
    assert refused.codes == ["ownership_conflict"]
    error = refused.json["errors"][0]
    assert error["other"] == "login"
    assert (error["entry"], error["other_entry"]) == ("src/**", "src/auth/login.py")
    assert error["witness"] == "src/auth/login.py"
    assert not (repo / "tasks" / "wide").exists()

    write_envelope(path, id="wide", filesAndInterfaces=["src/**"], dependsOn=["login"])
    accepted = taskfs("new", str(path), "--json")
    assert accepted.code == 0, accepted.stdout
    assert accepted.json["id"] == "wide"


def test_a_closed_task_owns_nothing(repo: Path) -> None:
    submit(repo, id="login", filesAndInterfaces=["src/auth/login.py"])
    assert taskfs("move", "login", "canceled", "--agent", "planner").code == 0
    assert submit(repo, id="wide", filesAndInterfaces=["src/**"]) == "wide"


def test_overlap_arriving_by_merge_is_refused_at_claim_and_named_by_validate(
    repo: Path,
) -> None:
    # Each clone's `new` saw no conflict: the other task did not exist there yet.
    git(repo, "checkout", "-q", "-b", "side")
    submit(repo, id="wide", filesAndInterfaces=["src/**"], to="other")
    git(repo, "checkout", "-q", "main")
    submit(repo, id="login", filesAndInterfaces=["src/auth/login.py"])
    git(repo, "merge", "-q", "--no-edit", "side")
    assert (repo / "tasks" / "wide").is_dir()

    claim = taskfs("claim", "login", "--agent", "builder", "--json")
    assert claim.codes == ["ownership_conflict"]
    assert (claim.json["errors"][0]["other"], claim.json["errors"][0]["witness"]) == (
        "wide",
        "src/auth/login.py",
    )
    assert taskfs("claim", "wide", "--agent", "other", "--json").codes == ["ownership_conflict"]
    assert taskfs("show", "login", "--json").json["state"] == "submitted"
    assert taskfs("ready", "--json").json["tasks"] == []

    report = taskfs("validate", "--json")
    assert report.code == 1
    assert [e["code"] for e in report.json["errors"]] == ["ownership_conflict"]
    assert {report.json["errors"][0]["id"], report.json["errors"][0]["other"]} == {"login", "wide"}


# -- bad entries (the list), each through `taskfs new --json` -------------------


@pytest.mark.parametrize(
    "entries",
    [
        pytest.param(["src/[auth.py"], id="unbalanced-bracket"),
        pytest.param(["src/[]"], id="empty-class"),
        pytest.param([""], id="empty"),
        pytest.param(["   "], id="blank"),
        pytest.param(["src/a**b.py"], id="double-star-inside-a-segment"),
        pytest.param(["src/**x/y.py"], id="double-star-prefix"),
        pytest.param(["src\\auth\\login.py"], id="windows-separators"),
        pytest.param(["C:\\repo\\x.py"], id="windows-absolute"),
        pytest.param(["/src/x.py"], id="absolute"),
        pytest.param(["../x.py"], id="climbs-out"),
        pytest.param(["."], id="the-root-itself"),
        pytest.param(["interface:"], id="interface-without-name"),
        pytest.param(["interface:  "], id="interface-blank-name"),
        pytest.param(["src/x.py", "src/x.py"], id="duplicate"),
        pytest.param(["src/x.py", "./src/x.py"], id="duplicate-after-normalising"),
        pytest.param(["src/", "src/**"], id="trailing-slash-duplicates-globstar"),
        pytest.param(["interface:api", "interface:api"], id="duplicate-interface"),
        pytest.param([" src/x.py"], id="leading-space"),
        pytest.param([["src/x.py"]], id="not-text"),
    ],
)
def test_bad_entries_are_refused_by_name(repo: Path, entries: list[object]) -> None:
    path = write_envelope(repo / "e.yaml", filesAndInterfaces=entries)
    result = taskfs("new", str(path), "--json")
    assert result.code == 1, result.stdout
    assert result.codes == ["files_and_interfaces_invalid"]
    assert result.json["errors"][0]["field"].startswith("filesAndInterfaces")
    assert "Traceback" not in result.stderr
    assert taskfs("ls", "--json").json["tasks"] == []


@pytest.mark.parametrize(
    ("entry", "owned", "not_owned"),
    [
        ("./src/x.py", ["src/x.py"], ["x.py", "src/y.py"]),
        ("src//x.py", ["src/x.py"], []),
        ("src/", ["src/a.py", "src/a/b.py"], ["src", "srcx/a.py"]),  # the folder's contents
        ("src/**", ["src/a/b.py"], ["src"]),  # a/** does not match a
        ("src/**/**/x.py", ["src/x.py", "src/a/b/x.py"], []),
        ("./", ["a.py", "src/x.py"], []),  # the root folder's contents: **
        ("SRC/x.py", ["SRC/x.py"], ["src/x.py"]),  # case-sensitive
        ("src/[[]x].py", ["src/[x].py"], ["src/x.py"]),  # [[] is a literal [
        ("interface:auth-api", ["interface:auth-api"], ["interface:Auth-API", "auth-api"]),
    ],
)
def test_entries_are_normalised_and_match_as_documented(
    repo: Path, entry: str, owned: list[str], not_owned: list[str]
) -> None:
    submit(repo, id="t", filesAndInterfaces=[entry])
    answer = taskfs("owners", *owned, *not_owned, "--json").json["paths"]
    got = {row["path"]: [o["entry"] for o in row["owners"]] for row in answer}
    assert got == {**{p: [entry] for p in owned}, **{p: [] for p in not_owned}}


def test_normalised_entries_conflict_with_their_plain_spelling(repo: Path) -> None:
    submit(repo, id="dotted", filesAndInterfaces=["./src/x.py", "docs/"])
    path = write_envelope(repo / "e.yaml", id="plain", filesAndInterfaces=["src/x.py"])
    assert taskfs("new", str(path), "--json").codes == ["ownership_conflict"]
    write_envelope(path, id="plain", filesAndInterfaces=["docs/guide/intro.md"])
    result = taskfs("new", str(path), "--json")
    assert result.json["errors"][0]["witness"] == "docs/guide/intro.md"


def test_paths_differing_in_case_do_not_conflict(repo: Path) -> None:
    submit(repo, id="upper", filesAndInterfaces=["Docs/README.md"])
    assert submit(repo, id="lower", filesAndInterfaces=["docs/readme.md"]) == "lower"


# -- owners ----------------------------------------------------------------------------


def test_owners_names_each_paths_open_tasks_with_recipient(repo: Path) -> None:
    login_task(repo)
    submit(repo, id="docs", filesAndInterfaces=["docs/*.md", "interface:docs-site"], to="writer")
    submit(repo, id="anyone", filesAndInterfaces=["Makefile"], to=None)
    result = taskfs(
        "owners", "src/auth/login.py", "docs/guide.md", "README.md", "interface:docs-site",
        "Makefile", "--json",
    )  # fmt: skip
    assert result.code == 0
    assert result.json["ok"] is True
    rows = {row["path"]: row["owners"] for row in result.json["paths"]}
    assert list(rows) == [
        "src/auth/login.py",
        "docs/guide.md",
        "README.md",
        "interface:docs-site",
        "Makefile",
    ]
    assert rows["src/auth/login.py"] == [
        {
            "id": "login",
            "to": "builder",
            "holder": "builder",
            "state": "working",
            "entry": "src/auth/login.py",
        }
    ]
    assert [(o["id"], o["to"], o["entry"]) for o in rows["docs/guide.md"]] == [
        ("docs", "writer", "docs/*.md")
    ]
    assert rows["README.md"] == []
    assert [o["entry"] for o in rows["interface:docs-site"]] == ["interface:docs-site"]
    assert [(o["id"], o["to"], o["holder"]) for o in rows["Makefile"]] == [("anyone", None, None)]


def test_owners_takes_paths_relative_to_the_current_folder(repo: Path) -> None:
    login_task(repo)
    (repo / "src" / "auth").mkdir(parents=True)
    result = taskfs("owners", "login.py", "../../README.md", "./../auth/login.py", "--json",
                    cwd=repo / "src" / "auth")  # fmt: skip
    rows = [(row["path"], [o["id"] for o in row["owners"]]) for row in result.json["paths"]]
    assert rows == [
        ("src/auth/login.py", ["login"]),
        ("README.md", []),
        ("src/auth/login.py", ["login"]),
    ]
    absolute = taskfs("owners", str(repo / "src" / "auth" / "login.py"), "--json")
    assert absolute.json["paths"][0]["path"] == "src/auth/login.py"


def test_owners_of_a_folder_are_the_tasks_owning_anything_below_it(repo: Path) -> None:
    login_task(repo)
    submit(repo, id="models", filesAndInterfaces=["src/*/models.py"], to="modeller")
    submit(repo, id="docs", filesAndInterfaces=["docs/**"], to="writer")
    (repo / "src" / "auth").mkdir(parents=True)
    result = taskfs("owners", "src/auth", "docs/", ".", "--json")
    rows = {row["path"]: row for row in result.json["paths"]}
    assert all(row["folder"] for row in rows.values())
    assert [(o["id"], o["witness"]) for o in rows["src/auth"]["owners"]] == [
        ("login", "src/auth/login.py"),
        ("models", "src/auth/models.py"),
    ]
    assert [o["id"] for o in rows["docs"]["owners"]] == ["docs"]
    assert [o["id"] for o in rows[""]["owners"]] == ["docs", "login", "models"]


def test_owners_never_counts_closed_tasks_or_ledger_files(repo: Path) -> None:
    submit(repo, id="everything", filesAndInterfaces=["**"], to="builder")
    submit(repo, id="gone", filesAndInterfaces=["old.py"], to="builder", dependsOn=["everything"])
    assert taskfs("move", "gone", "canceled", "--agent", "planner").code == 0
    result = taskfs("owners", "old.py", "tasks/gone/envelope.yaml", ".taskfs/config.yaml",
                    "--json")  # fmt: skip
    rows = [[o["id"] for o in row["owners"]] for row in result.json["paths"]]
    assert rows == [["everything"], [], []]


def test_owners_refuses_a_path_outside_the_repository(repo: Path, tmp_path: Path) -> None:
    result = taskfs("owners", str(tmp_path), "../elsewhere.py", "--json")
    assert result.code == 1
    assert result.codes == ["path_outside_repository"]


def test_owners_needs_a_path(repo: Path) -> None:
    assert taskfs("owners").code == 2


# -- guard on staged changes -----------------------------------------------------------


def test_guard_refuses_another_agents_change_and_lets_the_owner_commit(repo: Path) -> None:
    login_task(repo)
    write(repo, "src/auth/login.py")
    write(repo, "src/other.py")
    git(repo, "add", "src")
    code, errors = guard("--agent", "intruder")
    assert code == 1
    assert [e["code"] for e in errors] == ["ownership_guard"]
    assert {k: errors[0][k] for k in ("path", "id", "owner", "entry", "agent")} == {
        "path": "src/auth/login.py",
        "id": "login",
        "owner": "builder",
        "entry": "src/auth/login.py",
        "agent": "intruder",
    }
    assert guard("--agent", "builder") == (0, [])
    ok = taskfs("guard", "--agent", "builder", "--json").json
    assert ok["ok"] is True
    assert sorted(ok["checked"][0]["paths"]) == ["src/auth/login.py", "src/other.py"]


@pytest.mark.parametrize("change", ["modify", "delete", "rename-away", "rename-onto"])
def test_guard_sees_every_kind_of_change(repo: Path, change: str) -> None:
    commit_file(repo, "src/auth/login.py", "Test User")
    commit_file(repo, "src/auth/plain.py", "Test User")
    login_task(repo)
    if change == "modify":
        write(repo, "src/auth/login.py", "changed\n")
        git(repo, "add", "src/auth/login.py")
    elif change == "delete":
        git(repo, "rm", "-q", "src/auth/login.py")
    elif change == "rename-away":
        git(repo, "mv", "src/auth/login.py", "src/auth/renamed.py")
    else:
        git(repo, "rm", "-q", "src/auth/login.py")
        git(repo, "commit", "-q", "--no-verify", "-m", "make room")
        git(repo, "mv", "src/auth/plain.py", "src/auth/login.py")
    code, errors = guard("--agent", "intruder")
    assert code == 1
    assert [e["path"] for e in errors] == ["src/auth/login.py"]
    assert guard("--agent", "builder")[0] == 0


def test_guard_never_counts_ledger_files_and_unowned_files(repo: Path) -> None:
    submit(repo, id="everything", filesAndInterfaces=["**"], to="builder")
    write(repo, "tasks/notes.txt")
    write(repo, ".taskfs/extra.yaml")
    git(repo, "add", "-f", "tasks/notes.txt", ".taskfs/extra.yaml")
    assert guard("--agent", "intruder") == (0, [])
    write(repo, "anything.py")
    git(repo, "add", "anything.py")
    assert [e["path"] for e in guard("--agent", "intruder")[1]] == ["anything.py"]


def test_guard_with_nothing_staged_is_clean(repo: Path) -> None:
    login_task(repo)
    write(repo, "src/auth/login.py")  # changed but not staged: not part of the commit
    assert guard("--agent", "intruder") == (0, [])


def test_a_submitted_task_belongs_to_its_recipient_and_an_unaddressed_one_to_nobody_yet(
    repo: Path,
) -> None:
    submit(repo, id="addressed", filesAndInterfaces=["a.py"], to="builder")
    submit(repo, id="open-call", filesAndInterfaces=["b.py"], to=None)
    write(repo, "a.py")
    write(repo, "b.py")
    git(repo, "add", "a.py", "b.py")
    code, errors = guard("--agent", "builder")
    assert code == 1
    assert [(e["path"], e["id"], e["owner"]) for e in errors] == [("b.py", "open-call", None)]
    assert taskfs("claim", "open-call", "--agent", "builder").code == 0
    assert guard("--agent", "builder") == (0, [])


def test_of_two_dependent_tasks_owning_a_file_the_one_not_waiting_holds_it(repo: Path) -> None:
    login_task(repo)
    submit(repo, id="later", filesAndInterfaces=["src/**"], to="other", dependsOn=["login"])
    write(repo, "src/auth/login.py")
    git(repo, "add", "src/auth/login.py")
    code, errors = guard("--agent", "other")
    assert code == 1
    assert [(e["id"], e["owner"]) for e in errors] == [("login", "builder")]
    assert guard("--agent", "builder") == (0, [])
    write(repo, "src/billing.py")  # only `later` owns this one
    git(repo, "add", "src/billing.py")
    assert [e["path"] for e in guard("--agent", "builder")[1]] == ["src/billing.py"]


def test_guard_without_an_agent_acts_as_the_commits_author(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    login_task(repo)
    write(repo, "src/auth/login.py")
    git(repo, "add", "src/auth/login.py")
    code, errors = guard()  # GIT_AUTHOR_NAME is "Test User": a person committing by hand
    assert code == 1
    assert errors[0]["agent"] == "Test User"
    monkeypatch.setenv("GIT_AUTHOR_NAME", "builder")
    assert guard() == (0, [])


def test_guard_notes_when_the_agent_is_not_the_author(repo: Path) -> None:
    login_task(repo)
    write(repo, "src/auth/login.py")
    git(repo, "add", "src/auth/login.py")
    result = taskfs("guard", "--agent", "builder", "--json")
    assert result.json["checked"][0]["author"] == "Test User"
    assert "author" in taskfs("guard", "--agent", "builder").stdout


def test_guard_refuses_an_invalid_agent_name(repo: Path) -> None:
    assert guard("--agent", "not a name")[1][0]["code"] == "invalid_agent"


# -- guard on a range of commits (CI) --------------------------------------------------


def test_guard_range_judges_each_commit_by_its_author_and_its_own_ledger(repo: Path) -> None:
    start = git(repo, "rev-parse", "HEAD")
    early = commit_file(repo, "src/auth/login.py", "intruder", "before any task\n")
    login_task(repo)
    commit_file(repo, "src/auth/login.py", "builder", "the owner's work\n")
    bad = commit_file(repo, "src/auth/login.py", "intruder", "someone else's\n")
    commit_file(repo, "src/free.py", "intruder")
    assert taskfs("move", "login", "canceled", "--agent", "planner").code == 0
    commit_file(repo, "src/auth/login.py", "intruder", "after the task closed\n")

    result = taskfs("guard", "--range", f"{start}..HEAD", "--json")
    assert result.code == 1
    assert [(e["code"], e["commit"], e["agent"], e["path"]) for e in result.json["errors"]] == [
        ("ownership_guard", bad, "intruder", "src/auth/login.py")
    ]
    assert early != bad
    later = taskfs("guard", "--range", f"{bad}..HEAD", "--json")
    assert later.code == 0
    assert [c["agent"] for c in later.json["checked"]] == ["intruder", "planner", "intruder"]


def test_guard_range_counts_only_what_a_merge_changes_itself(repo: Path) -> None:
    commit_file(repo, "shared.txt", "Test User", "base\n")
    login_task(repo)
    start = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "feature")
    commit_file(repo, "src/auth/login.py", "builder", "the owner's work\n")
    git(repo, "checkout", "-q", "main")
    commit_file(repo, "other.txt", "intruder")
    assert run_git(repo, "merge", "-q", "--no-edit", "feature", author="intruder") == 0
    assert taskfs("guard", "--range", f"{start}..HEAD", "--json").code == 0

    git(repo, "reset", "-q", "--hard", "HEAD~1")
    assert run_git(repo, "merge", "-q", "--no-commit", "feature") == 0
    write(repo, "src/auth/login.py", "the merger's own edit\n")
    git(repo, "add", "src/auth/login.py")
    assert run_git(repo, "commit", "-q", "--no-verify", "-m", "merge", author="intruder") == 0
    result = taskfs("guard", "--range", f"{start}..HEAD", "--json")
    assert [(e["agent"], e["path"]) for e in result.json["errors"]] == [
        ("intruder", "src/auth/login.py")
    ]
    assert result.json["errors"][0]["commit"] == git(repo, "rev-parse", "HEAD")


def test_guard_range_ignores_taskfs_agent_from_the_environment(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    login_task(repo)
    start = git(repo, "rev-parse", "HEAD")
    commit_file(repo, "src/auth/login.py", "intruder")
    monkeypatch.setenv("TASKFS_AGENT", "builder")
    assert [e["agent"] for e in guard("--range", f"{start}..HEAD")[1]] == ["intruder"]
    assert taskfs("guard", "--range", "HEAD~1..HEAD", "--agent", "builder").code == 2


def test_guard_range_that_is_not_a_range(repo: Path) -> None:
    assert guard("--range", "no-such-branch..HEAD")[1][0]["code"] == "git_failed"
    assert guard("--range", "--all")[1][0]["code"] == "git_failed"


# -- the hook: `taskfs init --hooks` and a real `git commit` ---------------------------


def test_installed_hook_refuses_another_agents_commit_and_lets_the_owner_commit(
    repo: Path,
) -> None:
    result = taskfs("init", "--hooks", "--json")
    assert result.code == 0
    hook = repo / ".git" / "hooks" / "pre-commit"
    assert result.json["hook"]["path"] == str(hook)
    assert os.access(hook, os.X_OK)
    login_task(repo)
    head = git(repo, "rev-parse", "HEAD")

    write(repo, "src/auth/login.py", "intruder's change\n")
    git(repo, "add", "src/auth/login.py")
    assert run_git(repo, "commit", "-q", "-m", "x", agent="intruder") == 1
    assert run_git(repo, "commit", "-q", "-m", "x", author="intruder") == 1  # no TASKFS_AGENT
    assert git(repo, "rev-parse", "HEAD") == head

    assert run_git(repo, "commit", "-q", "-m", "owner", agent="builder", author="builder") == 0
    assert git(repo, "rev-parse", "HEAD") != head

    # `git commit -a` and `git commit PATH` stage into a temporary index the hook must read.
    write(repo, "src/auth/login.py", "again\n")
    assert run_git(repo, "commit", "-q", "-am", "x", agent="intruder") == 1
    assert run_git(repo, "commit", "-q", "-m", "x", "src/auth/login.py", agent="intruder") == 1
    assert run_git(repo, "commit", "-q", "-am", "owner", agent="builder") == 0
    write(repo, "README.md", "anyone may change this\n")
    assert run_git(repo, "commit", "-q", "-am", "free", agent="intruder") == 0


def test_hook_lets_a_merge_through_unless_it_changes_owned_files_itself(repo: Path) -> None:
    assert taskfs("init", "--hooks").code == 0
    commit_file(repo, "shared.txt", "Test User", "base\n")
    login_task(repo)
    git(repo, "checkout", "-q", "-b", "feature")
    commit_file(repo, "src/auth/login.py", "builder", "the owner's work\n")
    commit_file(repo, "shared.txt", "builder", "feature side\n")
    git(repo, "checkout", "-q", "main")
    commit_file(repo, "shared.txt", "Test User", "main side\n")
    assert run_git(repo, "merge", "-q", "feature") != 0  # conflict in shared.txt
    write(repo, "shared.txt", "resolved\n")
    git(repo, "add", "shared.txt")
    assert run_git(repo, "commit", "-q", "--no-edit", agent="intruder") == 0
    assert len(git(repo, "log", "-1", "--format=%P").split()) == 2

    git(repo, "reset", "-q", "--hard", "HEAD~1")
    assert run_git(repo, "merge", "-q", "feature") != 0
    write(repo, "shared.txt", "resolved\n")
    write(repo, "src/auth/login.py", "the merger's own edit\n")
    git(repo, "add", "shared.txt", "src/auth/login.py")
    assert run_git(repo, "commit", "-q", "--no-edit", agent="intruder") == 1
    assert run_git(repo, "commit", "-q", "--no-edit", agent="builder") == 0


def test_init_hooks_is_idempotent_and_respects_core_hooks_path(repo: Path) -> None:
    git(repo, "config", "core.hooksPath", "githooks")
    first = taskfs("init", "--hooks", "--json")
    hook = repo / "githooks" / "pre-commit"
    assert first.json["hook"]["path"] == str(hook)
    text = hook.read_text()
    second = taskfs("init", "--hooks")
    assert second.code == 0
    assert "kept" in second.stdout
    assert hook.read_text() == text
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()


def test_init_hooks_keeps_an_existing_hook_and_runs_it_first(repo: Path) -> None:
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    theirs = hooks / "pre-commit"
    theirs.write_text('#!/bin/sh\necho ran >> "$(git rev-parse --show-toplevel)/ran.log"\n'
                      'test ! -f block\n')  # fmt: skip
    theirs.chmod(0o755)
    result = taskfs("init", "--hooks", "--json")
    assert result.json["hook"]["chained"] == str(hooks / "pre-commit.pre-taskfs")
    assert "echo ran" in (hooks / "pre-commit.pre-taskfs").read_text()

    write(repo, "free.txt")
    git(repo, "add", "free.txt")
    assert run_git(repo, "commit", "-q", "-m", "free", agent="someone") == 0
    assert (repo / "ran.log").read_text() == "ran\n"
    write(repo, "block")
    write(repo, "free.txt", "more\n")
    assert run_git(repo, "commit", "-q", "-am", "blocked by their hook", agent="someone") == 1

    (repo / "block").unlink()
    assert taskfs("init", "--hooks").code == 0  # ours now: rewritten, not chained twice
    assert "echo ran" in (hooks / "pre-commit.pre-taskfs").read_text()


def test_init_hooks_refuses_when_it_cannot_keep_the_existing_hook(repo: Path) -> None:
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (hooks / "pre-commit.pre-taskfs").write_text("#!/bin/sh\nexit 0\n")
    result = taskfs("init", "--hooks", "--json")
    assert result.code == 1
    assert result.codes == ["hook_exists"]
    assert (hooks / "pre-commit").read_text() == "#!/bin/sh\nexit 0\n"


def test_hook_falls_back_to_taskfs_on_path_and_says_when_there_is_none(repo: Path) -> None:
    assert taskfs("init", "--hooks").code == 0
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(hook.read_text().replace(sys.executable, str(repo / "gone" / "python")))
    write(repo, "free.txt")
    git(repo, "add", "free.txt")
    env = {**os.environ, "PATH": "/usr/bin:/bin", "TASKFS_AGENT": "someone"}
    proc = subprocess.run(["git", "commit", "-q", "-m", "x"], cwd=repo, env=env,
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert proc.returncode == 1
    assert "taskfs is not installed" in proc.stderr


# -- the pre-commit framework's hook definitions ---------------------------------------


def test_pre_commit_hook_definitions_name_real_commands() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    by_id = {hook["id"]: hook for hook in hooks}
    assert set(by_id) == {"taskfs-guard", "taskfs-validate", "taskfs-lint"}
    for hook in hooks:
        assert hook["language"] == "python"
        program, command, *_options = hook["entry"].split()
        assert program == "taskfs"
        assert taskfs(command, "--help").code == 0
    assert by_id["taskfs-guard"]["pass_filenames"] is False
    assert by_id["taskfs-guard"]["always_run"] is True
