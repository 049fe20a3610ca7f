"""The completion gate reads what it read of a task's evidence before (issue 19): complete
loads no evidence model, and never trusts what it kept past a change of the evidence's bytes or
of the runner trust."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.cli.test_evidence import check, make_task, new_runner
from tests.helpers import git, taskfs

PROBE = """
import contextlib, io, json, sys
from taskfs.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main({args!r})
    except SystemExit as exc:
        code = exc.code
heavy = ("pydantic", "yaml", "cryptography")
print(json.dumps({{"code": code, "stdout": out.getvalue(),
                  "loaded": [m for m in heavy if m in sys.modules]}}))
"""


def _complete(repo: Path, task: str) -> dict[str, object]:
    args = ["complete", task, "--agent", "builder", "--json"]
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args)],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(out.stdout))


def test_complete_after_a_check_loads_no_evidence_model(repo: Path) -> None:
    task = make_task(repo, "true")
    assert check(task).code == 0
    done = _complete(repo, task)
    assert done["code"] == 0, done["stdout"]
    assert json.loads(str(done["stdout"]))["state"] == "completed"
    assert done["loaded"] == []  # no pydantic, no YAML, no OpenSSL bindings
    assert taskfs("audit", "--json").json["ok"] is True


def test_kept_facts_are_dropped_when_the_evidence_bytes_change(repo: Path) -> None:
    """A passing check rewritten by hand into a failing one (and committed) is read again: the
    kept facts named the pass."""
    task = make_task(repo, "true")
    passed = check(task)
    assert passed.code == 0
    evidence = repo / passed.json["evidence"]
    evidence.write_text(evidence.read_text().replace("verdict: pass", "verdict: fail"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "rewrite the evidence by hand")
    done = taskfs("complete", task, "--agent", "builder", "--json")
    assert done.code == 1
    assert done.codes == ["completion_requires_evidence"]


def test_kept_facts_are_dropped_when_the_runner_trust_changes(repo: Path) -> None:
    """Evidence kept as validly signed is judged again when the trusted runner keys change:
    the runner that signed it is trusted no more, so it counts no more."""
    new_runner("ci")
    task = make_task(repo, "true")
    passed = check(task)
    assert passed.json["signed"] is True
    git(repo, "rm", "-q", ".taskfs/keys/runner/ci.pub")
    git(repo, "commit", "-q", "-m", "retire the ci runner")
    new_runner("other")
    done = taskfs("complete", task, "--agent", "builder", "--json")
    assert done.code == 1
    assert done.codes == ["completion_requires_evidence"]
    assert "not signed by a trusted runner key" in done.json["errors"][0]["message"]
