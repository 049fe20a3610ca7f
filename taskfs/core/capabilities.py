"""Capabilities (contract section 7): a request intersected with a ledger, never wider.

Pure: the capability ledger arrives as a value; `taskfs.store.capability_ledger` finds and
reads the file. Tool names are compared exactly (case-sensitive); the grant keeps the order in
which the envelope requested the tools and names each tool once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from taskfs.core.envelope import AgentName, Envelope, Text
from taskfs.core.facts import EnvelopeFacts


class CapabilityLedger(BaseModel):
    """`agents: {name: [tool, ...]}`: the tools each agent may use."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    agents: Mapping[AgentName, tuple[Text, ...]] = Field(default_factory=dict)

    def held(self, agent: str | None) -> tuple[str, ...]:
        return tuple(self.agents.get(agent, ())) if agent is not None else ()


def intersect(requested: Iterable[str] | None, held: Iterable[str] | None) -> tuple[str, ...]:
    """The requested tools that are also held: a subset of both, empty when either is."""
    holding = set(held or ())
    return tuple(dict.fromkeys(tool for tool in requested or () if tool in holding))


def granted(
    envelope: EnvelopeFacts, agent: str | None, ledger: CapabilityLedger | None
) -> tuple[str, ...]:
    """What `agent` was granted for `envelope`: its request intersected with the ledger, or,
    where no ledger is available, the request itself (the most a ledger could grant)."""
    if ledger is None:
        return tuple(dict.fromkeys(envelope.tools_allowed or ()))
    return intersect(envelope.tools_allowed, ledger.held(agent))


class BoundEnvelope(Envelope):
    """An envelope bound to one agent's capabilities: a copy carrying `toolsGranted`."""

    tools_granted: tuple[Annotated[str, Field(min_length=1)], ...] = Field(
        alias="toolsGranted", description="toolsAllowed intersected with the capability ledger."
    )


def bind_envelope(envelope: Envelope, tools: Iterable[str]) -> BoundEnvelope:
    # model_copy(update=...) skips validation and keeps unknown keys: validate a new one.
    data: dict[str, Any] = envelope.model_dump(by_alias=True, exclude_none=True)
    data["extensions"] = envelope.extensions
    data["toolsGranted"] = tuple(tools)
    return BoundEnvelope.model_validate(data)
