"""What the rules between tasks need to know of an envelope, as a plain value.

The rules (dependencies, ownership, delegation) and the listings read only these fields. The
pydantic `Envelope` has them, and so does `Facts`, a plain value that the ledger cache can
store and rebuild without importing pydantic or YAML: that is what keeps `ls`, `ready` and
`claim` fast in a repository of thousands of tasks.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol


class EnvelopeFacts(Protocol):
    @property
    def id(self) -> str | None: ...
    @property
    def sender(self) -> str | None: ...
    @property
    def recipient(self) -> str | None: ...
    @property
    def context_id(self) -> str: ...
    @property
    def depends_on(self) -> tuple[str, ...]: ...
    @property
    def parent(self) -> str | None: ...
    @property
    def files_and_interfaces(self) -> tuple[str, ...]: ...
    @property
    def tools_allowed(self) -> tuple[str, ...] | None: ...


class Facts(NamedTuple):
    # A tuple, not a dataclass: the ledger cache builds thousands of these per command, and a
    # frozen dataclass's __init__ costs several times a tuple's.
    id: str | None
    sender: str | None
    recipient: str | None
    context_id: str
    depends_on: tuple[str, ...]
    parent: str | None
    files_and_interfaces: tuple[str, ...]
    tools_allowed: tuple[str, ...] | None

    @classmethod
    def of(cls, envelope: EnvelopeFacts) -> Facts:
        return cls(
            envelope.id,
            envelope.sender,
            envelope.recipient,
            envelope.context_id,
            tuple(envelope.depends_on),
            envelope.parent,
            tuple(envelope.files_and_interfaces),
            None if envelope.tools_allowed is None else tuple(envelope.tools_allowed),
        )


class TaskFacts(Protocol):
    """A task as the rules see it: a full `Task` read from disk, or a cached summary."""

    @property
    def id(self) -> str: ...
    @property
    def envelope(self) -> EnvelopeFacts: ...
    @property
    def state(self) -> str: ...
    @property
    def holder(self) -> str | None: ...
    @property
    def length(self) -> int:
        """How many status files its history has (0: an envelope no intake has taken yet)."""
        ...
