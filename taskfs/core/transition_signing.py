"""Signed transitions: an agent's Ed25519 signature over the fields of a status file.

Where an agent has a key (`.taskfs/keys/agent/NAME.pub`), the status files it writes carry
`sig`, so that a transition written under its name by anyone else (with plain git, say) is told
apart from its own. Pure: keys are passed in.

What is signed
--------------
`sig` is `signing.sign(private, "taskfs-transition-v1", fields)` (see `taskfs.core.signing` for
the byte layout) over these nine fields, in this order:

    task, state, by, at, prev, reason, evidence, artifacts, message

each the exact text stored in the status file, None (the encoding's None marker) when absent;
`artifacts` is the compact JSON of its `[name, location]` pairs in file order
(`[["report","https://x"]]`); then, where the file has it (a `submitted` since issue 35),
`envelope`: the SHA-256 of the envelope submitted, so that the signature covers the contract;
and, where the file has it (a claim of an amended task, since issue 38), `amendment`: the
version of the contract the claim took.
`sig` itself is not signed. `prev` is signed, so a signed transition cannot be moved to another
place in a task's chain.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from taskfs.core import signing

TRANSITION_DOMAIN = "taskfs-transition-v1"
SIGNED_FIELDS = ("task", "state", "by", "at", "prev", "reason", "evidence", "artifacts", "message")


def signed_fields(document: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """The (name, value) pairs a status document's signature covers."""
    out: list[tuple[str, str | None]] = []
    for name in SIGNED_FIELDS:
        value = document.get(name)
        if name == "artifacts" and value is not None:
            pairs = [[str(a.get("name")), str(a.get("location"))] for a in value]
            value = json.dumps(pairs, ensure_ascii=False, separators=(",", ":"))
        out.append((name, None if value is None else str(value)))
    if document.get("envelope") is not None:  # absent from files signed before it existed
        out.append(("envelope", str(document["envelope"])))
    if document.get("amendment") is not None:  # a claim of an amended task (issue 38)
        out.append(("amendment", str(document["amendment"])))
    return out


def envelope_digest(data: bytes) -> str:
    """What a `submitted` records of the envelope file it submitted (`envelope`)."""
    import hashlib

    return "sha256:" + hashlib.sha256(data).hexdigest()


def sign_document(document: Mapping[str, Any], private: bytes) -> dict[str, Any]:
    """`document` with its `sig` (last, as `StatusRecord` orders its fields)."""
    fields = {key: value for key, value in document.items() if key != "sig"}
    fields["sig"] = signing.sign(private, TRANSITION_DOMAIN, signed_fields(fields))
    return fields


def verifies(document: Mapping[str, Any], public: bytes) -> bool:
    """Whether the document's `sig` is its fields' signature under `public`."""
    sig = document.get("sig")
    if not isinstance(sig, str):
        return False
    try:
        return signing.verify(public, TRANSITION_DOMAIN, signed_fields(document), sig)
    except (TypeError, ValueError):
        return False
