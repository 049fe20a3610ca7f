"""Which HTTP requests a door lets in (pure): what a web page can send is refused, what the
normal clients send passes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taskfs.core.doors import Policy, screen

OPEN = Policy()
TOKENS = Policy(authenticated=True)
JSON = {"host": "127.0.0.1:9470", "content-type": "application/json"}
SIMPLE_TYPES = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; b=x", ""]


def status(method: str, headers: dict[str, str], policy: Policy = OPEN) -> int | None:
    refused = screen(method, headers, policy)
    if refused is not None:
        assert refused.problem.code == "origin_refused"
    return None if refused is None else refused.status


@pytest.mark.parametrize(
    "host", ["127.0.0.1:9470", "localhost:9470", "[::1]:9470", "LOCALHOST", "127.0.0.2:80"]
)
def test_what_the_normal_clients_send_passes(host: str) -> None:
    assert status("POST", {**JSON, "host": host}) is None
    assert (
        status("POST", {**JSON, "host": host, "content-type": "application/json; charset=utf-8"})
        is None
    )
    assert status("GET", {"host": host, "accept": "text/event-stream"}) is None
    assert status("DELETE", {"host": host}) is None
    assert status("POST", {**JSON, "host": host, "origin": f"http://{host}"}) is None


@pytest.mark.parametrize("content_type", SIMPLE_TYPES)
def test_a_body_a_page_can_send_without_asking_is_refused(content_type: str) -> None:
    for policy in (OPEN, TOKENS):
        assert status("POST", {**JSON, "content-type": content_type}, policy) == 415
        assert status("PUT", {**JSON, "content-type": content_type}, policy) == 415
    headers = {"host": "127.0.0.1:9470"}
    assert status("POST", headers) == 415  # no content type at all
    assert status("POST", {**headers, "content-type": "application/vnd.a2a+json"}) is None


@pytest.mark.parametrize(
    "host", ["evil.example:9470", "evil.example", "127.0.0.1.evil.example", "0.0.0.0:9470", ""]
)
def test_a_rebound_host_name_is_refused_unless_tokens_authenticate(host: str) -> None:
    headers = {**JSON, "host": host, "origin": f"http://{host}"}
    assert status("POST", headers) == 403
    assert status("GET", {"host": host}) == 403
    if host:
        assert status("POST", headers, TOKENS) is None
        assert status("POST", headers, Policy(hosts=frozenset({host.partition(":")[0]}))) is None


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "http://127.0.0.1:9471",  # another server on this machine is another origin
        "http://localhost:9470",  # the same server by another name is too
        "https://127.0.0.1:9470/path",
        "null",
        "file://",
    ],
)
def test_a_foreign_origin_is_refused_unless_listed(origin: str) -> None:
    headers = {**JSON, "origin": origin}
    assert status("POST", headers) == 403
    assert status("POST", headers, TOKENS) == 403  # a token does not make a page's origin ours
    assert status("OPTIONS", {"host": JSON["host"], "origin": origin}) == 403
    listed = Policy(origins=frozenset({origin.lower().rstrip("/")}))
    assert status("POST", headers, listed) is None


def test_default_ports_are_the_same_origin() -> None:
    assert status("POST", {**JSON, "host": "localhost", "origin": "http://localhost:80"}) is None
    assert status("POST", {**JSON, "host": "localhost:443", "origin": "https://localhost"}) is None
    assert status("POST", {**JSON, "host": "localhost", "origin": "http://localhost:8080"}) == 403


@given(st.text(max_size=80), st.text(max_size=80), st.text(max_size=40))
def test_any_header_value_gets_a_verdict(host: str, origin: str, content_type: str) -> None:
    headers = {"host": host, "origin": origin, "content-type": content_type}
    for policy in (OPEN, TOKENS):
        refused = screen("POST", headers, policy)
        assert refused is None or refused.status in (403, 415)


@given(st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z][a-z0-9-]{0,20}){1,3}", fullmatch=True))
def test_no_name_but_loopback_is_let_in_without_tokens(name: str) -> None:
    headers = {**JSON, "host": f"{name}:9470"}
    assert status("POST", headers) == 403
