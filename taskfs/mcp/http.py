"""`taskfs mcp --http`: the same tools over MCP's streamable HTTP transport (the SDK's own), at
`http://HOST:PORT/mcp`, for hosts that reach a server over the network and for the MCP
conformance suite.

It listens as `taskfs a2a serve` does (`taskfs.api.doors`): on loopback unless the operator's
token file names tokens, and every request passes the doors' guard first (a foreign Origin or
Host, or a body that is not JSON, is `origin_refused`). The acting agent is named once per
server, as on stdio; with tokens configured, only a token of that agent gets in, since anyone
else's would act in its name (`token_invalid`, HTTP 401). The SDK's own Host and Origin check
is left off: the guard decides, the same way for both doors.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings

from taskfs.api import context
from taskfs.api.doors import listening
from taskfs.api.doors.guard import Guard
from taskfs.api.doors.tokens import load_tokens
from taskfs.core import shapes
from taskfs.core.doors import Refusal
from taskfs.mcp.tools import Tools

PATH = "/mcp"
INVALID_REQUEST = -32600


def serve_http(tools: Tools, host: str, port: int) -> int:
    """Serve until interrupted. Refusals before serving (tokens, host) are raised as named
    errors."""
    session = tools.session
    root = context.open(session.start).repo.root
    tokens = load_tokens(root)
    sock, base = listening.listen(tokens, host, port, door="mcp")
    agent = session.maybe_agent()
    app = tools.server.streamable_http_app(
        streamable_http_path=PATH,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    guarded = Guard(app, tokens.policy, refused, lambda h: tokens.admit(h, agent))
    url = base + PATH
    sys.stdout.write(url + "\n")
    sys.stdout.flush()
    sys.stderr.write(f"taskfs mcp: serving agent {agent or '(none)'} at {url}\n")
    sys.stderr.flush()
    listening.run(guarded, sock, lifespan=True)
    return 0


def refused(refusal: Refusal) -> bytes:
    """A request the guard refused, as a JSON-RPC error whose data is taskfs's refusal."""
    found = refusal.problem
    error: dict[str, Any] = {
        "code": INVALID_REQUEST,
        "message": f"{found.code}: {found.english}",
        "data": shapes.refusal([found]),
    }
    return json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
