"""The tools' input schemas as a model reads them: what pydantic generates, less its noise.

pydantic puts a `title` on every property and on the schema itself, and spells an optional
parameter `anyOf: [T, {"type": "null"}]` with `default: null`. A model needs neither: a
parameter not in `required` is optional. Stripping them pays for descriptions that say what
each parameter means (the budget: all tools within 3,000 cl100k tokens, tests/mcp).
"""

from __future__ import annotations

from typing import Any

_NULL = {"type": "null"}


def slim(schema: Any) -> Any:
    """A copy of `schema` without titles, null branches and null defaults."""
    if isinstance(schema, list):
        return [slim(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and value is None:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: slim(prop) for name, prop in value.items()}
            continue
        out[key] = slim(value)
    branches = out.get("anyOf")
    if isinstance(branches, list) and _NULL in branches:
        rest = [b for b in branches if b != _NULL]
        del out["anyOf"]
        if len(rest) == 1 and isinstance(rest[0], dict):
            out = {**rest[0], **out}
        elif rest:
            out["anyOf"] = rest
    return out
