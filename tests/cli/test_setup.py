"""`taskfs setup claude|codex`: real configuration files, parsed back the way the hosts read
them, merged with what a user already has, idempotent, and undone byte for byte."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parse, through tomlkit
    import tomlkit as tomllib  # type: ignore[no-redef]

from tests.helpers import taskfs

# In-process, the running taskfs is the console script installed beside this Python.
TASKFS = str(Path(sys.executable).parent / "taskfs")
CLAUDE_PROJECT = (".mcp.json", ".claude/settings.json")
CLAUDE_USER = (".claude.json", ".claude/settings.json")


def home() -> Path:
    return Path(os.environ["HOME"])


def setup(*args: str) -> dict[str, Any]:
    result = taskfs("setup", *args, "--json")
    assert result.code == 0, result.stdout + result.stderr
    doc: dict[str, Any] = result.json
    return doc


def contents(doc: dict[str, Any]) -> dict[str, Any]:
    """Each file's content as the host parses it, by its shown path."""
    parsed: dict[str, Any] = {}
    for f in doc["files"]:
        text = f["content"]
        parsed[f["shown"]] = tomllib.loads(text) if f["format"] == "toml" else json.loads(text)
    return parsed


def claude_hooks(settings: dict[str, Any]) -> dict[str, list[str]]:
    return {
        event: [h["command"] for group in groups for h in group["hooks"]]
        for event, groups in settings["hooks"].items()
    }


def snapshot(*roots: Path) -> dict[str, bytes]:
    """Every file but git's and taskfs's own (its backups live under ~/.config/taskfs)."""
    return {
        str(p): p.read_bytes()
        for root in roots
        for p in sorted(root.rglob("*"))
        if p.is_file() and not {".git", ".config"} & set(p.parts)
    }


@pytest.mark.parametrize("scope", ["--project", "--user"])
def test_a_dry_run_prints_valid_configuration_and_writes_nothing(repo: Path, scope: str) -> None:
    before = snapshot(repo, home())
    claude = setup("claude", scope, "--agent", "builder", "--dry-run")
    assert claude["dryRun"] is True
    assert [f["action"] for f in claude["files"]] == ["create", "create"]
    files = contents(claude)
    prefix = "" if scope == "--project" else "~/"
    names = CLAUDE_PROJECT if scope == "--project" else CLAUDE_USER
    server = files[prefix + names[0]]["mcpServers"]["taskfs"]
    assert server == {"command": TASKFS, "args": ["mcp"], "env": {"TASKFS_AGENT": "builder"}}
    settings = files[prefix + names[1]]
    assert claude_hooks(settings) == {
        "SessionStart": [f"{TASKFS} prime --hook claude --agent builder"],
        "PostToolUse": [f"{TASKFS} nudge --hook claude --agent builder"],
    }
    # The nudge runs after the tools progress is made with, not after every read.
    assert (
        settings["hooks"]["PostToolUse"][0]["matcher"] == "Edit|MultiEdit|Write|NotebookEdit|Bash"
    )
    assert settings["env"] == {"TASKFS_AGENT": "builder"}

    codex = setup("codex", scope, "--dry-run")
    (config,) = contents(codex).values()
    assert config["mcp_servers"]["taskfs"] == {"command": TASKFS, "args": ["mcp"]}
    assert [h["command"] for g in config["hooks"]["SessionStart"] for h in g["hooks"]] == [
        f"{TASKFS} prime --hook codex"
    ]
    assert config["hooks"]["PostToolUse"][0]["matcher"] == "Bash|apply_patch"
    assert "shell_environment_policy" not in config
    assert snapshot(repo, home()) == before

    text = taskfs("setup", "codex", scope, "--dry-run").stdout
    assert "would be created" in text
    toml_text = text.split(":\n", 1)[1]
    assert tomllib.loads(toml_text)["mcp_servers"]["taskfs"]["args"] == ["mcp"]


USER_CLAUDE_JSON = """{
    "numStartups": 12,
    "mcpServers": {
        "other": {"command": "other-server", "args": []}
    },
    "projects": {"/x": {"allowedTools": ["Bash"]}}
}
"""
USER_SETTINGS_JSON = """{
\t"model": "opus",
\t"hooks": {
\t\t"PostToolUse": [
\t\t\t{"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}
\t\t]
\t},
\t"env": {"EDITOR": "vim"}
}
"""
USER_CODEX_TOML = """# my Codex settings
model = "o3"  # the one I like

[mcp_servers.docs]
command = "docs-server"
args = ["--port", "1"]

[shell_environment_policy]
inherit = "core"
"""


