"""What each tool declares besides its arguments: its hints and the shape of its answer.

**Hints** (`annotations`): a tool that only reads says so (`readOnlyHint`); one that writes
says whether it may end or undo something (`destructiveHint`: cancelling, refusing or failing a
task, running an acceptance command, a sync undoing an act that lost to a published one) and,
when a second identical call changes nothing more, `idempotentHint`; every tool says whether it
reaches beyond this repository while it runs (`openWorldHint`: `agent_check`, whose acceptance
command may do anything, and `agent_sync`, which fetches from and pushes to the git remote). The
two hints whose defaults assume the worst (destructive, open world) are always spelled out; the
others only where they are true, since false is their default.

**Answers** (`outputSchema`): every tool answers a JSON document (`structuredContent`), the
same as the command line's `--json`; its schema requires the keys a caller acts on (and
gives a type only where the name does not say it). A refusal is a tool error (`isError`), whose
document is `ok: false` and `errors` instead, and the schema says so too (`anyOf` the answer's
keys or `errors`): the specification asks structured content to conform to the declared schema,
and clients that check it (the TypeScript SDK's, for error results too) would otherwise throw
the refusal away. The schemas are small on purpose: a model reads `tools/list` on every turn.
"""

from __future__ import annotations

from typing import Any

from mcp.types import ToolAnnotations


def reads() -> ToolAnnotations:
    return ToolAnnotations(read_only_hint=True, open_world_hint=False)


def writes(
    *, destructive: bool = False, idempotent: bool = False, open_world: bool = False
) -> ToolAnnotations:
    # readOnlyHint and idempotentHint default to false, which is what they would say here.
    return ToolAnnotations(
        destructive_hint=destructive,
        idempotent_hint=idempotent or None,
        open_world_hint=open_world,
    )


def shape(*keys: str, **typed: dict[str, Any]) -> dict[str, Any]:
    """The schema of a tool's answer: `ok` (beside `schemaVersion`), then either the keys `keys`
    and `typed` (with their types) of a success, or a refusal's `errors`."""
    schema: dict[str, Any] = {
        "type": "object",
        "required": ["ok"],
        "anyOf": [{"required": [*keys, *typed]}, REFUSED],
    }
    if typed:
        schema["properties"] = typed
    return schema


REFUSED: dict[str, Any] = {"required": ["errors"]}


TASK = shape("id", "state")
MESSAGE = shape("msg_id", "task_id", "state")
