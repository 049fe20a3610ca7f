"""What reaches a tool, on every transport: the protocol's middleware of `taskfs mcp`.

- A request before `initialize` (other than `ping`) is refused as invalid, with a message that
  says to initialize first. (Over HTTP the SDK's transport refuses it before this: a request
  without a session id is `400 Bad Request`, as the transport's specification says.)
- A call of a tool this server does not serve is a protocol error, JSON-RPC `-32602` (the
  spec's example: `Unknown tool: NAME`), not a tool result.
- So is a prompt it does not serve (taskfs serves none; the spec's "invalid prompt name"),
  where the SDK would answer error code 0.
- Arguments that do not fit the tool's schema are a tool error (`isError`) whose document
  names taskfs's codes, one `invalid_value` per argument (`field`: the argument), as every
  other refusal does; the SDK would answer pydantic's text. An argument the tool does not take
  is `unknown_argument` (the SDK would drop it without a word: a misspelt optional argument
  would silently do nothing).
- A list request (`tools/list`, ...) with a cursor is a protocol error, JSON-RPC `-32602`, as
  the specification's pagination page asks for an invalid cursor: taskfs lists everything on
  one page and never hands out a cursor, so no cursor is one it gave.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, INVALID_REQUEST
from pydantic import ValidationError

from taskfs.api.tasks.suggest import malformed
from taskfs.core.envelope import value_reason
from taskfs.errors import Problem, TaskfsError, problem
from taskfs.mcp.tools import Tools, answer, refused_text

UNGATED = frozenset({"initialize", "ping"})
LISTS = frozenset({"tools/list", "prompts/list", "resources/list", "resources/templates/list"})


class Gate:
    """The server's middleware; `tools` is set once the server they are added to exists."""

    tools: Tools | None = None

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.request_id is None:  # a notification: nothing to answer
            return await call_next(ctx)
        if self.tools is None:
            return await self._request(ctx, call_next)
        self.tools.running.enter()
        try:
            return await self._request(ctx, call_next)
        finally:
            self.tools.running.leave()

    async def _request(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method not in UNGATED and not _initialized(ctx):
            raise MCPError(
                code=INVALID_REQUEST,
                message="Invalid Request: the session is not initialized; send initialize first",
            )
        if ctx.method == "tools/call" and isinstance(ctx.params, Mapping):
            refused = self._tool_call(ctx.params)
            if refused is not None:
                return refused
        if ctx.method == "prompts/get" and isinstance(ctx.params, Mapping):
            self._prompt(ctx.params)
        if ctx.method in LISTS and isinstance(ctx.params, Mapping):
            cursor = ctx.params.get("cursor")
            if cursor is not None:
                raise MCPError(
                    code=INVALID_PARAMS,
                    message=f"Invalid cursor: {cursor!r} is not one this server gave "
                    "(it lists everything on one page)",
                )
        return await call_next(ctx)

    def _prompt(self, params: Mapping[str, Any]) -> None:
        name = params.get("name")
        prompts = self.tools.server._prompt_manager if self.tools is not None else None
        if isinstance(name, str) and prompts is not None and prompts.get_prompt(name) is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown prompt: {name}")

    def _tool_call(self, params: Mapping[str, Any]) -> HandlerResult:
        name = params.get("name")
        if not isinstance(name, str) or self.tools is None:
            return None  # the SDK's own validation answers a malformed call
        tool = self.tools.server._tool_manager.get_tool(name)
        if tool is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}  # absent arguments are none, as the SDK reads them
        if not isinstance(arguments, Mapping):
            return None
        found = unknown_arguments(name, tool.fn_metadata, arguments)
        found += argument_problems(tool.fn_metadata, dict(arguments), self.tools.session.start)
        if not found:
            return None

        def refuse() -> dict[str, Any]:
            raise TaskfsError(found)

        say = refused_text if name in self.tools.lines else None
        return answer(refuse, say, tool=name)


def unknown_arguments(tool: str, metadata: Any, arguments: Mapping[str, Any]) -> list[Problem]:
    """Each argument the tool does not take, as `unknown_argument`."""
    known = metadata.arg_model.model_fields
    names = {f.alias or n for n, f in known.items()}
    taken = ", ".join(sorted(names)) or "none"
    return [
        problem("unknown_argument", field=str(name), tool=tool, known_text=taken)
        for name in arguments
        if name not in names
    ]


def argument_problems(
    metadata: Any, arguments: dict[str, Any], start: Path | None = None
) -> list[Problem]:
    """Each argument that does not fit the tool's model, as `invalid_value`."""
    try:
        metadata.arg_model.model_validate(metadata.pre_parse_json(arguments))
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=True)
        return [_argument_problem(error, start) for error in errors]
    return []


def _argument_problem(error: Any, start: Path | None) -> Problem:
    field = ".".join(str(p) for p in error["loc"]) or "arguments"
    if error["type"] == "invalid_task_id":  # `taskfs.mcp.tools.TaskIdValue`: the contract's code
        found = malformed(error["input"], start)
        return problem(found.code, field=field, **found.data)
    return problem("invalid_value", field=field, reason=value_reason(error["type"], error))


def _initialized(ctx: ServerRequestContext[Any, Any]) -> bool:
    # The SDK keeps the handshake's state on the connection; on streamable HTTP a session
    # exists only once `initialize` was answered, and a 2026 connection is ready from birth.
    connection = getattr(ctx.session, "_connection", None)
    return bool(getattr(connection, "initialize_accepted", True))
