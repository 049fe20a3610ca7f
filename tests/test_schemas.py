"""The committed JSON Schemas are generated from the models; they must never drift."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from taskfs.schemas import render_all

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"


def test_committed_schemas_match_the_models() -> None:
    rendered = render_all()
    committed = {p.name: p.read_text(encoding="utf-8") for p in SCHEMAS.glob("*.json")}
    assert sorted(committed) == sorted(rendered), "run: python -m taskfs.schemas"
    for name, text in rendered.items():
        assert committed[name] == text, f"{name} drifted from the model: python -m taskfs.schemas"


def test_the_envelope_schema_accepts_an_example_and_refuses_a_typo() -> None:
    schema = json.loads((SCHEMAS / "envelope.schema.json").read_text())
    good = {
        "objective": "o",
        "outputFormat": "f",
        "toolAndSourceGuidance": "t",
        "boundaries": "b",
        "filesAndInterfaces": ["a.py"],
        "acceptanceCheck": {"passFailCommand": "true", "endToEndVerification": "e"},
        "contextID": "c",
        "x-mine": 1,
    }
    jsonschema.validate(good, schema)
    bad = {**good, "objectve": "typo"}
    try:
        jsonschema.validate(bad, schema)
    except jsonschema.ValidationError:
        return
    raise AssertionError("the schema accepted an unknown key")
