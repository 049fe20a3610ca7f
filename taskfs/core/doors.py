"""Which HTTP requests a door lets in: one decision for every HTTP door (`a2a serve`,
`mcp --http`), made before a request reaches its protocol.

A web page in the operator's browser can reach a server on loopback in two ways the protocols
never see. It can POST a "simple request" (`Content-Type: text/plain` or a form type, which a
browser sends across origins without asking the server first), and it can rebind its own host
name to 127.0.0.1, so that its requests count as same-origin. So:

- a request with a body (POST, PUT, PATCH) must say it is JSON (`application/json`, or an
  `application/*+json` type): a page cannot send that across origins without a CORS preflight,
  which no door answers (415);
- the `Host` must name this server (a loopback name or address), so a rebound name is refused
  (403). When tokens are configured every call must authenticate, so any name the operator's
  clients use is let in; the operator may also list host names (a reverse proxy's);
- an `Origin`, when a client sends one, must be the server's own origin (the scheme and the very
  `Host` the request was sent to), or one the operator listed (403).

Values in, a verdict out: the adapters' middleware reads the headers and renders the refusal in
its protocol's error shape.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field

from taskfs.errors import Problem, problem

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
FORBIDDEN = 403
UNSUPPORTED_MEDIA_TYPE = 415
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class Policy:
    """What the operator configured for a door. `authenticated`: every call must carry a token
    the operator issued. `hosts` and `origins`: names let in besides the server's own
    (`ledger.example.org`; `https://app.example.org`)."""

    authenticated: bool = False
    hosts: frozenset[str] = field(default_factory=frozenset)
    origins: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class Refusal:
    status: int
    problem: Problem


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address, without port or brackets) is this machine's."""
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def screen(method: str, headers: Mapping[str, str], policy: Policy) -> Refusal | None:
    """The refusal of a request (`headers` with lower-case names), or None to let it in."""
    if method.upper() in BODY_METHODS and not is_json(headers.get("content-type", "")):
        return _refuse(
            UNSUPPORTED_MEDIA_TYPE,
            header="Content-Type",
            value=headers.get("content-type", ""),
            reason="a request's body must be JSON (application/json)",
        )
    host = headers.get("host", "")
    place = split_host(host)
    if place is None or not _host_allowed(place[0], policy):
        return _refuse(
            FORBIDDEN,
            header="Host",
            value=host,
            reason="the request was not addressed to this server by a loopback name",
        )
    origin = headers.get("origin")
    if origin is not None and not _origin_allowed(origin, place, policy):
        return _refuse(
            FORBIDDEN,
            header="Origin",
            value=origin,
            reason="it is not this server's own origin",
        )
    return None


def is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    kind, _slash, sub = media.partition("/")
    return kind == "application" and (sub == "json" or sub.endswith("+json"))


def split_host(host: str) -> tuple[str, int | None] | None:
    """A `Host` value as (lower-case name, port or None); None when it is not one."""
    host = host.strip().lower()
    if host.startswith("["):
        name, bracket, rest = host[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:]
    else:
        name, colon, port_text = host.partition(":")
        if colon and not port_text:
            return None
    if not name or any(c.isspace() or c in "/@?#" for c in name):
        return None
    if port_text and not (port_text.isdigit() and int(port_text) < 65536):
        return None
    return name.rstrip("."), int(port_text) if port_text else None


def _host_allowed(name: str, policy: Policy) -> bool:
    return policy.authenticated or is_loopback(name) or name in policy.hosts


def _origin_allowed(origin: str, host: tuple[str, int | None], policy: Policy) -> bool:
    if normal_origin(origin) in policy.origins:
        return True
    scheme, sep, rest = origin.strip().lower().partition("://")
    if not sep or scheme not in _DEFAULT_PORTS or "/" in rest:
        return False
    place = split_host(rest)
    if place is None:
        return False
    default = _DEFAULT_PORTS[scheme]
    return (place[0], place[1] or default) == (host[0], host[1] or default)


def normal_origin(origin: str) -> str:
    """An origin as the operator's list holds it: lower case, no trailing slash."""
    return origin.strip().lower().rstrip("/")


def _refuse(status: int, *, header: str, value: str, reason: str) -> Refusal:
    # The operator's file is not named: the answer goes to whoever sent the request.
    found = problem("origin_refused", header=header, value=value[:200], reason=reason)
    return Refusal(status, found)
