"""What the README, docs/ and the ecosystem files promise: the pre-commit hooks and the example
CI workflow run real taskfs commands that work, and shell completion answers. The docs checked
against the code are in tests/test_docs_reference.py."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from taskfs.core import yamlio
from taskfs.core.intake import REQUIRED_KEYS
from tests.helpers import IDENTITY, git, submit, taskfs, taskfs_process, write_envelope

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def load_yaml(path: Path) -> Any:
    return yamlio.load(path.read_bytes())


def test_the_pre_commit_hooks_run_taskfs_on_the_right_files(repo: Path) -> None:
    hooks = {hook["id"]: hook for hook in load_yaml(ROOT / ".pre-commit-hooks.yaml")}
    assert set(hooks) == {"taskfs-guard", "taskfs-validate", "taskfs-lint"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["entry"].startswith("taskfs ")
    lint_files = re.compile(hooks["taskfs-lint"]["files"])
    lint_exclude = re.compile(hooks["taskfs-lint"]["exclude"])
    assert lint_files.search("tasks/fix-login/envelope.yaml")
    assert lint_files.search("tasks/drop-in.yaml")
    assert lint_exclude.search("tasks/drop-in.refused.yaml")
    assert not lint_files.search("tasks/fix-login/status/0001-submitted-abcdefgh.yaml")
    assert re.search(hooks["taskfs-validate"]["files"], "tasks/x/status/0001-a-b.yaml")

    submit(repo, id="good")
    submit(repo, id="weak", boundaries="none", filesAndInterfaces=["src/weak.py"])
    validate = shlex.split(hooks["taskfs-validate"]["entry"])[1:]
    assert taskfs(*validate).code == 0
    lint = shlex.split(hooks["taskfs-lint"]["entry"])[1:]
    assert taskfs(*lint, "tasks/good/envelope.yaml").code == 0
    assert taskfs(*lint, "tasks/weak/envelope.yaml").code == 1


def test_the_example_workflow_gates_a_pull_request(tmp_path: Path) -> None:
    """Run the workflow's own scripts in a clone laid out as actions/checkout leaves it."""
    workflow = load_yaml(ROOT / "examples" / "github-actions" / "taskfs.yml")
    assert set(workflow["on"]) == {"pull_request"}
    steps = workflow["jobs"]["ledger"]["steps"]
    scripts = [
        (s["name"], s["run"], s.get("env", {}))
        for s in steps
        if "taskfs " in s.get("run", "") and "pip install" not in s["run"]
    ]
    lint_step = "Lint the contracts the pull request adds"
    assert [name for name, _run, _env in scripts] == ["Validate", "Audit", lint_step, "Review"]

    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    (origin / "README.md").write_text("a project\n")
    git(origin, "add", "README.md")
    git(origin, "commit", "-q", "-m", "initial")
    assert taskfs_process("init", cwd=origin).code == 0
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    git(clone, "checkout", "-q", "-b", "pr")
    envelope = write_envelope(tmp_path / "plan.yaml", id="from-the-pr", boundaries="n/a")
    assert taskfs_process("new", str(envelope), cwd=clone).code == 0

    def run(script: str, env: dict[str, str], summary: Path) -> subprocess.CompletedProcess[str]:
        values = {k: "main" if "base_ref" in str(v) else str(v) for k, v in env.items()}
        return subprocess.run(
            ["bash", "-e", "-c", script],
            cwd=clone,
            capture_output=True,
            text=True,
            env={
                **os.environ,
                **IDENTITY,
                **values,
                "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
                "GITHUB_STEP_SUMMARY": str(summary),
            },
            check=False,
        )

    summary = tmp_path / "summary.md"
    results = {name: run(script, env, summary) for name, script, env in scripts}
    # The pull request's contract is weak (boundaries "n/a"): the lint of what it adds fails
    # the job and says why (issue 38); the others pass.
    linted = results.pop(lint_step)
    assert linted.returncode == 1, linted.stdout + linted.stderr
    assert "warning[boundaries_vague]" in linted.stdout
    assert all(r.returncode == 0 for r in results.values()), results
    review = summary.read_text()
    assert "#### `from-the-pr` (now submitted)" in review
    assert "`boundaries_vague` task `from-the-pr`" in review

    # A pull request that rewrites a ledger file fails the gate.
    target = next((clone / "tasks" / "from-the-pr" / "status").iterdir())
    target.write_text(target.read_text().replace("planner", "someone-else"))
    git(clone, "commit", "-q", "-am", "rewrite history")
    _name, script, env = next(step for step in scripts if step[0] == "Review")
    failed = run(script, env, tmp_path / "summary-2.md")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "ledger_file_edited" in (tmp_path / "summary-2.md").read_text()


def test_shell_completion_completes_commands(tmp_path: Path) -> None:
    script = taskfs_process(cwd=tmp_path, env={"_TASKFS_COMPLETE": "bash_source"})
    assert script.code == 0
    assert "_taskfs_completion()" in script.stdout
    answer = taskfs_process(
        cwd=tmp_path,
        env={"_TASKFS_COMPLETE": "bash_complete", "COMP_WORDS": "taskfs re", "COMP_CWORD": "1"},
    )
    assert answer.stdout.split() == [
        "plain,read",
        "plain,ready",
        "plain,reassign",
        "plain,refuse",
        "plain,retry",
        "plain,review",
    ]
    review = (ROOT / "docs" / "review.md").read_text(encoding="utf-8")
    assert '"$(_TASKFS_COMPLETE=bash_source taskfs)"' in review


def test_the_readme_envelope_is_one_taskfs_new_takes(repo: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    tour = readme.split("## A short tour", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", tour, re.S)
    assert block, "the README shows no envelope in its tour"
    text = block.group(1)
    assert tour.index("taskfs new") < tour.index("```yaml")  # beside the command that takes it
    assert len(text.splitlines()) <= 16
    envelope = yamlio.load(text.encode())
    assert {"id", "from", "to", "dependsOn"} <= set(envelope)
    assert set(envelope) >= REQUIRED_KEYS
    path = repo / "plan" / "login.yaml"
    path.parent.mkdir()
    path.write_text(text)
    assert taskfs("validate", str(path)).code == 0
    made = taskfs("new", str(path), "--json")
    assert made.code == 0, made.stdout
    assert made.json["id"] == "login-fix"
    shown = taskfs("show", "login-fix", "--json").json["envelope"]
    assert (shown["from"], shown["to"], shown["dependsOn"]) == (
        "planner",
        "builder",
        ["user-model"],
    )


def test_new_help_points_to_the_schema_init_writes(repo: Path) -> None:
    helped = taskfs("new", "--help").stdout
    schema = re.search(r"\.taskfs/schema/[\w.]+\.json", " ".join(helped.split()))
    assert schema, helped
    assert (repo / schema.group(0)).is_file()  # taskfs init (the repo fixture) wrote it
    readme = (ROOT / "README.md").read_text()
    assert schema.group(0) in readme
