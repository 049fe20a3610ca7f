"""`taskfs keys new`: signing keys (the private part outside the repository)."""

from __future__ import annotations

from typing import Any

from taskfs.cli.app import act, acting_agent, agent_option, cli, json_option, open_repo


@cli.group()
def keys() -> None:
    """Signing keys: private parts outside the repository, public parts committed."""


@keys.command(name="new")
@agent_option
@json_option
def new_key(agent: str | None, as_json: bool) -> int:
    """A new Ed25519 key for the agent: its messages are signed from now on."""
    from taskfs.api import keys as api

    def show(made: Any) -> tuple[dict[str, Any], str]:
        from taskfs.api.views import document

        doc = document(
            True,
            kind=made.kind,
            name=made.name,
            keyId=made.key_id,
            public=made.public,
            private=made.private,
            commit=made.commit,
        )
        return doc, f"{made.kind} key {made.key_id} for {made.name}: public {made.public}"

    return act(as_json, lambda: api.new_key(open_repo(), "agent", acting_agent(agent) or ""), show)
