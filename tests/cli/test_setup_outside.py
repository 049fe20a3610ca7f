"""`taskfs setup` for hosts that do not share the shell's PATH (issue 18): the entries name the
running taskfs by its absolute path, setup warns plainly when it cannot find one, says that
Codex reads a project's config only when the project is trusted, and honours
CLAUDE_CONFIG_DIR for the user-level Claude files."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import taskfs

VENV_TASKFS = Path(sys.executable).parent / "taskfs"
ROOT = Path(__file__).resolve().parents[2]


def _run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        cwd=cwd,
        env={**os.environ, "PATH": "/usr/bin:/bin", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_console_script_that_runs_is_what_the_host_gets(repo: Path, tmp_path: Path) -> None:
    # A taskfs reached through a folder of its own (pipx's ~/.local/bin is one), not on PATH.
    bin_dir = tmp_path / "tools bin"
    bin_dir.mkdir()
    link = bin_dir / "taskfs"
    link.symlink_to(VENV_TASKFS)
    proc = _run([str(link), "setup", "claude", "--dry-run", "--json"], repo)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["command"] == str(link)
    assert not any(note.startswith("warning:") for note in doc["notes"])
    files = {f["shown"]: json.loads(f["content"]) for f in doc["files"]}
    assert files[".mcp.json"]["mcpServers"]["taskfs"]["command"] == str(link)
    hooks = files[".claude/settings.json"]["hooks"]
    start = hooks["SessionStart"][0]["hooks"][0]["command"]
    # A hook is a shell command: the path with a space in it is quoted, and it runs.
    assert start == f"'{link}' prime --hook claude"
    ran = subprocess.run(
        ["sh", "-c", start],
        input="{}",
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 0
    # ...and --remove still knows the hooks as taskfs's own.
    assert _run([str(link), "setup", "claude"], repo).returncode == 0
    assert _run([str(link), "setup", "claude", "--remove"], repo).returncode == 0
    assert not (repo / ".mcp.json").exists()
    assert not (repo / ".claude" / "settings.json").exists()


def test_no_taskfs_to_be_found_is_said_plainly(repo: Path) -> None:
    # The base interpreter (no taskfs script beside it) running taskfs from the source tree.
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    if not base.exists() or (base.parent / "taskfs").exists():
        pytest.skip(f"no base interpreter without a taskfs beside it ({base})")
    path = os.pathsep.join([str(ROOT), *site.getsitepackages()])
    proc = _run(
        [str(base), "-m", "taskfs", "setup", "codex", "--dry-run", "--json"], repo, PYTHONPATH=path
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["command"] == "taskfs"
    assert doc["notes"][0].startswith("warning: taskfs is not on PATH")
    text = _run([str(base), "-m", "taskfs", "setup", "codex", "--dry-run"], repo, PYTHONPATH=path)
    assert "warning: taskfs is not on PATH" in text.stdout


def test_codex_project_setup_notes_that_the_project_must_be_trusted(repo: Path) -> None:
    doc = taskfs("setup", "codex", "--dry-run", "--json").json
    assert any("only when the project is trusted" in note for note in doc["notes"])
    assert f'[projects."{repo}"] trust_level = "trusted"' in " ".join(doc["notes"])
    text = taskfs("setup", "codex", "--dry-run").stdout
    assert "note: Codex loads a project's .codex/config.toml only when" in text
    user = taskfs("setup", "codex", "--user", "--dry-run", "--json").json
    assert not any("trusted" in note for note in user["notes"])


def test_user_setup_honours_claude_config_dir(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path(os.environ["HOME"])
    config_dir = home / ".config" / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config_dir))
    result = taskfs("setup", "claude", "--user", "--agent", "builder", "--json")
    assert result.code == 0, result.stdout + result.stderr
    assert [f["shown"] for f in result.json["files"]] == [
        "~/.config/claude/.claude.json",
        "~/.config/claude/settings.json",
    ]
    servers = json.loads((config_dir / ".claude.json").read_text())["mcpServers"]
    assert servers["taskfs"]["args"] == ["mcp"]
    settings = json.loads((config_dir / "settings.json").read_text())
    assert settings["env"] == {"TASKFS_AGENT": "builder"}
    assert not (home / ".claude.json").exists()
    assert not (home / ".claude").exists()
    assert taskfs("setup", "claude", "--user", "--remove").code == 0
    assert not (config_dir / "settings.json").exists()
