"""`taskfs review`, `show --format markdown` and `log` in real repositories with branches."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import check, git, send, submit, taskfs, taskfs_process, write_envelope

LOGIN_CHECK = "test -f src/auth/login.py && echo '3 passed in 0.02s'"
LOGIN = {
    "id": "login-fix",
    "filesAndInterfaces": ["src/auth/login.py", "tests/test_login.py"],
    "acceptanceCheck": {"passFailCommand": LOGIN_CHECK, "endToEndVerification": "Log in."},
}
SIGNUP = {
    "id": "signup-fix",
    "objective": "Refuse sign-ups with an empty e-mail address and say why.",
    "filesAndInterfaces": ["src/auth/signup.py"],
    "acceptanceCheck": {"passFailCommand": "true", "endToEndVerification": "Sign up empty."},
}


def submit_both(repo: Path) -> None:
    first = write_envelope(repo / "login.yaml", **LOGIN)
    second = write_envelope(repo / "signup.yaml", **SIGNUP)
    result = taskfs("new", str(first), str(second), "--agent", "planner", "--json")
    assert result.code == 0, result.stdout
    first.unlink()
    second.unlink()


@pytest.fixture
def branch(repo: Path) -> Path:
    """main holds one task; the branch `feature` adds two, completes one with evidence, and
    edits the envelope main already had (a rule no commit may break)."""
    submit(repo, id="legacy", filesAndInterfaces=["src/legacy.py"])
    git(repo, "checkout", "-q", "-b", "feature")
    submit_both(repo)
    assert taskfs("claim", "login-fix", "--agent", "builder").code == 0
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "login.py").write_text(
        "def login(password):\n    return bool(password)\n"
    )
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "the fix")  # only committed work completes (issue 16)
    check("login-fix")
    done = taskfs(
        "complete", "login-fix", "--agent", "builder", "--artifact", "fix=src/auth/login.py"
    )
    assert done.code == 0, done.stdout + done.stderr
    envelope = repo / "tasks" / "legacy" / "envelope.yaml"
    envelope.write_text(envelope.read_text().replace("Fix the login bug", "Fix every bug"))
    git(repo, "commit", "-q", "-am", "reword legacy")
    return repo


def test_review_names_every_change_of_the_branch_and_fails_on_a_broken_rule(branch: Path) -> None:
    result = taskfs_process("review", "main..HEAD", cwd=branch)
    assert result.code == 1, result.stderr
    out = result.stdout
    assert out.startswith("## taskfs review of `main..HEAD`")
    assert "6 commits: 2 tasks added, 4 transitions, 1 acceptance run, 0 messages." in out
    assert "#### `login-fix` (now completed), by planner" in out
    assert "#### `signup-fix` (now submitted), by planner" in out
    assert "| `login-fix` | (new) → submitted | planner |" in out
    assert "| `login-fix` | submitted → working | builder |" in out
    assert "| `login-fix` | working → completed | builder |" in out
    assert f"✅ `login-fix` **pass** `{LOGIN_CHECK}`" in out
    assert "3 passed in 0.02s" in out
    assert "- `ledger_file_edited` `tasks/legacy/envelope.yaml`" in out
    assert "- `check_cannot_fail` task `signup-fix`" in out
    assert "legacy" not in out.split("### Tasks added")[1]  # it was added before the range

    doc = taskfs("review", "main..HEAD", "--json").json
    assert doc["ok"] is False
    assert doc["range"]["commits"] == 6
    assert [t["id"] for t in doc["tasks"]] == ["login-fix", "signup-fix"]
    assert [(t["task"], t["from"], t["state"]) for t in doc["transitions"]] == [
        ("login-fix", None, "submitted"),
        ("signup-fix", None, "submitted"),
        ("login-fix", "submitted", "working"),
        ("login-fix", "working", "completed"),
    ]
    assert [(e["task"], e["verdict"], e["exitCode"]) for e in doc["evidence"]] == [
        ("login-fix", "pass", 0)
    ]
    assert [(e["code"], e["path"]) for e in doc["errors"]] == [
        ("ledger_file_edited", "tasks/legacy/envelope.yaml")
    ]
    assert [(w["code"], w["subject"]) for w in doc["warnings"]] == [
        ("check_cannot_fail", "signup-fix")
    ]


def test_the_default_range_is_the_branch_against_main(branch: Path) -> None:
    explicit = taskfs("review", "main..HEAD", "--json").json
    default = taskfs("review", "--json").json
    assert default["range"]["commits"] == 6
    assert default["tasks"] == explicit["tasks"]
    assert default["transitions"] == explicit["transitions"]


def test_the_default_range_follows_the_upstream_when_there_is_one(branch: Path) -> None:
    git(branch, "branch", "reviewed", "HEAD~3")
    git(branch, "branch", "--set-upstream-to", "reviewed")
    doc = taskfs("review", "--json").json
    assert doc["range"]["commits"] == 3
    assert doc["tasks"] == []
    assert [(t["task"], t["state"]) for t in doc["transitions"]] == [("login-fix", "completed")]
    assert len(doc["evidence"]) == 1


def test_a_single_revision_means_from_there_to_head(branch: Path) -> None:
    doc = taskfs("review", "HEAD~1", "--json").json
    assert doc["range"]["revisions"] == "HEAD~1..HEAD"
    assert doc["range"]["commits"] == 1
    assert doc["tasks"] == doc["transitions"] == doc["evidence"] == []


def test_a_clean_range_passes(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    submit(repo, id="fine")
    result = taskfs("review", "main..feature")
    assert result.code == 0, result.stdout
    assert "✅ nothing to fix" in result.stdout
    assert "#### `fine` (now submitted)" in result.stdout


def test_messages_in_the_range_are_listed(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    submit(repo, id="asks")
    assert taskfs("claim", "asks", "--agent", "builder").code == 0
    send("asks", "builder", "planner", "Which | database?", status="needs_input")
    doc = taskfs("review", "main..HEAD", "--json").json
    assert [(m["from"], m["to"], m["status"]) for m in doc["messages"]] == [
        ("builder", "planner", "needs_input")
    ]
    out = taskfs("review", "main..HEAD").stdout
    assert "| `asks` |" in out
    assert "Which \\| database?" in out


def test_review_describes_the_checkout_and_says_so_when_the_range_ends_elsewhere(
    repo: Path,
) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    submit(repo, id="elsewhere")
    git(repo, "checkout", "-q", "main")
    doc = taskfs("review", "main..feature", "--json").json
    assert doc["range"]["tipIsCheckout"] is False
    assert [t["id"] for t in doc["tasks"]] == ["elsewhere"]
    assert doc["tasks"][0]["state"] is None  # the checkout has no such task
    assert "which is not `feature`" in taskfs("review", "main..feature").stdout


@pytest.mark.parametrize(
    "spec", ["nosuch..HEAD", "main..nosuch", "--output={out}", "main..HEAD --oops", "main....x"]
)
def test_a_range_git_does_not_know_is_refused(repo: Path, tmp_path: Path, spec: str) -> None:
    out = tmp_path / "written-by-git"
    result = taskfs("review", "--json", "--", spec.format(out=out))
    assert result.code == 1
    assert result.codes == ["range_invalid"]
    assert not out.exists()  # an option smuggled in as a range never reaches git


def test_without_main_or_an_upstream_the_last_ledger_commits_are_reviewed(repo: Path) -> None:
    git(repo, "branch", "-m", "main", "trunk")
    task = submit(repo)
    result = taskfs("review", "--json")
    assert result.code == 0, result.stdout
    assert [t["id"] for t in result.json["tasks"]] == [task]
    assert "ledger commits" in result.json["range"]["base"]
    assert taskfs("review", "trunk", "--json").code == 0


def test_on_main_itself_review_picks_the_last_ledger_commits(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    result = taskfs("review", "--json")  # main..HEAD would be empty here
    assert result.code == 0, result.stdout
    assert [t["id"] for t in result.json["tasks"]] == [task]
    assert len(result.json["transitions"]) == 2


def test_with_no_ledger_commit_to_review_a_range_must_be_named(tmp_path: Path) -> None:
    bare = tmp_path / "plain"
    bare.mkdir()
    git(bare, "init", "-q", "-b", "trunk")
    (bare / "README").write_text("x\n")
    git(bare, "add", "README")
    git(bare, "commit", "-q", "-m", "first")
    result = taskfs("review", "--json", cwd=bare)
    assert result.codes == ["range_invalid"]
    assert "HEAD~5..HEAD" in result.json["errors"][0]["message"]


def test_untrusted_text_cannot_break_the_markdown(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    submit(
        repo,
        id="hostile",
        objective="Render <script>alert(1)</script> | and `ticks` safely\nplease.",
        boundaries="Do not <b>bold</b>.",
    )
    out = taskfs("review", "main..HEAD").stdout
    assert "<script>" not in out
    assert "\\<script\\>alert(1)\\</script\\> \\| and \\`ticks\\` safely" in out
    shown = taskfs("show", "hostile", "--format", "markdown").stdout
    assert "<script>" not in shown
    assert "<b>" not in shown


def test_show_markdown_has_contract_state_history_evidence_and_artifacts(branch: Path) -> None:
    result = taskfs("show", "login-fix", "--format", "markdown")
    assert result.code == 0
    out = result.stdout
    assert out.startswith("### Task `login-fix`: completed\n\n> Fix the login bug")
    assert "| from → to | planner → builder |" in out
    assert "| held by | builder |" in out
    assert "- **Owns:** `src/auth/login.py`, `tests/test_login.py`" in out
    assert f"- **Acceptance check:** `{LOGIN_CHECK}`" in out
    history = out.split("#### History")[1].split("#### Evidence")[0]
    assert [line.split(" | ")[1] for line in history.strip().splitlines()[2:]] == [
        "submitted",
        "working",
        "completed",
    ]
    evidence = out.split("#### Evidence")[1]
    assert "1 acceptance run: 1 passed, 0 did not; the latest passed ✅" in evidence
    assert f"✅ **pass** `{LOGIN_CHECK}` · exit 0 · script" in evidence
    assert "<details><summary>output</summary>" in evidence
    assert "- **fix**: `src/auth/login.py`" in out.split("#### Artifacts")[1]
    doc = taskfs("show", "login-fix", "--format", "markdown", "--json").json
    assert doc["state"] == "completed"
    assert [e["verdict"] for e in doc["evidence"]] == ["pass"]


def test_show_markdown_of_a_task_with_no_evidence_says_so(repo: Path) -> None:
    submit(repo, id="fresh", dependsOn=["later"])
    out = taskfs("show", "fresh", "--format", "markdown").stdout
    assert "_No acceptance run recorded._" in out
    assert "| depends on | `later` (not in the ledger) |" in out
    assert taskfs("show", "nope", "--format", "markdown", "--json").codes == ["task_not_found"]


def test_log_is_a_timeline_of_transitions_evidence_and_messages(branch: Path) -> None:
    send("login-fix", "planner", "builder", "Thanks!", status="update")
    result = taskfs("log", "login-fix")
    lines = result.stdout.splitlines()
    assert [line.split()[1] for line in lines] == [
        "submitted",
        "working",
        "evidence",
        "completed",
        "message",
    ]
    assert f"evidence pass   by builder: script: {LOGIN_CHECK} · exit 0" in result.stdout
    doc = taskfs("log", "login-fix", "--json").json
    assert [row["kind"] for row in doc["timeline"]] == [
        "transition",
        "transition",
        "evidence",
        "transition",
        "message",
    ]
    assert [row["state"] for row in doc["history"]] == ["submitted", "working", "completed"]


def test_a_transition_that_lost_a_fork_is_shown_superseded(repo: Path, tmp_path: Path) -> None:
    submit(repo, id="contested", to=None)
    base = git(repo, "rev-parse", "HEAD")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(repo), str(other))
    assert taskfs("claim", "contested", "--agent", "alice").code == 0
    assert taskfs("claim", "contested", "--agent", "bob", cwd=other).code == 0
    git(repo, "pull", "-q", "--no-rebase", "--no-edit", str(other), "main")
    doc = taskfs("review", f"{base}..HEAD", "--json").json
    claims = {t["by"]: t["superseded"] for t in doc["transitions"]}
    assert sorted(claims) == ["alice", "bob"]
    assert sorted(claims.values()) == [False, True]
    loser = next(by for by, lost in claims.items() if lost)
    out = taskfs("review", f"{base}..HEAD").stdout
    assert f"| `contested` | ~~submitted → working~~ (superseded) | {loser} |" in out
