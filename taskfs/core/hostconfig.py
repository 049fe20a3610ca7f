"""What `taskfs setup` puts into an agent host's configuration, merged into what is there.

Pure: a file's text in, its new text and the list of changes out. JSON files (Claude Code's
`.mcp.json`, `settings.json`, `~/.claude.json`; Codex's `hooks.json`) keep their keys, their
order and their indentation; TOML (Codex's `config.toml`) goes through tomlkit, which keeps
comments and layout. Only these entries are taskfs's, and only they are ever changed:

- the MCP server `taskfs` (`mcpServers.taskfs` in JSON, `[mcp_servers.taskfs]` in TOML);
- hook groups whose command runs `taskfs prime --hook` (SessionStart) or `taskfs nudge --hook`
  (PostToolUse, after the tools that edit files or run shell commands: progress is made there,
  and a hook run after every read would cost a process start each time for nothing);
- `TASKFS_AGENT` in Claude Code's settings `env`, or in Codex's
  `shell_environment_policy.set`, when an agent name was given.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, MutableMapping, MutableSequence
from dataclasses import dataclass
from typing import Any, Literal

import tomlkit
import tomlkit.exceptions
from tomlkit.items import AoT, Table

from taskfs.core.hosttools import PROGRESS_TOOLS

Host = Literal["claude", "codex"]
Format = Literal["json", "toml"]
# Which of taskfs's entries a file holds.
Part = Literal["mcp", "hooks", "env", "shell_env"]

SERVER = "taskfs"
AGENT_VARIABLE = "TASKFS_AGENT"
PRIME_TIMEOUT_SECONDS = 30
NUDGE_TIMEOUT_SECONDS = 10
_OURS = re.compile(r"(?:^|[\s/\\])taskfs(?:\.exe)?['\"]?\s+(?:prime|nudge)\s+--hook\b")


class ConfigError(ValueError):
    """The file is not valid in its format; taskfs leaves it alone."""


@dataclass(frozen=True)
class Wanted:
    """The entries one host gets: its MCP server, its hooks and the agent name, if any."""

    host: Host
    agent: str | None = None
    command: str = "taskfs"

    def server(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"command": self.command, "args": ["mcp"]}
        if self.agent:
            entry["env"] = {AGENT_VARIABLE: self.agent}
        return entry

    def hooks(self) -> dict[str, dict[str, Any]]:
        named = f" --agent {self.agent}" if self.agent else ""
        run = shlex.quote(self.command)  # a hook is a shell command: a path may hold spaces
        prime = f"{run} prime --hook {self.host}{named}"
        nudge = f"{run} nudge --hook {self.host}{named}"
        return {
            "SessionStart": {"hooks": [_command(prime, PRIME_TIMEOUT_SECONDS)]},
            "PostToolUse": {
                "matcher": "|".join(PROGRESS_TOOLS[self.host]),
                "hooks": [_command(nudge, NUDGE_TIMEOUT_SECONDS)],
            },
        }


def _command(command: str, timeout: int) -> dict[str, Any]:
    return {"type": "command", "command": command, "timeout": timeout}


# -- text <-> document -----------------------------------------------------------------


def parse(text: str, fmt: Format) -> MutableMapping[str, Any]:
    if fmt == "toml":
        try:
            return tomlkit.parse(text)
        except tomlkit.exceptions.TOMLKitError as exc:
            raise ConfigError(str(exc)) from None
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"line {exc.lineno}: {exc.msg}") from None
    if not isinstance(value, dict):
        raise ConfigError("the top level is not an object")
    return value


def render(doc: MutableMapping[str, Any], fmt: Format, original: str) -> str:
    if fmt == "toml":
        return tomlkit.dumps(doc)
    indent = _indent_of(original)
    return json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"


def _indent_of(text: str) -> str | int:
    """The indentation the file already uses (two spaces for a new file)."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            lead = line[: len(line) - len(stripped)]
            return lead if "\t" in lead else len(lead)
    return 2


def _maker(fmt: Format) -> Callable[[Any], Any]:
    return _toml_value if fmt == "toml" else (lambda value: value)


def _toml_value(value: Any) -> Any:
    """A plain value as tomlkit items: mappings become tables, lists of mappings arrays of
    tables, so that they are written as `[a.b]` and `[[a.b]]` sections."""
    if isinstance(value, dict):
        table = tomlkit.table()
        for key, item in value.items():
            table[key] = _toml_value(item)
        return table
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        array = tomlkit.aot()
        for item in value:
            array.append(_toml_value(item))
        return array
    return value


def _plain(value: Any) -> Any:
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


# -- putting taskfs's entries in ----------------------------------------------------------


