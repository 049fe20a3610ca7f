"""The doors' ASGI guard: every request is screened (`taskfs.core.doors.screen`) before the
protocol's app sees it, and a refused one is answered in the protocol's error shape.

Both doors wrap their app in `Guard`; each brings only `render`, which turns the refusal into
its protocol's JSON error body. A door that acts as one agent also brings `authenticate`,
which refuses a request whose token does not name that agent (401).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

from taskfs.core.doors import Policy, Refusal, screen
from taskfs.errors import TaskfsError

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

UNAUTHORIZED = 401


class Guard:
    def __init__(
        self,
        app: App,
        policy: Policy,
        render: Callable[[Refusal], bytes],
        authenticate: Callable[[Mapping[str, str]], None] | None = None,
    ) -> None:
        self.app = app
        self.policy = policy
        self.render = render
        self.authenticate = authenticate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        found = headers(scope)
        refusal = screen(str(scope.get("method", "GET")), found, self.policy)
        if refusal is None and self.authenticate is not None:
            try:
                self.authenticate(found)
            except TaskfsError as exc:
                refusal = Refusal(UNAUTHORIZED, exc.problems[0])
        if refusal is None:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = self.render(refusal)
        head = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        if refusal.status == UNAUTHORIZED:
            head.append((b"www-authenticate", b"Bearer"))
        await send({"type": "http.response.start", "status": refusal.status, "headers": head})
        await send({"type": "http.response.body", "body": body})


def headers(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name; of a repeated one, the first, as the apps
    behind the guard read it."""
    out: dict[str, str] = {}
    for name, value in scope.get("headers") or ():
        out.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    return out
