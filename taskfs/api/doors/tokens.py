"""Who is calling an HTTP door: bearer tokens mapped to agent names, in a file no sender can
write, with the remote origins and host names the operator lets in.

`$TASKFS_A2A_TOKENS`, else `$XDG_CONFIG_HOME/taskfs/a2a.yaml` (default
`~/.config/taskfs/a2a.yaml`), shaped

    tokens:
      <token>: <agent name>
    origins: [https://app.example.org]      # optional: browser origins let in
    hosts: [ledger.example.org]             # optional: host names let in (a reverse proxy's)

A file inside the repository's working tree is refused with `tokens_unsafe`: anyone who can
write there could mint themselves an identity. With no file (or no tokens in it) a door
listens on loopback only, and an A2A caller names itself with the `X-Taskfs-Agent` header (as a
local process names itself with `--agent`). Both doors (`a2a serve`, `mcp --http`) read the
same file.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from taskfs.api.context import operator_file, read_operator_yaml
from taskfs.core.doors import Policy, normal_origin, split_host
from taskfs.core.layout import is_agent_name
from taskfs.errors import fail

AGENT_HEADER = "x-taskfs-agent"
ANONYMOUS = "anonymous"


def tokens_path() -> Path:
    return operator_file("TASKFS_A2A_TOKENS", "a2a.yaml")


@dataclass(frozen=True)
class Tokens:
    path: Path
    agents: Mapping[str, str] = field(default_factory=dict)  # token -> agent
    hosts: frozenset[str] = frozenset()
    origins: frozenset[str] = frozenset()

    @property
    def configured(self) -> bool:
        return bool(self.agents)

    @property
    def policy(self) -> Policy:
        """What the doors' guard lets in (`taskfs.core.doors.screen`)."""
        return Policy(self.configured, self.hosts, self.origins)

    def caller(self, headers: Mapping[str, str]) -> str:
        """The agent a request acts as; `token_invalid` when it does not authenticate."""
        if not self.configured:
            named = headers.get(AGENT_HEADER, "").strip()
            if named and not is_agent_name(named):
                raise fail("invalid_agent", value=named)
            return named or ANONYMOUS
        scheme, _space, token = headers.get("authorization", "").strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise fail("token_invalid", reason="no bearer token was sent")
        token = token.strip()
        for known, agent in self.agents.items():
            if hmac.compare_digest(known.encode(), token.encode()):
                return agent
        raise fail("token_invalid", reason="the bearer token is not known here")

    def admit(self, headers: Mapping[str, str], agent: str | None) -> None:
        """For a door that acts as one agent (`mcp --http --agent A`): with tokens configured,
        only a token of that agent gets in (anyone else's would act in A's name)."""
        if not self.configured:
            return
        caller = self.caller(headers)
        if agent is not None and caller != agent:
            raise fail("token_invalid", reason=f"this server acts as {agent!r}, not {caller!r}")


def load_tokens(root: Path) -> Tokens:
    path = tokens_path()
    value = read_operator_yaml(path, root, unsafe="tokens_unsafe", invalid="file_invalid")
    if value is None:
        return Tokens(path)
    if not isinstance(value, dict):
        raise fail("file_invalid", path=str(path), reason="expected a mapping `tokens:`")
    table = value.get("tokens") or {}
    if not isinstance(table, dict):
        raise fail("file_invalid", path=str(path), reason="expected a mapping `tokens:`")
    agents: dict[str, str] = {}
    for token, agent in table.items():
        if not isinstance(token, str) or len(token.strip()) < 16:
            raise fail("file_invalid", path=str(path), reason="a token must be 16+ characters")
        if not isinstance(agent, str) or not is_agent_name(agent):
            raise fail("file_invalid", path=str(path), reason=f"{agent!r} is not an agent name")
        agents[token.strip()] = agent
    hosts = _names(value, "hosts", path)
    for host in hosts:
        if split_host(host) != (host, None):
            raise fail("file_invalid", path=str(path), reason=f"{host!r} is not a host name")
    origins = frozenset(normal_origin(o) for o in _names(value, "origins", path))
    return Tokens(path, agents, hosts, origins)


def _names(value: Mapping[str, object], key: str, path: Path) -> frozenset[str]:
    names = value.get(key) or []
    if not isinstance(names, list) or not all(isinstance(n, str) and n.strip() for n in names):
        raise fail("file_invalid", path=str(path), reason=f"`{key}:` must be a list of names")
    return frozenset(n.strip().lower() for n in names)
