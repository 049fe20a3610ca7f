"""An unsandboxed check cannot plant code that later taskfs commands run (issue 28, item 2).

The acceptance command runs without a sandbox (`--sandbox off`, or `auto` where bubblewrap is
missing) and plants, in the real `.git`, everything git would run later with the operator's
whole environment: `core.fsmonitor`, hooks (and a `core.hooksPath` full of them), `core.pager`,
an alias, clean/smudge/process filters with `info/attributes` asking for them, an
`include.path`, `core.sshCommand`. Then `claim`, `sync` and `complete` run, with a secret in
the environment: nothing planted runs (a marker file each would write stays absent, the secret
never leaks), and the check's answer and evidence name what it changed, which taskfs undid.
A check run in the sandbox cannot plant at all (its git dir is read-only there).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from taskfs.core import yamlio
from tests.cli.test_containment import needs_bwrap
from tests.helpers import git, taskfs
from tests.remotes import clone, make_remote, new_task

SECRET = "s3cret-token-for-the-planted-code"


def plant_script(marker: Path) -> str:
    """A shell script planting every way git runs a command, each writing `marker`."""
    say = f'echo "$0 $TOKEN" >> {marker}'
    hook = f"#!/bin/sh\n{say}\n"
    hooks = (
        "pre-commit",
        "post-commit",
        "pre-push",
        "post-checkout",
        "post-merge",
        "reference-transaction",
        "pre-auto-gc",
        "post-rewrite",
        "post-index-change",
    )
    lines = ["set -e", "g=$(git rev-parse --git-common-dir)", 'mkdir -p "$g/hooks" "$g/evil"']
    for name in hooks:
        lines += [f"cat > \"$g/hooks/{name}\" <<'EOF'\n{hook}EOF", f'chmod +x "$g/hooks/{name}"']
        lines += [f"cat > \"$g/evil/{name}\" <<'EOF'\n{hook}EOF", f'chmod +x "$g/evil/{name}"']
    run = f"sh -c '{say}; cat'"
    lines += [
        f"git config core.fsmonitor '{say}; false'",
        f'git config core.pager "{run}"',
        f"git config alias.lol '!{say}'",
        f'git config filter.evil.clean "{run}"',
        f'git config filter.evil.smudge "{run}"',
        f"git config filter.evil.process '{say}'",
        "git config filter.evil.required true",
        f"git config core.sshCommand '{say}; ssh'",
        f"git config diff.external '{say}'",
        "echo '* filter=evil diff=evil' >> \"$g/info/attributes\"",
        f"git config diff.evil.textconv '{say}; cat'",
        f"printf '[core]\\n\\tfsmonitor = {say}\\n' > \"$g/more.config\"",
        'git config include.path "$g/more.config"',
        "exit 0",
    ]
    return "\n".join(lines) + "\n"


def planted(marker: Path) -> str:
    return marker.read_text() if marker.exists() else ""


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clone of a bare remote, taskfs initialised, the secret in the environment."""
    remote = make_remote(tmp_path)
    here = clone(str(remote), tmp_path / "work")
    monkeypatch.chdir(here)
    monkeypatch.setenv("TOKEN", SECRET)
    return here


def _task_planting(work: Path, marker: Path) -> str:
    (work / "plant.sh").write_text(plant_script(marker))
    (work / "src").mkdir()
    (work / "src" / "login.py").write_text("ok\n")
    git(work, "add", "plant.sh", "src")
    git(work, "commit", "-q", "-m", "a check that plants")
    acceptance = {"passFailCommand": "sh plant.sh", "endToEndVerification": "n/a"}
    task = new_task(work, id="planter", acceptanceCheck=acceptance, filesAndInterfaces=["src/**"])
    assert taskfs("claim", task, "--agent", "builder").code == 0
    return task


