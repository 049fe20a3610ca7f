"""Where a door listens: loopback unless tokens are configured, a socket bound before its URL
is printed, and uvicorn serving the guarded app on it until interrupted."""

from __future__ import annotations

import socket
import sys
from typing import Any

from taskfs.api.doors.tokens import Tokens
from taskfs.core.doors import is_loopback
from taskfs.errors import fail


def listen(tokens: Tokens, host: str, port: int, *, door: str) -> tuple[socket.socket, str]:
    """A listening socket on `host`:`port` and the URL it is reached at (`http://H:P`, no
    slash). Another host than loopback without tokens is `bind_refused`."""
    if not tokens.configured:
        if not is_loopback(host):
            raise fail("bind_refused", path=str(tokens.path), host=host)
        sys.stderr.write(
            f"taskfs {door}: no tokens configured ({tokens.path}): loopback only, and requests "
            "from web pages (a foreign Origin or Host, a body that is not JSON) are refused\n"
        )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        # Listening before the URL is printed: a client that connects at once waits in the
        # backlog until uvicorn accepts, instead of being refused.
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise fail("usage", reason=f"cannot listen on {host}:{port}: {exc.strerror}") from None
    shown = f"[{host}]" if ":" in host else host
    return sock, f"http://{shown}:{sock.getsockname()[1]}"


def run(app: Any, sock: socket.socket, *, lifespan: bool = False) -> None:
    """Serve `app` on `sock` until interrupted."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="on" if lifespan else "off")
    uvicorn.Server(config).run(sockets=[sock])
