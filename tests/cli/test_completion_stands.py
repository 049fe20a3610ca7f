"""A dependency's completion counts for `ready` as it counts for the claim: only when it stands
(`taskfs.store.completions`: its holder's or sender's own act, signed where that agent had a key
when the file was committed, on a passing run of the task's own command). The read model keeps
the answer in the completed task's row, made by the claim's own rule; `ready` (fast path and
click, with the store and without), the inbox (CLI and MCP) and the claim must agree on every
form of a completion that does not stand, and each forgery keeps a genuine twin beside it that
all of them offer and take.

Each forgery is what taskfs refuses to write, so it is written by hand and committed with plain
git, authored as taskfs authors its `by`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from taskfs.core import act_signing, yamlio
from taskfs.store import keys
from tests.cli.test_authority import AT, findings, make_keys, status_files
from tests.cli.test_ready_as_claim import _offered
from tests.helpers import check, commit_as, git, send, submit, taskfs
from tests.mcp.test_server import serve, server_env


def _plan(repo: Path) -> None:
    """first and twin, builder's; second waits for first, after-twin for twin. builder works
    both; twin it completes through taskfs, first is for the forgery to complete."""
    for task in ("first", "twin"):
        submit(repo, id=task, filesAndInterfaces=[f"src/{task}.py"])
    submit(repo, id="second", dependsOn=["first"], filesAndInterfaces=["src/second.py"])
    submit(repo, id="after-twin", dependsOn=["twin"], filesAndInterfaces=["src/after.py"])
    (repo / "src" / "auth").mkdir(parents=True, exist_ok=True)
    (repo / "src" / "auth" / "login.py").write_text("x\n")  # what their check asks for
    commit_as(repo, "builder", "the work", "src")
    for task in ("first", "twin"):
        assert taskfs("claim", task, "--agent", "builder").code == 0
    check("twin")
    assert taskfs("complete", "twin", "--agent", "builder").code == 0


def _completion(repo: Path, by: str = "builder", **fields: str) -> str:
    """first's completion, as `fields` say it (`sign`: whose private key signs it), committed
    with plain git as `by`; its repository-relative path."""
    signer = fields.pop("sign", None)
    document = {
        "task": "first",
        "state": "completed",
        "by": by,
        "at": AT.strip("'"),
        "prev": status_files(repo, "first")[-1],
        **fields,
    }
    if signer is not None:
        pair = keys.load_private("agent", signer)
        assert pair is not None
        document = act_signing.sign("status", document, pair.private)
    rel = "tasks/first/status/0003-completed-aaaaaaaa.yaml"
    (repo / rel).write_text(yamlio.dump(document))
    commit_as(repo, by, "forged", rel)
    return rel


def _evidence(repo: Path) -> str:
    return Path(check("first")).name


def _run(repo: Path, **fields: str) -> str:
    """An evidence file for first written by hand (a passing run, unless `fields` say else)."""
    document = {
        "task": "first",
        "kind": "check",
        "command": "test -f src/auth/login.py",
        "verdict": "pass",
        "exitCode": 0,
        "at": AT.strip("'"),
        **fields,
    }
    name = "20260101T000000.000000Z-bbbbbbbb.yaml"
    rel = f"tasks/first/evidence/{name}"
    (repo / rel).parent.mkdir(exist_ok=True)
    (repo / rel).write_text(yamlio.dump(document))
    commit_as(repo, "builder", "a run", rel)
    return name


def unsigned_while_a_key_stood_revoked_since(repo: Path) -> str:
    rel = _completion(repo, evidence=_evidence(repo))
    assert taskfs("keys", "remove", "--agent", "builder", "--by", "builder").code == 0
    return rel


def unsigned_while_a_key_stood(repo: Path) -> str:
    return _completion(repo, evidence=_evidence(repo))


def signed_with_another_agents_key(repo: Path) -> str:
    make_keys("mallory")
    return _completion(repo, evidence=_evidence(repo), sign="mallory")


def by_someone_not_allowed(repo: Path) -> str:
    make_keys("mallory")
    return _completion(repo, by="mallory", evidence=_evidence(repo), sign="mallory")


def naming_no_run(repo: Path) -> str:
    return _completion(repo, evidence="20260101T000000.000000Z-cccccccc.yaml", sign="builder")


def on_a_failing_run(repo: Path) -> str:
    (repo / "src" / "auth" / "login.py").unlink()
    failed = _evidence(repo)
    (repo / "src" / "auth" / "login.py").write_text("x\n")
    return _completion(repo, evidence=failed, sign="builder")


def on_a_run_of_another_command(repo: Path) -> str:
    return _completion(repo, evidence=_run(repo, command="true"), sign="builder")


def on_a_run_of_another_task(repo: Path) -> str:
    """twin's passing run (the same command), copied into first's folder."""
    (run,) = (repo / "tasks" / "twin" / "evidence").iterdir()
    (repo / "tasks" / "first" / "evidence").mkdir(exist_ok=True)
    (repo / "tasks" / "first" / "evidence" / run.name).write_bytes(run.read_bytes())
    commit_as(repo, "builder", "a run", "tasks/first/evidence")
    return _completion(repo, evidence=run.name, sign="builder")


def resting_on_anothers_message(repo: Path) -> str:
    said = send("first", "planner", "builder", "Any news?")
    return _completion(repo, evidence=_evidence(repo), message=said)


def resting_on_a_message_that_asks_no_completion(repo: Path) -> str:
    said = send("first", "builder", "planner", "Nearly there.")
    return _completion(repo, evidence=_evidence(repo), message=said)


FORGERIES: dict[str, Callable[[Path], str]] = {
    f.__name__: f
    for f in (
        unsigned_while_a_key_stood_revoked_since,
        unsigned_while_a_key_stood,
        signed_with_another_agents_key,
        by_someone_not_allowed,
        naming_no_run,
        on_a_failing_run,
        on_a_run_of_another_command,
        on_a_run_of_another_task,
        resting_on_anothers_message,
        resting_on_a_message_that_asks_no_completion,
    )
}


def _to_claim(agent: str = "builder") -> list[str]:
    """What the inbox offers `agent` to claim now (`toClaim`, marked `ready`)."""
    box = taskfs("inbox", "--agent", agent, "--json")
    assert box.code == 0, box.stdout + box.stderr
    return [t["id"] for t in box.json["toClaim"] if t["ready"]]


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_a_completion_that_does_not_stand_is_no_completion_to_ready_either(
    repo: Path, forgery: str
) -> None:
    make_keys("planner", "builder")
    _plan(repo)
    rel = FORGERIES[forgery](repo)
    assert taskfs("show", "first", "--json").json["state"] == "completed"  # the chain's word
    assert rel in {path for _code, path in findings()}  # audit names it
    for way, ids in _offered(repo).items():
        assert "second" not in ids, way
        assert "after-twin" in ids, way
    to_claim = _to_claim()
    assert "second" not in to_claim
    assert "after-twin" in to_claim
    refused = taskfs("claim", "second", "--agent", "builder", "--json")
    assert (refused.code, refused.codes) == (1, ["dependencies_unresolved"]), refused.stdout
    assert taskfs("claim", "after-twin", "--agent", "builder").code == 0


def test_a_completion_forged_before_a_revocation_is_not_offered_over_mcp(
    repo: Path, tmp_path: Path
) -> None:
    make_keys("planner", "builder")
    _plan(repo)
    unsigned_while_a_key_stood_revoked_since(repo)

    async def look() -> list[str]:
        async with serve(repo, "builder", server_env(tmp_path)) as builder:
            box = await builder.ok("agent_inbox")
            return [t["id"] for t in box["toClaim"] if t["ready"]]

    to_claim = anyio.run(look)
    assert "second" not in to_claim
    assert "after-twin" in to_claim


def test_a_completion_that_stands_is_offered_whoever_made_a_key_since(repo: Path) -> None:
    """The holder's own completion, unsigned before it had a key: offered and taken."""
    _plan(repo)
    check("first")
    assert taskfs("complete", "first", "--agent", "builder").code == 0
    make_keys("builder")  # after the completion: it voids nothing
    for way, ids in _offered(repo).items():
        assert {"second", "after-twin"} <= set(ids), way
    assert {"second", "after-twin"} <= set(_to_claim())
    assert taskfs("claim", "second", "--agent", "builder").code == 0
    assert findings() == []


