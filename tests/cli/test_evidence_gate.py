"""The completion gate reads what it read of a task's evidence before (issue 19): complete
loads no evidence model, and never trusts what it kept past a change of the evidence's bytes or
of the runner trust."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_evidence import check, make_task, new_runner
from tests.helpers import git, taskfs
from tests.test_startup import _fast


def test_complete_after_a_check_loads_no_evidence_model(repo: Path) -> None:
    task = make_task(repo, "true")
    assert check(task).code == 0
    done = _fast(repo, ["complete", task, "--agent", "builder", "--json"])
    assert done["code"] == 0, done["stdout"]
    assert json.loads(str(done["stdout"]))["state"] == "completed"
    assert done["loaded"] == []  # no pydantic, no YAML, no OpenSSL bindings, no click
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
