"""JSON Schemas of taskfs's files, generated from the models (the models are the truth).

`python -m taskfs.schemas [DIR]` writes them (default: ./schemas); a test fails when the
committed copies drift from the models.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from taskfs.core.capabilities import CapabilityLedger
from taskfs.core.config import Config
from taskfs.core.envelope import envelope_json_schema
from taskfs.core.evidence_records import evidence_json_schema
from taskfs.core.records import MessageRecord, ReadRecord, StatusRecord

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _model_schema(model: Any, title: str) -> Callable[[], dict[str, Any]]:
    def build() -> dict[str, Any]:
        schema: dict[str, Any] = model.model_json_schema(by_alias=True, mode="validation")
        return {"$schema": DRAFT, **schema, "title": title}

    return build


GENERATORS: dict[str, Callable[[], dict[str, Any]]] = {
    "envelope.schema.json": envelope_json_schema,
    "status.schema.json": _model_schema(StatusRecord, "taskfs status file"),
    "evidence.schema.json": lambda: {
        "$schema": DRAFT,
        **evidence_json_schema(),
        "title": "taskfs evidence file",
    },
    "config.schema.json": _model_schema(Config, "taskfs repository settings"),
    "message.schema.json": _model_schema(MessageRecord, "taskfs message file"),
    "read.schema.json": _model_schema(ReadRecord, "taskfs read mark"),
    "ledger.schema.json": _model_schema(CapabilityLedger, "taskfs capability ledger"),
}


def schema_text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_all() -> dict[str, str]:
    return {name: schema_text(build()) for name, build in GENERATORS.items()}


def write_all(folder: Path) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in render_all().items():
        target = folder / name
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
            written.append(name)
    return written


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("schemas")
    for name in write_all(out):
        print(f"wrote {out / name}")
