"""`taskfs check` writes its evidence without the evidence models (issue 31): what it writes is,
key for key and in the same order, what `CheckEvidence` writes of the same record, and the
facts it keeps for the completion gate are the ones the model's record gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from taskfs.core import yamlio
from taskfs.core.evidence import GateFacts
from taskfs.core.evidence_order import ordered_check
from taskfs.core.evidence_records import CheckEvidence, parse_evidence
from tests.cli.test_evidence import make_task
from tests.helpers import taskfs

SCENARIOS: dict[str, tuple[str, dict[str, Any], list[str]]] = {
    "pass": ("true", {}, []),
    "fail": ("exit 3", {}, []),
    "output": ("printf 'out\\n'; printf 'err\\n' >&2", {}, []),
    "capped": ("head -c 200000 /dev/zero | tr '\\0' x", {}, []),
    "timed out": ("sleep 5", {"timeoutSeconds": 1}, []),
    "end to end": ("true", {"endToEndCommand": "exit 2"}, []),
    "end to end skipped": ("false", {"endToEndCommand": "true"}, []),
    "llm judge": ("true", {"verdictSource": "llm_judge"}, []),
    "changes its files": ("echo x > src/made.py", {}, []),
    "fresh": ("true", {}, ["--fresh"]),
    "sandbox named": ("true", {}, ["--sandbox", "off"]),
}


def _evidence(repo: Path, path: str) -> dict[str, Any]:
    found = yamlio.load((repo / path).read_bytes())
    assert isinstance(found, dict)
    return found


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_a_check_writes_what_its_model_writes(repo: Path, scenario: str) -> None:
    command, acceptance, args = SCENARIOS[scenario]
    task = make_task(repo, command, acceptance=acceptance)
    if scenario == "changes its files":
        (repo / "src").mkdir()
        (repo / "src" / "dirty.py").write_text("not committed\n")
    result = taskfs("check", task, "--json", *args)
    assert "evidence" in result.json, result.stdout
    written = _evidence(repo, result.json["evidence"])
    record = parse_evidence(written)
    assert isinstance(record, CheckEvidence)
    assert list(record.to_document().items()) == list(written.items())
    assert list(ordered_check(written).items()) == list(written.items())
    assert GateFacts.of_document(written) == GateFacts.of(record)


def test_the_order_leaves_out_what_is_none_and_refuses_what_is_unknown() -> None:
    document = {"task": "t", "kind": "check", "signal": None, "endToEnd": {"description": "d"}}
    assert ordered_check(document) == {
        "task": "t",
        "kind": "check",
        "endToEnd": {"description": "d"},
    }
    with pytest.raises(ValueError, match="not fields"):
        ordered_check({"task": "t", "surprise": 1})


def test_a_check_reads_no_evidence_model_and_complete_needs_none(repo: Path) -> None:
    """A check's process loads neither pydantic nor click (once the settings' bytes were
    validated: the first check did); the completion it allows reads the facts it kept."""
    import json
    import subprocess
    import sys

    task = make_task(repo, "true")
    assert taskfs("check", task, "--json").code == 0
    probe = (
        "import sys, json\nfrom taskfs.cli import run\n"
        f"code = run(['check', {task!r}, '--json'])\n"
        "print(json.dumps([code, [m for m in ('pydantic', 'click') if m in sys.modules]]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True, check=True
    )
    code, loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert (code, loaded) == (0, [])
    assert taskfs("complete", task, "--agent", "builder").code == 0
