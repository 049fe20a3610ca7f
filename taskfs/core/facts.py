"""What the rules between tasks need to know of an envelope and of a task.

The rules (dependencies, ownership, delegation, readiness) read only these fields. The full
reader's pydantic `Envelope` and `Task` have them, and so does the read model's projection
(`taskfs.readmodel.projection`: `Facts` and `Summary`), plain values that the ledger cache can
store and rebuild without importing pydantic or YAML: that is what keeps `ls`, `ready` and
`claim` fast in a repository of thousands of tasks.
"""

from __future__ import annotations

from typing import Protocol


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
    @property
    def command(self) -> str: ...
    @property
    def follows(self) -> str | None:
        """The task it was handed on from or retries (`taskfs.core.lineage`)."""
        ...


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
