"""The HTTP door of `taskfs a2a serve`: what is decided about a JSON-RPC call before a2a-sdk's
dispatcher reads it, and how a refusal travels back.

- **Who is calling.** With tokens configured, a call without a known bearer token is answered
  HTTP 401 with `WWW-Authenticate: Bearer`, the JSON-RPC error (`token_invalid`) as its body:
  A2A asks authentication errors to be the transport's own. The handler checks again.
- **The protocol version** (A2A 1.0 section 3.6). The `A2A-Version` header, or the request
  parameter of that name, says `Major.Minor`; none means 0.3. A 1.0 method is answered for
  1.0 only (the SDK compares the major alone, and would take a 1.9 it cannot speak); anything
  else is `VersionNotSupported` (-32009) naming `a2a_version_unsupported`. The 0.3 method
  names are the SDK's 0.3 layer's, which checks its own version.
- **A 0.3 method name under `A2A-Version: 1.0`** (`message/send` where 1.0 says
  `SendMessage`) is JSON-RPC's `MethodNotFound` (-32601) naming `a2a_method_not_found` and the
  1.0 name; under a version that is neither 0.3 nor 1.0 it is `VersionNotSupported`. (The
  SDK's 0.3 layer would answer either with `-32603 Internal error`.)
- **ListTasks' `status`** must name a task state: protobuf reads an unknown enum name as 0,
  which would be no filter at all, so it is checked on the JSON as it was sent.
- **A streaming method's refusal** before its first event is the stream's one `error` event,
  as a refusal during the stream is (the SDK answers it as a plain JSON response).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.response_helpers import build_error_response
from a2a.server.routes.common import DefaultServerCallContextBuilder, create_event_source_response
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.types import a2a_pb2 as pb
from a2a.utils.constants import VERSION_HEADER
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from taskfs.a2a import mapping
from taskfs.api.doors.tokens import Tokens
from taskfs.errors import Problem, TaskfsError, problem

if TYPE_CHECKING:
    from a2a.server.request_handlers.request_handler import RequestHandler

SPOKEN = (1, 0)  # the A2A version the 1.0 methods are answered in
STREAMING = frozenset(
    {"SendStreamingMessage", "SubscribeToTask", "message/stream", "tasks/resubscribe"}
)
_V1_METHODS = frozenset(JsonRpcDispatcher.METHOD_TO_MODEL)
# The 0.3 method names the SDK's 0.3 layer answers, and their names in 1.0.
V03_METHODS = {
    "message/send": "SendMessage",
    "message/stream": "SendStreamingMessage",
    "tasks/get": "GetTask",
    "tasks/cancel": "CancelTask",
    "tasks/resubscribe": "SubscribeToTask",
    "tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig",
    "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfig",
    "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigs",
    "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
    "agent/getAuthenticatedExtendedCard": "GetExtendedAgentCard",
}
V03 = (0, 3)


def requested_version(request: Request) -> str:
    """The version a call asks for: its `A2A-Version` header, else the request parameter."""
    return (
        request.headers.get(VERSION_HEADER) or request.query_params.get(VERSION_HEADER) or ""
    ).strip()


def major_minor(version: str) -> tuple[int, int] | None:
    """`Major.Minor` of a version (a patch number is ignored); None when it is not one."""
    parts = version.split(".")
    if len(parts) not in (2, 3) or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1])


class CallContext(DefaultServerCallContextBuilder):
    """The SDK's context, with the version a request parameter named where no header did, so
    that the SDK's own check reads what the client sent."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        # A blocking SendMessage stops waiting for a caller that went away.
        context.state["disconnected"] = request.is_disconnected
        headers = context.state.setdefault("headers", {})
        version = requested_version(request)
        if version and not headers.get(VERSION_HEADER.lower()):
            headers[VERSION_HEADER.lower()] = version
        return context


class Door:
    """The JSON-RPC endpoint: the checks above, then a2a-sdk's dispatcher."""

    def __init__(self, handler: RequestHandler, tokens: Tokens) -> None:
        self.tokens = tokens
        self.dispatcher = JsonRpcDispatcher(
            handler, context_builder=CallContext(), enable_v0_3_compat=True
        )

    async def handle(self, request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:  # not JSON: the SDK's parse error answers it
            return await self.dispatcher.handle_requests(request)
        call = body if isinstance(body, dict) else {}
        method = call.get("method") if isinstance(call.get("method"), str) else None
        request_id = _request_id(call.get("id"))
        unknown = self._stranger(request)
        if unknown is not None:
            answer = build_error_response(request_id, mapping.a2a_error(unknown))
            return JSONResponse(answer, status_code=401, headers={"WWW-Authenticate": "Bearer"})
        refused = _refusal(request, method, call.get("params"))
        if refused is not None:
            return _answer(method, build_error_response(request_id, mapping.a2a_error(refused)))
        response = await self.dispatcher.handle_requests(request)
        if method in STREAMING and isinstance(response, JSONResponse):
            return _answer(method, json.loads(bytes(response.body)))
        return response

    def _stranger(self, request: Request) -> list[Problem] | None:
        if not self.tokens.configured:
            return None
        try:
            self.tokens.caller({k.lower(): v for k, v in request.headers.items()})
        except TaskfsError as exc:
            return list(exc.problems)
        return None


def _refusal(request: Request, method: str | None, params: Any) -> list[Problem] | None:
    version = requested_version(request)
    if method in V03_METHODS and version and major_minor(version) != V03:
        if major_minor(version) == SPOKEN:
            named = V03_METHODS[method]
            return [problem("a2a_method_not_found", method=method, version=version, named=named)]
        return [problem("a2a_version_unsupported", version=version, method=method)]
    if method not in _V1_METHODS:
        return None  # unknown (the SDK says so) or 0.3 (the SDK's 0.3 layer answers it)
    if major_minor(version or "0.3") != SPOKEN:
        return [problem("a2a_version_unsupported", version=version or "0.3", method=method)]
    status = params.get("status") if method == "ListTasks" and isinstance(params, dict) else None
    if status is not None and not _is_state(status):
        return [problem("invalid_value", field="status", reason=f"{status!r} is not a task state")]
    return None


def _is_state(value: Any) -> bool:
    if isinstance(value, str):
        return value in pb.TaskState.keys()  # noqa: SIM118 (an enum wrapper, not a dict)
    return isinstance(value, int) and not isinstance(value, bool) and value in pb.TaskState.values()


def _request_id(value: Any) -> str | int | None:
    """The id to answer with: JSON-RPC's string, integer or null (never a boolean)."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return value


def _answer(method: str | None, answer: dict[str, Any]) -> Response:
    """A JSON-RPC answer, as the stream's one `error` event for a streaming method."""
    if method not in STREAMING:
        return JSONResponse(answer)

    async def once() -> AsyncIterator[dict[str, str]]:
        yield {"event": "error", "data": json.dumps(answer)}

    return create_event_source_response(once())


def routes(handler: RequestHandler, tokens: Tokens, path: str = "/") -> list[Route]:
    return [Route(path=path, endpoint=Door(handler, tokens).handle, methods=["POST"])]


def app(handler: RequestHandler, card: pb.AgentCard, tokens: Tokens) -> Any:
    """The agent's web app: its card and its JSON-RPC endpoint."""
    from a2a.server.routes import create_agent_card_routes
    from starlette.applications import Starlette

    return Starlette(routes=[*create_agent_card_routes(card), *routes(handler, tokens)])
