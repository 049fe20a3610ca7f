"""The demo repository, grown into a small team's ledger for the board: `taskfs demo --keep`
builds it, then planner hands out eight more tasks that end up in different states: one ready,
one blocked behind work in progress, one dead (it depends on a task that was rejected), one
failed, one handed on to another agent (`taskfs reassign`), and two whose holders count as
quiet (the repository calls a holder stale after a moment).

Used by the board's browser test and by bench/board_screenshot.py (docs/board.png).
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
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
    "greet-emoji": {
        "objective": "Greet with an emoji when the terminal can show one.",
        "filesAndInterfaces": ["emoji.py"],
        "acceptanceCheck": {
            "passFailCommand": "python3 -c 'import emoji'",
            "endToEndVerification": "greet('Ada') in a UTF-8 terminal shows a wave.",
        },
    },
    "greet-benchmark": {
        "objective": "Measure greet() on a million names and keep the script.",
        "filesAndInterfaces": ["bench_greet.py"],
        "acceptanceCheck": {
            "passFailCommand": "python3 bench_greet.py --quick",
            "endToEndVerification": "The script prints names per second.",
        },
    },
    "announce-french": {
        "objective": "Announce the French greeting on the project's news page.",
        "to": "writer",
        "contextID": "docs",
        "filesAndInterfaces": ["NEWS.md"],
        "dependsOn": ["translate-greeting"],
        "acceptanceCheck": {
            "passFailCommand": "grep -q Bonjour NEWS.md",
            "endToEndVerification": "The news page says Bonjour.",
        },
    },
    "polite-docs": {
        "objective": "Document polite=True once greet-polite has landed.",
        "to": "writer",
        "contextID": "docs",
        "filesAndInterfaces": ["docs/polite.md"],
        "dependsOn": ["greet-polite"],
        "acceptanceCheck": {
            "passFailCommand": "grep -q polite docs/polite.md",
            "endToEndVerification": "A reader finds how to be polite.",
        },
    },
}


REJECTED_REASON = "French needs a translator; nobody here speaks it well enough."
FAILED_REASON = "Terminals here cannot show emoji; the greeting comes out garbled."
REASSIGNED = "greet-benchmark-r1"  # greet-benchmark, handed on to helper


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
        _taskfs("claim", "greet-emoji", "--agent", "builder")
        _taskfs("move", "greet-emoji", "failed", "--agent", "builder", "--reason", FAILED_REASON)
        # builder never took the benchmark up: planner hands it to helper.
        _taskfs("reassign", "greet-benchmark", "--to", "helper", "--agent", "planner")
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
        # This team calls a holder stale after a moment, so the board marks held work.
        config = repo / ".taskfs" / "config.yaml"
        settings = yamlio.load(config.read_bytes())
        settings["nudge"] = {"staleHours": 0.000001}
        config.write_text(yamlio.dump(settings))
        subprocess.run(
            ["git", "commit", "-q", "-m", "stale after a moment", "--", str(config)],
            cwd=repo,
            check=True,
            capture_output=True,
        )
    return repo


def remove(repo: Path) -> None:
    shutil.rmtree(repo.parent, ignore_errors=True)