def apply(
    doc: MutableMapping[str, Any], parts: frozenset[Part], wanted: Wanted, fmt: Format
) -> list[str]:
    """Put taskfs's entries into `doc`; the changes made, in words (none: already there)."""
    changes: list[str] = []
    make = _maker(fmt)
    if "mcp" in parts:
        key = "mcp_servers" if fmt == "toml" else "mcpServers"
        servers = _mapping(doc, key, fmt)
        entry = wanted.server()
        if _plain(servers.get(SERVER)) != entry:
            verb = "updated" if SERVER in servers else "added"
            servers[SERVER] = make(entry)
            changes.append(
                f"{key}.{SERVER}: {verb} ({' '.join([entry['command'], *entry['args']])})"
            )
    if "hooks" in parts:
        hooks = _mapping(doc, "hooks", fmt)
        for event, group in wanted.hooks().items():
            changes += _put_group(hooks, event, group, fmt)
    if "env" in parts and wanted.agent:
        changes += _put_variable(_mapping(doc, "env", fmt), "env", wanted.agent)
    if "shell_env" in parts and wanted.agent:
        policy = _mapping(doc, "shell_environment_policy", fmt, super_table=False)
        settings = _mapping(policy, "set", fmt, inline=True)
        changes += _put_variable(settings, "shell_environment_policy.set", wanted.agent)
    return changes


def _mapping(
    doc: MutableMapping[str, Any],
    key: str,
    fmt: Format,
    *,
    super_table: bool = True,
    inline: bool = False,
) -> MutableMapping[str, Any]:
    found = doc.get(key)
    if found is None:
        if fmt == "toml":
            found = tomlkit.inline_table() if inline else tomlkit.table(is_super_table=super_table)
        else:
            found = {}
        doc[key] = found
        found = doc[key]
    if not isinstance(found, MutableMapping):
        raise ConfigError(f"{key!r} is not a table/object")
    return found


def _put_group(
    hooks: MutableMapping[str, Any], event: str, group: dict[str, Any], fmt: Format
) -> list[str]:
    groups = hooks.get(event)
    if groups is None:
        hooks[event] = _toml_value([group]) if fmt == "toml" else [group]
        return [f"hooks.{event}: added {group['hooks'][0]['command']}"]
    if not isinstance(groups, MutableSequence):
        raise ConfigError(f"hooks.{event} is not a list")
    ours = [i for i, g in enumerate(groups) if is_ours(g)]
    if len(ours) == 1 and _plain(groups[ours[0]]) == group:
        return []
    for index in reversed(ours[1:]):
        del groups[index]
    made = _toml_value(group) if fmt == "toml" else group
    if ours:
        groups[ours[0]] = made
        return [f"hooks.{event}: updated to {group['hooks'][0]['command']}"]
    groups.append(made)
    return [f"hooks.{event}: added {group['hooks'][0]['command']}"]


def _put_variable(env: MutableMapping[str, Any], where: str, agent: str) -> list[str]:
    if env.get(AGENT_VARIABLE) == agent:
        return []
    env[AGENT_VARIABLE] = agent
    return [f"{where}.{AGENT_VARIABLE}: set to {agent}"]


def is_ours(group: Any) -> bool:
    """A hook group taskfs wrote: one of its commands runs `taskfs prime|nudge --hook`."""
    if not isinstance(group, MutableMapping):
        return False
    handlers = group.get("hooks")
    if not isinstance(handlers, MutableSequence):
        return False
    return any(
        isinstance(h, MutableMapping)
        and isinstance(h.get("command"), str)
        and _OURS.search(h["command"]) is not None
        for h in handlers
    )


# -- taking them out -----------------------------------------------------------------------


def revert(
    doc: MutableMapping[str, Any], parts: frozenset[Part], agent: str | None, fmt: Format
) -> list[str]:
    """Take taskfs's entries out of `doc` (and the tables they leave empty). `agent`: the name
    setup wrote, so that only that value of TASKFS_AGENT is removed."""
    changes: list[str] = []
    if "mcp" in parts:
        key = "mcp_servers" if fmt == "toml" else "mcpServers"
        servers = doc.get(key)
        if isinstance(servers, MutableMapping) and SERVER in servers:
            del servers[SERVER]
            changes.append(f"{key}.{SERVER}: removed")
            _drop_if_empty(doc, key)
    hooks = doc.get("hooks")
    if "hooks" in parts and isinstance(hooks, MutableMapping):
        for event in list(hooks):
            groups = hooks[event]
            if not isinstance(groups, MutableSequence):
                continue
            ours = [i for i, g in enumerate(groups) if is_ours(g)]
            for index in reversed(ours):
                del groups[index]
            if ours:
                changes.append(f"hooks.{event}: removed taskfs's hook")
                _drop_if_empty(hooks, event)
        _drop_if_empty(doc, "hooks")
    if "env" in parts and agent:
        changes += _drop_variable(doc, ("env",), agent)
    if "shell_env" in parts and agent:
        changes += _drop_variable(doc, ("shell_environment_policy", "set"), agent)
    return changes


def _drop_variable(doc: MutableMapping[str, Any], path: tuple[str, ...], agent: str) -> list[str]:
    chain: list[MutableMapping[str, Any]] = [doc]
    for key in path:
        found = chain[-1].get(key)
        if not isinstance(found, MutableMapping):
            return []
        chain.append(found)
    if chain[-1].get(AGENT_VARIABLE) != agent:
        return []
    del chain[-1][AGENT_VARIABLE]
    for parent, key in reversed(list(zip(chain[:-1], path, strict=True))):
        _drop_if_empty(parent, key)
    return [f"{'.'.join(path)}.{AGENT_VARIABLE}: removed"]


def _drop_if_empty(parent: MutableMapping[str, Any], key: str) -> None:
    value = parent.get(key)
    if isinstance(value, (MutableMapping, MutableSequence, Table, AoT)) and len(value) == 0:
        del parent[key]
