"""`taskfs a2a serve` as a subprocess on a free loopback port (`tests.serving`), and a2a-sdk's
own client for it."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
from a2a.client import ClientCallContext, ClientConfig, create_client
from a2a.client.client import Client

from taskfs.core import yamlio
from tests.serving import Served, server


@contextlib.contextmanager
def serving(
    repo: Path, agent: str, *, env: Mapping[str, str] | None = None, port: int = 0
) -> Iterator[Served]:
    with server(["a2a", "serve", "--agent", agent, "--port", str(port)], repo, env) as served:
        yield served


@contextlib.asynccontextmanager
async def client(
    url: str, token: str | None = None, *, streaming: bool = True, wait: bool = False
) -> AsyncIterator[Client]:
    """a2a-sdk's client for the agent at `url`, resolved from its card; `streaming=False`
    makes `send_message` a plain SendMessage, which answers at once (the SDK's `polling`,
    A2A's `returnImmediately`) unless `wait`: then it waits until the task is finished or
    interrupted, as A2A 1.0 asks of a blocking call."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx.AsyncClient(headers=headers, timeout=60)
    try:
        config = ClientConfig(httpx_client=http, streaming=streaming, polling=not wait)
        made = await create_client(url, client_config=config)
        try:
            yield made
        finally:
            await made.close()
    finally:
        await http.aclose()


def resume_from(event_id: str) -> ClientCallContext:
    return ClientCallContext(service_parameters={"Last-Event-ID": event_id})


def write_tokens(path: Path, tokens: Mapping[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yamlio.dump({"tokens": dict(tokens)}))
    return path


def deadline(seconds: float = 60) -> float:
    return time.monotonic() + seconds


def rpc(
    url: str, method: str, params: Mapping[str, Any], headers: Mapping[str, str] | None = None
) -> httpx.Response:
    """One JSON-RPC call as it is on the wire, with A2A 1.0's version header unless
    `headers` is given (then exactly those). A `SendMessage` without a `configuration` asks
    for the task at once (`returnImmediately`): most tests look at the task before anyone
    works it, where a blocking call would wait for its end (test_serve.py tests that wait)."""
    sent = dict(headers) if headers is not None else {"A2A-Version": "1.0"}
    params = dict(params)
    if method == "SendMessage" and "configuration" not in params:
        params["configuration"] = {"returnImmediately": True}
    call = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx.post(url, json=call, headers=sent, timeout=30)


def taskfs_code(answer: Mapping[str, Any]) -> str:
    """The taskfs code an A2A error's data names (its `google.rpc.ErrorInfo` metadata)."""
    return str(answer["error"]["data"][0]["metadata"]["taskfsCode"])
