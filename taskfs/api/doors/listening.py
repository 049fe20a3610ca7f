"""Where a door listens: loopback unless tokens are configured, a socket bound before its URL
is printed, and uvicorn serving the guarded app on it until interrupted."""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from typing import Any

from taskfs.api.doors.tokens import Tokens
from taskfs.core.doors import is_loopback
from taskfs.errors import fail

STREAM_LIMIT = 256  # open connections (and requests in flight) of a door that streams


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


def run(
    app: Any,
    sock: socket.socket,
    *,
    lifespan: bool = False,
    streams: bool = False,
    on_exit: Callable[[], None] | None = None,
) -> None:
    """Serve `app` on `sock` until interrupted. `streams`: the app keeps responses open (a
    page following the ledger), so an interrupt waits for them only a moment, and the
    connections are bounded (a 503 past the limit) rather than left to exhaust the process.
    `on_exit`: called when an interrupt asks the server to stop, before it waits for the
    responses still open (so that the app can end its streams)."""
    import uvicorn

    options: dict[str, Any] = {}
    if streams:
        options = {"timeout_graceful_shutdown": 3, "limit_concurrency": STREAM_LIMIT}
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on" if lifespan else "off", **options
    )

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            if on_exit is not None:
                on_exit()
            super().handle_exit(sig, frame)

    Server(config).run(sockets=[sock])
