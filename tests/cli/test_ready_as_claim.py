"""`ready` never offers what `claim` refuses, when a dependency rests on a word rather than a
fact (issues 35 and 36): an archive file that says an archived task completed when the commit
the archive took it from says otherwise, and a retry whose submission is not its sender's act
(`x-retriedFrom` written with plain git in the sender's name). The claim reads both from git
(`taskfs.api.lifecycle.standing`); `ready` must read them by the same rule, with the read
model's store and without it, through the fast path and through click.

Each case keeps a genuine twin beside the forgery (a dependency archived completed, a retry
its sender made), which `ready` offers and `claim` takes: the rule refuses the word, not the
kind of dependency.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli.test_signed_acts import machines, on  # noqa: F401 - a fixture, used by name
from tests.helpers import check, commit_as, git, submit, taskfs, write_envelope
from tests.readmodel.test_never_trusted import _forget_open_stores, cache_dir

TRUE = {"passFailCommand": "true", "endToEndVerification": "it runs"}


def _offered(repo: Path, agent: str = "builder") -> dict[str, list[str]]:
    """What `ready` offers `agent`, asked every way: the fast path on the store, click on the
    store, and both again with no store (each builds it anew)."""
    out: dict[str, list[str]] = {}
    for store in ("kept", "dropped"):
        for path, lang in (("fast", ()), ("click", ("--lang", "en"))):
            if store == "dropped":
                shutil.rmtree(cache_dir(repo), ignore_errors=True)
                _forget_open_stores()
            found = taskfs(*lang, "ready", "--json", "--agent", agent)
            assert found.code == 0, found.stdout + found.stderr
            out[f"{path}, store {store}"] = [t["id"] for t in found.json["tasks"]]
    return out


def _claim_refused(task: str) -> None:
    refused = taskfs("claim", task, "--agent", "builder", "--json")
    assert (refused.code, refused.codes) == (1, ["dependencies_unresolved"]), refused.stdout


def test_a_forged_archive_row_is_no_completion_to_ready_either(repo: Path) -> None:
    # gone: canceled, then archived; done: completed, then archived (the genuine twin).
    submit(repo, id="gone", filesAndInterfaces=["src/gone/**"])
    assert taskfs("move", "gone", "canceled", "--agent", "planner", "--reason", "moot").code == 0
    assert taskfs("archive", "--older-than", "0").code == 0
    submit(repo, id="done", filesAndInterfaces=["src/done/**"], acceptanceCheck=TRUE)
    assert taskfs("claim", "done", "--agent", "builder").code == 0
    check("done")
    assert taskfs("complete", "done", "--agent", "builder").code == 0
    assert taskfs("archive", "--older-than", "0").code == 0
    submit(repo, id="needs-gone", dependsOn=["gone"], filesAndInterfaces=["src/needs-gone/**"])
    submit(repo, id="needs-done", dependsOn=["done"], filesAndInterfaces=["src/needs-done/**"])
    assert all("needs-gone" not in ids for ids in _offered(repo).values())
    # The archive's row of gone said again, completed, in an archive file of its own.
    first = sorted((repo / ".taskfs" / "archive").iterdir())[0]  # gone's alone
    forged = repo / ".taskfs" / "archive" / "20300101T000000.000000Z-aaaaaaaa.yaml"
    forged.write_text(first.read_text().replace('"canceled"', '"completed"'))
    assert forged.read_text() != first.read_text()
    commit_as(repo, "planner", "archive again", ".taskfs")
    listed = taskfs("ls", "--archived", "--json").json["tasks"]
    assert {t["id"]: t["state"] for t in listed}["gone"] == "completed"  # the file's word
    for way, ids in _offered(repo).items():
        assert "needs-gone" not in ids, way
        assert "needs-done" in ids, way
    _claim_refused("needs-gone")
    assert taskfs("claim", "needs-done", "--agent", "builder").code == 0


# The failed task's contract, as a retry repeats it (its sender and acceptance command).
RETRY = {"x-retriedFrom": "ta", "filesAndInterfaces": ["src/ta/**"]}


def test_a_forged_retry_is_no_successor_to_ready_either(
    repo: Path,
    machines: dict[str, Path],  # noqa: F811 - the fixture
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # ta and tb failed; td waits for ta, te for tb. planner has a key (`machines`).
    for task, waiting in (("ta", "td"), ("tb", "te")):
        submit(repo, id=task, filesAndInterfaces=[f"src/{task}/**"])
        submit(repo, id=waiting, dependsOn=[task], filesAndInterfaces=[f"src/{waiting}/**"])
        assert taskfs("claim", task, "--agent", "builder").code == 0
        moved = taskfs("move", task, "failed", "--agent", "builder", "--reason", "too hard")
        assert moved.code == 0, moved.stdout + moved.stderr
    # planner retries tb itself (signed); mallory writes ta's retry with plain git.
    retried = taskfs("retry", "tb", "--agent", "planner", "--json")
    assert retried.code == 0, retried.stdout
    successor = retried.json["newId"]
    folder = repo / "tasks" / "ta-r1"
    (folder / "status").mkdir(parents=True)
    write_envelope(folder / "envelope.yaml", id="ta-r1", **RETRY)
    (folder / "status" / "0001-submitted-aaaaaaaa.yaml").write_text(
        "task: ta-r1\nstate: submitted\nby: planner\nat: '2026-01-01T00:00:00.000000Z'\n"
    )
    commit_as(repo, "planner", "retry", "tasks/ta-r1")
    on(machines["mallory"], monkeypatch)
    # Their recipient, who cannot tell, works both and completes both.
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "login.py").write_text("ok = True\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "login")
    for task in ("ta-r1", successor):
        assert taskfs("claim", task, "--agent", "builder").code == 0
        assert taskfs("check", task, "--agent", "builder").code == 0
        assert taskfs("complete", task, "--agent", "builder").code == 0
    assert git(repo, "status", "--porcelain") == ""
    for way, ids in _offered(repo).items():
        assert "td" not in ids, way
        assert "te" in ids, way
    _claim_refused("td")
    assert taskfs("claim", "te", "--agent", "builder").code == 0