def test_nothing_an_unsandboxed_check_plants_runs_later(work: Path, tmp_path: Path) -> None:
    marker = tmp_path / "planted-ran"
    task = _task_planting(work, marker)
    later = new_task(work, id="later", filesAndInterfaces=["docs/**"])
    git_dir = work / ".git"
    config_before = (git_dir / "config").read_bytes()
    hooks_before = sorted(p.name for p in (git_dir / "hooks").iterdir())

    result = taskfs("check", task, "--sandbox", "off", "--agent", "builder", "--json")
    assert result.code == 0, result.stdout + result.stderr
    assert result.json["verdict"] == "pass"
    # The answer names what was changed and undone.
    warnings = result.json["warnings"]
    assert {w["code"] for w in warnings} == {"git_settings_changed"}
    changed = {w["path"] for w in warnings}
    assert {".git/config", ".git/hooks/pre-push", ".git/info/attributes"} <= changed
    assert "git_settings_changed" in taskfs("check", task, "--sandbox", "off").stderr
    # So does the evidence, committed.
    evidence = yamlio.load((work / result.json["evidence"]).read_bytes())
    assert isinstance(evidence, dict)
    assert ".git/config" in {c["path"] for c in evidence["gitChanges"]}
    # Undone: git's own files are as they were before the run.
    assert (git_dir / "config").read_bytes() == config_before
    assert sorted(p.name for p in (git_dir / "hooks").iterdir()) == hooks_before
    assert not (git_dir / "info" / "attributes").exists()

    assert taskfs("claim", later, "--agent", "builder").code == 0
    synced = taskfs("sync", "--json")
    assert synced.code == 0, synced.stdout + synced.stderr
    done = taskfs("complete", task, "--agent", "builder", "--json")
    assert done.code == 0, done.stdout
    assert taskfs("sync").code == 0
    assert planted(marker) == ""  # nothing planted ran, so the secret went nowhere


def test_settings_planted_behind_taskfs_back_are_pinned_off(work: Path, tmp_path: Path) -> None:
    """What a process the check left behind (or anyone who can write .git) plants after it
    ended: git still runs no fsmonitor, hook, pager or alias for taskfs."""
    marker = tmp_path / "planted-ran"
    task = new_task(work, id="login", filesAndInterfaces=["src/**"])
    say = f'echo "$0 $TOKEN" >> {marker}'
    git(work, "config", "core.fsmonitor", f"{say}; false")
    git(work, "config", "core.pager", f"{say}; cat")
    git(work, "config", "alias.lol", f"!{say}")
    hooks = work / "elsewhere-hooks"
    hooks.mkdir()
    for name in ("pre-push", "post-checkout", "reference-transaction", "post-merge"):
        for folder in (hooks, work / ".git" / "hooks"):
            (folder / name).write_text(f"#!/bin/sh\n{say}\n")
            os.chmod(folder / name, 0o755)
    git(work, "config", "core.hooksPath", str(hooks))
    (work / "src").mkdir()
    (work / "src" / "auth").mkdir()
    (work / "src" / "auth" / "login.py").write_text("x\n")
    git(work, "add", "src")
    git(work, "commit", "-q", "--no-verify", "-m", "the work")
    assert SECRET in planted(marker)  # plain git runs what was planted, with the secret
    marker.unlink(missing_ok=True)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    assert taskfs("check", task, "--agent", "builder", "--fresh").code == 0
    assert taskfs("complete", task, "--agent", "builder").code == 0
    assert taskfs("sync").code == 0
    assert taskfs("audit").code == 0
    assert planted(marker) == ""


def test_auto_without_bubblewrap_says_how_to_get_it(
    work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "planted-ran"
    task = _task_planting(work, marker)
    # A PATH with the tools the check and taskfs need, and no bwrap.
    tools = tmp_path / "no-bwrap-here"
    tools.mkdir()
    for tool in ("sh", "git", "env", "cat", "mkdir", "chmod", "printf", "setpriv", "echo"):
        found = [Path(d) / tool for d in ("/usr/bin", "/bin") if (Path(d) / tool).exists()]
        if found:
            (tools / tool).symlink_to(found[0])
    monkeypatch.setenv("PATH", str(tools))
    result = taskfs("check", task, "--sandbox", "auto", "--agent", "builder")
    assert result.code == 0, result.stderr
    assert "apt-get install bubblewrap" in result.stderr
    assert "git_settings_changed" in result.stderr
    assert planted(marker) == ""


@needs_bwrap
def test_in_the_sandbox_the_check_cannot_plant_at_all(work: Path, tmp_path: Path) -> None:
    marker = tmp_path / "planted-ran"
    task = _task_planting(work, marker)
    config_before = (work / ".git" / "config").read_bytes()
    result = taskfs("check", task, "--sandbox", "on", "--agent", "builder", "--json")
    assert result.json["verdict"] == "fail"  # `git config` was refused: read-only
    assert result.json["warnings"] == []
    assert (work / ".git" / "config").read_bytes() == config_before
    assert planted(marker) == ""