def test_setup_merges_is_idempotent_and_remove_restores_byte_for_byte(repo: Path) -> None:
    (home() / ".claude").mkdir()
    (home() / ".codex").mkdir()
    originals = {
        home() / ".claude.json": USER_CLAUDE_JSON,
        home() / ".claude" / "settings.json": USER_SETTINGS_JSON,
        home() / ".codex" / "config.toml": USER_CODEX_TOML,
    }
    for path, text in originals.items():
        path.write_text(text)
    before = snapshot(repo, home())

    first = setup("claude", "--user", "--agent", "builder")
    assert first["changed"] is True
    claude_json = json.loads((home() / ".claude.json").read_text())
    assert claude_json["numStartups"] == 12
    assert claude_json["projects"] == {"/x": {"allowedTools": ["Bash"]}}
    assert set(claude_json["mcpServers"]) == {"other", "taskfs"}
    assert (home() / ".claude.json").read_text().startswith('{\n    "numStartups"')
    settings = json.loads((home() / ".claude" / "settings.json").read_text())
    assert settings["model"] == "opus"
    assert settings["env"] == {"EDITOR": "vim", "TASKFS_AGENT": "builder"}
    assert claude_hooks(settings)["PostToolUse"] == [
        "prettier --write",
        f"{TASKFS} nudge --hook claude --agent builder",
    ]
    assert (home() / ".claude" / "settings.json").read_text().startswith('{\n\t"model"')

    codex = setup("codex", "--user", "--agent", "builder")
    text = (home() / ".codex" / "config.toml").read_text()
    assert text.startswith('# my Codex settings\nmodel = "o3"  # the one I like\n')
    config = tomllib.loads(text)
    assert set(config["mcp_servers"]) == {"docs", "taskfs"}
    assert config["shell_environment_policy"] == {
        "inherit": "core",
        "set": {"TASKFS_AGENT": "builder"},
    }
    assert codex["files"][0]["action"] == "update"

    written = snapshot(repo, home())
    for host in ("claude", "codex"):
        again = setup(host, "--user", "--agent", "builder")
        assert again["changed"] is False
        assert {f["action"] for f in again["files"]} == {"unchanged"}
    assert snapshot(repo, home()) == written

    # Another agent name rewrites only taskfs's entries.
    renamed = setup("claude", "--user", "--agent", "reviewer")
    assert renamed["changed"] is True
    assert claude_hooks(json.loads((home() / ".claude" / "settings.json").read_text()))[
        "SessionStart"
    ] == [f"{TASKFS} prime --hook claude --agent reviewer"]

    for host in ("claude", "codex"):
        removed = setup(host, "--user", "--remove")
        assert {f["action"] for f in removed["files"]} == {"restore"}
    assert snapshot(repo, home()) == before
    assert setup("claude", "--user", "--remove")["changed"] is False


def test_remove_after_setup_of_nothing_leaves_nothing(repo: Path) -> None:
    before = snapshot(repo, home())
    setup("claude", "--project", "--agent", "builder")
    setup("codex", "--project")
    assert (repo / ".mcp.json").is_file()
    assert (repo / ".codex" / "config.toml").is_file()
    setup("claude", "--project", "--remove")
    setup("codex", "--project", "--remove")
    assert snapshot(repo, home()) == before
    assert not (repo / ".claude").exists()
    assert not (repo / ".codex").exists()


def test_a_file_changed_since_setup_loses_only_taskfs_entries(repo: Path) -> None:
    setup("claude", "--project", "--agent", "builder")
    path = repo / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    settings["permissions"] = {"allow": ["Bash(ls:*)"]}
    path.write_text(json.dumps(settings, indent=2) + "\n")

    removed = setup("claude", "--project", "--remove")
    actions = {f["shown"]: f["action"] for f in removed["files"]}
    assert actions == {".mcp.json": "delete", ".claude/settings.json": "update"}
    assert json.loads(path.read_text()) == {"permissions": {"allow": ["Bash(ls:*)"]}}


def test_codex_hooks_go_to_hooks_json_when_the_project_has_one(repo: Path) -> None:
    (repo / ".codex").mkdir()
    hooks = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}}
    (repo / ".codex" / "hooks.json").write_text(json.dumps(hooks))
    doc = setup("codex")
    files = contents(doc)
    assert "hooks" not in files[".codex/config.toml"]
    assert set(files[".codex/hooks.json"]["hooks"]) == {"Stop", "SessionStart", "PostToolUse"}


def test_a_file_that_does_not_parse_stops_setup_with_nothing_written(repo: Path) -> None:
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text("{ // comments are not JSON\n}\n")
    result = taskfs("setup", "claude", "--json")
    assert result.code == 1
    assert result.codes == ["host_config_invalid"]
    assert not (repo / ".mcp.json").exists()
    (repo / ".codex").mkdir()
    (repo / ".codex" / "config.toml").write_text("[mcp_servers\n")
    assert taskfs("setup", "codex", "--json").codes == ["host_config_invalid"]
    assert taskfs("setup", "claude", "--agent", "no spaces", "--json").codes == ["invalid_agent"]


def test_project_setup_needs_a_repository(tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    assert taskfs("setup", "claude", "--json", cwd=outside).codes == ["not_a_repository"]


def test_a_project_setup_says_one_checkout_per_agent_and_what_not_to_commit(repo: Path) -> None:
    doc = setup("claude", "--project", "--agent", "builder", "--dry-run")
    notes = " ".join(doc["notes"])
    assert "give each agent a clone or worktree of its own (git worktree add ../NAME" in notes
    assert "do not commit .mcp.json, .claude/settings.json" in notes
    assert "the agent builder" in notes
    assert "--user" in notes
    text = taskfs("setup", "codex", "--dry-run").stdout
    assert "do not commit .codex/config.toml: they name this machine's taskfs" in text
    # User-wide files are no one else's: nothing to say about commits there.
    user = setup("claude", "--user", "--agent", "builder", "--dry-run")
    assert not any("commit" in note for note in user["notes"])


def test_a_settings_file_that_is_a_link_stays_one(repo: Path, tmp_path: Path) -> None:
    """A dotfiles manager links ~/.claude/settings.json into its own folder: setup writes the
    file the link names and leaves the link a link (issue 35, item 9)."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "claude-settings.json"
    real.write_text('{"theme": "dark"}\n')
    link = home() / ".claude" / "settings.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    setup("claude", "--user", "--agent", "builder")
    assert link.is_symlink()
    settings = json.loads(real.read_text())
    assert settings["theme"] == "dark"
    assert "hooks" in settings
