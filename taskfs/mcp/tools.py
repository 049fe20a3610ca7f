"""What every MCP tool module shares: the session the tools act in, the registry they are
added to, and how one library call becomes a tool result (its document, or its refusal as a
tool error). `taskfs.mcp.server` and `taskfs.mcp.interlink` both build on this module, not on
each other."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

from taskfs import i18n
from taskfs.api import context
from taskfs.api.context import acting_agent
from taskfs.api.tasks.suggest import explain
from taskfs.core import shapes
from taskfs.core.display import safe
from taskfs.core.layout import is_task_id
from taskfs.errors import TaskfsError, problem
from taskfs.mcp import hints
from taskfs.mcp.running import Running
from taskfs.mcp.schema import slim

if TYPE_CHECKING:
    from taskfs.api.context import Repository


def _task_id(value: str) -> str:
    if not is_task_id(value):
        # Named by its code: the gate (`taskfs.mcp.gate`) refuses it as `invalid_task_id`.
        raise PydanticCustomError("invalid_task_id", "not a task id")
    return value


def _task_id_or_none(value: str) -> str:
    return value and _task_id(value)  # an optional id left empty is none, as it always was


# Every tool argument that names a task is read through one of these (each tool adds its own
# description), so that a malformed id is refused as `invalid_task_id` by every tool alike,
# before anything is looked up, as the command line's `taskfs.cli.ids` refuses it.
TaskIdValue = Annotated[str, AfterValidator(_task_id)]
OptionalTaskIdValue = Annotated[str, AfterValidator(_task_id_or_none)]


class Session:
    """Where the server works and for whom."""

    def __init__(self, agent: str | None, start: Path, session: str | None = None) -> None:
        self._agent = agent
        self.start = start
        self.session_name = session

    def repo(self) -> Repository:
        """The checkout, opened afresh for each call the one way in."""
        return context.open(self.start, self._agent).repo

    def agent(self) -> str:
        return acting_agent(self._agent) or ""

    def maybe_agent(self) -> str | None:
        return acting_agent(self._agent, required=False)


def answer(
    call: Callable[[], dict[str, Any]],
    say: Callable[[dict[str, Any]], str] | None = None,
    *,
    tool: str = "",
) -> CallToolResult:
    """The tool result for one library call: its document, or its refusal as a tool error.
    The text content is the document as JSON, or, with `say`, the line `say` makes of it (a
    refusal then reads `refused: CODE: message`, one per error); the structured content is
    always the document."""
    try:
        result = call()
        if isinstance(result.get("warnings"), list):  # their next steps as tools, as refusals'
            result["warnings"] = hints.warnings_for_tools(result["warnings"])
        doc = shapes.document(bool(result.pop("ok", True)), **result)
    except TaskfsError as exc:
        doc = shapes.refusal(hints.for_tools(tuple(explain(exc.problems)), tool))
    except Exception as exc:
        doc = shapes.refusal([problem("internal_error", reason=f"{type(exc).__name__}: {exc}")])
    text = json.dumps(doc, ensure_ascii=False)
    if say is not None:
        text = say(doc) if doc["ok"] else refused_text(doc)
    return CallToolResult(
        # What a model reads is made safe as a terminal's is; the structured content is the
        # document as stored, exactly (`--json`'s).
        content=[TextContent(type="text", text=safe(text))],
        structured_content=doc,
        is_error=not doc["ok"],
    )


def refused_text(doc: dict[str, Any]) -> str:
    return "\n".join(
        f"refused: {e['code']}: {e['message']}" + (f" (-> {e['tool']})" if "tool" in e else "")
        for e in doc.get("errors", [])
    )


def in_language(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each parameter's description in the server's language."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema
    return {
        **schema,
        "properties": {
            name: {**prop, "description": i18n.text(i18n.TOOLS, prop["description"])}
            if isinstance(prop.get("description"), str)
            else prop
            for name, prop in properties.items()
        },
    }


class Tools:
    """The server and the session its tools act in."""

    def __init__(self, server: MCPServer[Any], session: Session) -> None:
        self.server = server
        self.session = session
        self.lines: set[str] = set()
        self.running = Running()

    def add(
        self,
        fn: Callable[..., CallToolResult] | Callable[..., Awaitable[CallToolResult]],
        description: str,
        hints: ToolAnnotations,
        output: dict[str, Any],
        *,
        lines: bool = False,
    ) -> None:
        """Serve `fn` as a tool, with its hints and the schema of its answer
        (`taskfs.mcp.declared`). `lines`: its text content is a line to read (interlink's
        tools), not the JSON document, and so is a refusal's (`refused_text`). The
        descriptions are in the server's language (`TASKFS_LANG`, the locale), as it starts."""
        if lines:
            self.lines.add(fn.__name__)
        said = i18n.text(i18n.TOOLS, description)
        self.server.add_tool(fn, name=fn.__name__, description=said, annotations=hints)
        listed = self.server._tool_manager.get_tool(fn.__name__)
        if listed is not None:  # what tools/list shows; arguments are still validated in full
            listed.parameters = in_language(slim(listed.parameters))
            # Published, not enforced by the SDK (there is no output model): the answer is
            # the library's document, and the client checks it against this.
            listed.fn_metadata.output_schema = output
