"""Who is calling: bearer tokens mapped to agent names, in a file no sender can write.

`$TASKFS_A2A_TOKENS`, else `$XDG_CONFIG_HOME/taskfs/a2a.yaml` (default
`~/.config/taskfs/a2a.yaml`), shaped

    tokens:
      <token>: <agent name>

A file inside the repository's working tree is refused with `tokens_unsafe`: anyone who can
write there could mint themselves an identity. With no file (or no tokens in it) the server
listens on loopback only, and a caller names itself with the `X-Taskfs-Agent` header (as a
local process names itself with `--agent`).
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from taskfs.api.context import operator_file, read_operator_yaml
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

    @property
    def configured(self) -> bool:
        return bool(self.agents)

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


def load_tokens(root: Path) -> Tokens:
    path = tokens_path()
    value = read_operator_yaml(path, root, unsafe="tokens_unsafe", invalid="file_invalid")
    if value is None:
        return Tokens(path)
    table = value.get("tokens") if isinstance(value, dict) else None
    if not isinstance(table, dict):
        raise fail("file_invalid", path=str(path), reason="expected a mapping `tokens:`")
    agents: dict[str, str] = {}
    for token, agent in table.items():
        if not isinstance(token, str) or len(token.strip()) < 16:
            raise fail("file_invalid", path=str(path), reason="a token must be 16+ characters")
        if not isinstance(agent, str) or not is_agent_name(agent):
            raise fail("file_invalid", path=str(path), reason=f"{agent!r} is not an agent name")
        agents[token.strip()] = agent
    return Tokens(path, agents)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