def test_the_watchers_completion_on_the_holders_signed_result_stands(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A completion resting on a message: the watcher's, in the holder's name, unsigned (the
    watcher has no key of the holder's), on the `result` the holder signed."""
    policy = tmp_path / "policy.yaml"
    policy.write_text("complete: true\nallow:\n  commands: ['test -f src/auth/login.py']\n")
    monkeypatch.setenv("TASKFS_POLICY", str(policy))
    make_keys("planner", "builder")
    _plan(repo)
    assert taskfs("send", "first", "done", "--agent", "builder", "--status", "result").code == 0
    assert taskfs("watch", "--once").code == 0
    assert taskfs("show", "first", "--json").json["state"] == "completed"
    for way, ids in _offered(repo).items():
        assert {"second", "after-twin"} <= set(ids), way
    assert {"second", "after-twin"} <= set(_to_claim())
    assert taskfs("claim", "second", "--agent", "builder").code == 0
    assert findings() == []


# -- a run trusted now: the one part of a completion that can change after it is committed ----


def _unsigned_run(repo: Path) -> str:
    """A passing run of first's check, as `check` records it on a machine without the trusted
    runner's key: unsigned."""
    key = keys.private_path("runner", "ci")
    away = key.with_name("elsewhere")
    key.rename(away)
    try:
        return _evidence(repo)
    finally:
        away.rename(key)


def _trust(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner: dict[str, str]) -> None:
    listed = tmp_path / "trusted-runners.yaml"
    listed.write_text(yamlio.dump({"runners": {runner["name"]: runner["publicKey"]}}))
    monkeypatch.setenv("TASKFS_TRUSTED_RUNNERS", str(listed))


TRUSTS = ("the repository's runner key", "the repository's runner key, later", "the operator's")


@pytest.mark.parametrize("trust", TRUSTS)
def test_a_completion_on_a_run_no_trusted_runner_signed_is_no_completion_to_ready_either(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trust: str
) -> None:
    """builder has no agent key: its completion, written by hand, stands but for its run,
    which no trusted runner signed; the claim refuses it, and so must `ready`, whether the
    trust was there when the completion was committed or came after it (a runner key committed
    since, or the operator's list, which no commit says: the store stands at HEAD)."""
    runner = taskfs("keys", "new", "--runner", "ci", "--json")
    assert runner.code == 0, runner.stdout
    _plan(repo)  # twin's run is signed by ci
    rel = _completion(repo, evidence=_unsigned_run(repo))
    if trust != TRUSTS[0]:
        git(repo, "rm", "-q", "--cached", ".taskfs/keys/runner/ci.pub")
        git(repo, "commit", "-q", "-m", "no runner key in the repository")
        for way, ids in _offered(repo).items():  # nothing trusts a runner yet
            assert {"second", "after-twin"} <= set(ids), way
    if trust == TRUSTS[1]:
        commit_as(repo, "planner", "the runner key again", ".taskfs/keys/runner/ci.pub")
    elif trust == TRUSTS[2]:
        _trust(tmp_path, monkeypatch, runner.json)
    assert rel in {path for _code, path in findings()}
    for way, ids in _offered(repo).items():
        assert "second" not in ids, way
        assert "after-twin" in ids, way
    assert "second" not in _to_claim()
    refused = taskfs("claim", "second", "--agent", "builder", "--json")
    assert (refused.code, refused.codes) == (1, ["dependencies_unresolved"]), refused.stdout
    assert taskfs("claim", "after-twin", "--agent", "builder").code == 0
