"""`taskfs setup claude|codex`: register `taskfs mcp`, run `taskfs prime` at start, install the
progress nudge; `--remove` undoes it.

Where each host reads its configuration (as the hosts document it):

| host, scope | MCP server | hooks |
| --- | --- | --- |
| Claude Code, project | `.mcp.json` | `.claude/settings.json` |
| Claude Code, user | `~/.claude.json` | `~/.claude/settings.json` |
| Codex, project | `.codex/config.toml` | the same file, or `.codex/hooks.json` when it exists |
| Codex, user | `$CODEX_HOME/config.toml` (`~/.codex`) | the same, or `hooks.json` beside it |

With `CLAUDE_CONFIG_DIR` set, Claude Code's user files are `$CLAUDE_CONFIG_DIR/.claude.json`
and `$CLAUDE_CONFIG_DIR/settings.json`.

Every file is read and merged before any is written, so a file that does not parse stops the
whole set-up with nothing changed. Running it again changes nothing; `--remove` restores each
file byte for byte when nobody changed it since (its backup is in `taskfs.store.hostfiles`),
and otherwise takes out only taskfs's entries.

The host runs taskfs itself, often with another PATH than the shell that ran setup (a venv
not activated there): the entries name the running taskfs by its absolute path, and setup says
plainly when it cannot find one and `taskfs` is not on PATH either.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from taskfs import i18n
from taskfs.core import hostconfig
from taskfs.core.hostconfig import ConfigError, Format, Host, Part, Wanted
from taskfs.core.layout import find_worktree, state_dir
from taskfs.errors import fail
from taskfs.store import hostfiles
from taskfs.store.git import Git

Scope = Literal["project", "user"]
Action = Literal["create", "update", "unchanged", "restore", "delete"]


@dataclass(frozen=True)
class Target:
    path: Path
    shown: str
    fmt: Format
    parts: frozenset[Part]


@dataclass(frozen=True)
class FileChange:
    target: Target
    action: Action
    changes: tuple[str, ...]
    content: bytes | None
    before: bytes | None


@dataclass(frozen=True)
class Report:
    host: Host
    scope: Scope
    agent: str | None
    removing: bool
    dry_run: bool
    files: tuple[FileChange, ...]
    backups: Path
    command: str = "taskfs"
    notes: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return any(f.action != "unchanged" for f in self.files)


def targets(host: Host, scope: Scope, base: Path) -> list[Target]:
    """The files one host reads, under `base` (the repository root, or the home folder)."""

    def target(rel: str, fmt: Format, *parts: Part) -> Target:
        shown = rel if scope == "project" else f"~/{rel}"
        return Target(base / rel, shown, fmt, frozenset(parts))

    if host == "claude":
        if scope == "project":
            return [
                target(".mcp.json", "json", "mcp"),
                target(".claude/settings.json", "json", "hooks", "env"),
            ]
        folder = _home_rel(base, "CLAUDE_CONFIG_DIR", ".claude")
        mcp = ".claude.json" if folder == ".claude" else f"{folder}/.claude.json"
        settings = target(f"{folder}/settings.json", "json", "hooks", "env")
        return [target(mcp, "json", "mcp"), settings]
    folder = ".codex" if scope == "project" else _codex_home_rel(base)
    config = f"{folder}/config.toml"
    hooks_json = f"{folder}/hooks.json"
    if (base / hooks_json).exists():
        # Codex warns when one layer has hooks in both forms: use the one already there.
        return [target(config, "toml", "mcp", "shell_env"), target(hooks_json, "json", "hooks")]
    return [target(config, "toml", "mcp", "hooks", "shell_env")]


def _codex_home_rel(home: Path) -> str:
    """`$CODEX_HOME` (default ~/.codex), relative to `home` when it lies below it."""
    return _home_rel(home, "CODEX_HOME", ".codex")


def _home_rel(home: Path, variable: str, default: str) -> str:
    """The folder `$variable` names (default ~/`default`), relative to `home` when below it."""
    configured = os.environ.get(variable)
    if not configured:
        return default
    path = Path(configured).expanduser().resolve()
    try:
        return path.relative_to(home.resolve()).as_posix()
    except ValueError:
        return os.path.relpath(path, home)


def setup(
    host: Host,
    scope: Scope,
    *,
    start: Path,
    agent: str | None = None,
    remove: bool = False,
    dry_run: bool = False,
) -> Report:
    base, backups = _places(scope, start)
    store = hostfiles.Backups(backups)
    command, notes = running_taskfs()
    if host == "codex" and scope == "project" and not remove:
        notes.append(
            i18n.say(
                "note: Codex loads a project's .codex/config.toml only when the project is "
                "trusted: answer yes when Codex asks on its first start here, or add "
                '[projects."{root}"] trust_level = "trusted" to ~/.codex/config.toml',
                root=base,
            )
        )
    files = [
        _undo(t, store) if remove else _plan(t, Wanted(host, agent, command))
        for t in targets(host, scope, base)
    ]
    if scope == "project" and not remove:
        notes += team_notes([f.target.shown for f in files], agent)
    if not dry_run:
        for change in files:
            _carry_out(change, store, agent, remove)
    return Report(host, scope, agent, remove, dry_run, tuple(files), backups, command, tuple(notes))


def team_notes(shown: list[str], agent: str | None) -> list[str]:
    """What a team sets up per agent, said where a project's files were written: a checkout
    of its own for each agent, and which files stay out of commits (they name this machine's
    taskfs, and the agent when one was given)."""
    files = ", ".join(shown)
    named = (
        i18n.say("this machine's taskfs and the agent {agent}", agent=agent)
        if agent
        else i18n.say("this machine's taskfs")
    )
    return [
        i18n.say(
            "note: give each agent a clone or worktree of its own (git worktree add ../NAME "
            "-b NAME, then taskfs setup there with --agent NAME): agents sharing a checkout "
            "share its index, its HEAD and each other's unfinished files"
        ),
        i18n.say(
            "note: do not commit {files}: they name {named} (list them in .git/info/exclude); "
            "or write them for your user instead with --user",
            files=files,
            named=named,
        ),
    ]


def running_taskfs() -> tuple[str, list[str]]:
    """The command a host should run: the absolute path of this taskfs, and notes for people.

    The console script that is running (`sys.argv[0]`), else the one installed beside this
    Python (a venv's bin folder), else the one PATH finds; failing all three, plain `taskfs`,
    with a warning, since the host will not be able to start it."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name in ("taskfs", "taskfs.exe") and argv0.is_file():
        return os.path.abspath(argv0), []
    beside = Path(sys.executable).parent / ("taskfs.exe" if os.name == "nt" else "taskfs")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside), []
    found = shutil.which("taskfs")
    if found:
        return os.path.abspath(found), []
    return "taskfs", [
        i18n.say(
            "warning: taskfs is not on PATH and no taskfs executable was found beside this "
            "Python, so the host cannot start it: install taskfs where the host runs (e.g. "
            "pipx install taskfs) or put its folder on the host's PATH"
        )
    ]


