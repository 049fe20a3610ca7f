"""The demo repository, grown into a small team's ledger for the board: `taskfs demo --keep`
builds it, then planner hands out four more tasks that end up in different states.

Used by the board's browser test and by bench/board_screenshot.py (docs/board.png).
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

from taskfs.core import yamlio
from taskfs.demo import inside

# id -> what differs from the base envelope
EXTRA: dict[str, dict[str, Any]] = {
    "greet-polite": {
        "objective": "Let greet() take polite=True and answer 'Good day, Ada.' instead.",
        "filesAndInterfaces": ["polite.py", "test_polite.py"],
        "acceptanceCheck": {
            "passFailCommand": "python3 test_polite.py",
            "endToEndVerification": "python3 -c 'import polite; print(polite.greet(\"Ada\"))'",
        },
    },
    "docs-greeting": {
        "objective": "Document greet() and its empty-name rule in the README of the demo.",
        "to": "writer",
        "contextID": "docs",
        "filesAndInterfaces": ["README.md"],
        "dependsOn": [],  # filled in with the demo task's id
        "acceptanceCheck": {
            "passFailCommand": "grep -q 'greet(' README.md",
            "endToEndVerification": "Someone new follows the README and greets Ada.",
        },
    },
    "translate-greeting": {
        "objective": "Translate the greeting into French and make the language configurable.",
        "filesAndInterfaces": ["i18n/**"],
        "acceptanceCheck": {
            "passFailCommand": "python3 -c 'import i18n'",
            "endToEndVerification": "greet('Ada', lang='fr') answers Bonjour, Ada !",
        },
    },
    "release-notes": {
        "objective": "Write release notes for the greeting fix, in the project's usual style.",
        "to": "writer",
        "contextID": "docs",
        "filesAndInterfaces": ["CHANGES.md"],
        "acceptanceCheck": {
            "passFailCommand": "test -s CHANGES.md && grep -q greet CHANGES.md",
            "endToEndVerification": "The notes name the change and how to upgrade.",
        },
    },
}


REJECTED_REASON = "French needs a translator; nobody here speaks it well enough."


def _base(task_id: str) -> dict[str, Any]:
    return {
        "id": task_id,
        "outputFormat": "A commit to the demo repository.",
        "toolAndSourceGuidance": "Python 3 only; read greet.py first.",
        "boundaries": "Do not change greet.py's existing behaviour or add dependencies.",
        "contextID": "demo",
        "from": "planner",
        "to": "builder",
    }


def _taskfs(*args: str, allowed: tuple[int, ...] = (0,)) -> str:
    from taskfs.cli.app import run

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(list(args))
    if code not in allowed:
        raise RuntimeError(
            f"taskfs {' '.join(args)} failed ({code}): {out.getvalue()}{err.getvalue()}"
        )
    return out.getvalue()


def build() -> Path:
    """A kept demo repository with five tasks; the caller removes `path.parent` when done."""
    text = _taskfs("demo", "--keep")
    marker = "The demo repository is kept at "
    repo = Path(text[text.index(marker) + len(marker) :].strip().splitlines()[0])
    with inside(repo):
        demo = _taskfs("ls", "--json")
        demo_id = str(json.loads(demo)["tasks"][0]["id"])
        # The demo itself ran a failing check, fixed greet.py, and completed the task.
        for task_id, changes in EXTRA.items():
            envelope = {**_base(task_id), **changes}
            if task_id == "docs-greeting":
                envelope["dependsOn"] = [demo_id]
            path = repo / f"{task_id}.yaml"
            path.write_text(yamlio.dump(envelope))
            _taskfs("new", str(path))
            path.unlink()
        _taskfs("claim", "greet-polite", "--agent", "builder")
        # polite.py does not exist yet: the check fails (exit 1) and its evidence shows red.
        _taskfs("check", "greet-polite", "--agent", "builder", allowed=(1,))
        _taskfs(
            "refuse",
            "translate-greeting",
            "--agent",
            "builder",
            "--reason",
            REJECTED_REASON,
        )
        _taskfs("claim", "release-notes", "--agent", "writer")
        _taskfs(
            "send",
            "release-notes",
            "Which version number do these notes go under?",
            "--agent",
            "writer",
            "--to",
            "planner",
            "--status",
            "needs_input",
        )
    return repo


def remove(repo: Path) -> None:
    shutil.rmtree(repo.parent, ignore_errors=True)
