"""Signed acts: an agent's Ed25519 signature over a ledger file that records something it did.

Every kind of ledger file that names its writer (`taskfs.core.ledger_kinds`: a row with an
`actor`) is signed by that writer when it has a key, so that a file written in its name by
anyone else is told apart from its own. A status file keeps its own field list
(`taskfs.core.transition_signing`, domain `taskfs-transition-v1`); every other kind signs all
of its fields but `sig` under a domain of its own:

    read mark      taskfs-read-v1
    intake file    taskfs-intake-v1
    amendment      taskfs-amendment-v1
    archive file   taskfs-archive-v1
    revocation     taskfs-revocation-v1

`sig` is `signing.sign(private, DOMAIN, fields)` (`taskfs.core.signing` has the byte layout)
over the document's keys but `sig`, in sorted order, each value as its compact JSON
(`json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`; a missing key is
absent, not None). A message is signed with interlink's own signature (`taskfs.core.messages`),
not here. Pure: keys are passed in.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from taskfs.core import signing
from taskfs.core.transition_signing import TRANSITION_DOMAIN, signed_fields

DOMAINS = {
    "status": TRANSITION_DOMAIN,
    "read": "taskfs-read-v1",
    "intake": "taskfs-intake-v1",
    "amendment": "taskfs-amendment-v1",
    "archive": "taskfs-archive-v1",
    "revocation": "taskfs-revocation-v1",
}


def fields(kind: str, document: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """The (name, value) pairs a `kind` document's signature covers."""
    if kind == "status":
        return signed_fields(document)
    return [
        (
            name,
            json.dumps(document[name], sort_keys=True, separators=(",", ":"), ensure_ascii=False),
        )
        for name in sorted(document)
        if name != "sig"
    ]


def sign(kind: str, document: Mapping[str, Any], private: bytes) -> dict[str, Any]:
    """`document` with its `sig`, last."""
    body = {key: value for key, value in document.items() if key != "sig"}
    body["sig"] = signing.sign(private, DOMAINS[kind], fields(kind, body))
    return body


def verifies(kind: str, document: Mapping[str, Any], public: bytes) -> bool:
    """Whether the document's `sig` is its fields' signature under `public`."""
    sig = document.get("sig")
    if not isinstance(sig, str):
        return False
    try:
        return signing.verify(public, DOMAINS[kind], fields(kind, document), sig)
    except (TypeError, ValueError):
        return False