def _places(scope: Scope, start: Path) -> tuple[Path, Path]:
    if scope == "user":
        return Path.home(), hostfiles.user_backup_dir()
    root = find_worktree(start)
    if root is None:
        raise fail("not_a_repository", path=str(start))
    return root, state_dir(Git(root).git_dir) / "setup"


def _document(target: Target, data: bytes | None) -> tuple[str, MutableMapping[str, Any]]:
    try:
        text = (data or b"").decode("utf-8")
        return text, hostconfig.parse(text, target.fmt)
    except (UnicodeDecodeError, ConfigError) as exc:
        raise fail(
            "host_config_invalid", path=str(target.path), format=target.fmt.upper(), reason=str(exc)
        ) from None


def _plan(target: Target, wanted: Wanted) -> FileChange:
    before = hostfiles.read(target.path)
    text, doc = _document(target, before)
    try:
        changes = hostconfig.apply(doc, target.parts, wanted, target.fmt)
    except ConfigError as exc:
        raise fail(
            "host_config_invalid", path=str(target.path), format=target.fmt.upper(), reason=str(exc)
        ) from None
    if not changes:
        return FileChange(target, "unchanged", (), before, before)
    content = hostconfig.render(doc, target.fmt, text).encode()
    action: Action = "create" if before is None else "update"
    return FileChange(target, action, tuple(changes), content, before)


def _undo(target: Target, store: hostfiles.Backups) -> FileChange:
    before = hostfiles.read(target.path)
    backup = store.get(target.path)
    if backup is not None and hostfiles.digest(before) == backup.written:
        if backup.original is None:
            return FileChange(target, "delete", ("removed: setup created it",), None, before)
        return FileChange(
            target, "restore", ("restored as it was before setup",), backup.original, before
        )
    if before is None:
        return FileChange(target, "unchanged", (), None, None)
    text, doc = _document(target, before)
    agent = backup.agent if backup is not None else None
    changes = hostconfig.revert(doc, target.parts, agent, target.fmt)
    if not changes:
        return FileChange(target, "unchanged", (), before, before)
    content = hostconfig.render(doc, target.fmt, text).encode()
    note = "changed since setup: taskfs's entries taken out, the rest kept"
    return FileChange(target, "update", (*changes, note), content, before)


def _carry_out(
    change: FileChange, store: hostfiles.Backups, agent: str | None, remove: bool
) -> None:
    path = change.target.path
    if remove:
        backup = store.get(path)
        if change.action == "delete":
            hostfiles.delete(path, list(backup.made_dirs) if backup else [])
        elif change.action != "unchanged" and change.content is not None:
            hostfiles.write(path, change.content)
        store.drop(path)
        return
    if change.action == "unchanged" or change.content is None:
        return
    backup = store.get(path)
    written = hostfiles.digest(change.content)
    if backup is None:
        made = tuple(str(p) for p in hostfiles.missing_dirs(path))
        backup = hostfiles.Backup(str(path), change.before, written, agent, made)
    else:
        backup = hostfiles.Backup(backup.path, backup.original, written, agent, backup.made_dirs)
    store.put(path, backup)
    hostfiles.write(path, change.content)
