"""An agent with a key acts only signed (issue 35, items 1 and 5): nobody may revoke its key but
itself or the operator, taskfs writes no unsigned act in its name, and a lineage link counts
only from a submission that verifies as its sender's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_authority import forge, status_files
from tests.helpers import commit_as, git, submit, taskfs, write_envelope


@pytest.fixture
def machines(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Two machines' key folders: the planner's (its key) and mallory's (no key of anyone's)."""
    folders = {"planner": tmp_path / "planner-keys", "mallory": tmp_path / "mallory-keys"}
    for folder in folders.values():
        folder.mkdir(mode=0o700)
    monkeypatch.setenv("TASKFS_KEY_DIR", str(folders["planner"]))
    made = taskfs("keys", "new", "--agent", "planner", "--json")
    assert made.code == 0, made.stdout
    return folders


def on(machine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TASKFS_KEY_DIR", str(machine))


def codes(cwd: Path | None = None) -> list[tuple[str, str]]:
    result = taskfs("audit", "--json", cwd=cwd)
    assert result.code in (0, 1), result.stdout + result.stderr
    return sorted((f["code"], f["path"]) for f in result.json["findings"])


def unchanged(repo: Path, head: str) -> None:
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""


# -- item 1: revocations ---------------------------------------------------------------------


def test_only_the_key_owner_or_the_operator_revokes_a_key(
    repo: Path, machines: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    task = submit(repo)  # from planner, signed on planner's machine
    on(machines["mallory"], monkeypatch)
    head = git(repo, "rev-parse", "HEAD")
    refused = taskfs("keys", "remove", "--agent", "planner", "--by", "mallory", "--json")
    assert (refused.code, refused.codes) == (1, ["agent_not_allowed"])
    assert refused.json["errors"][0]["rule"] == "revocation"
    unchanged(repo, head)
    assert (repo / ".taskfs" / "keys" / "agent" / "planner.pub").is_file()
    # Nor does anyone write an unsigned act in planner's name while its key stands.
    moved = taskfs("move", task, "canceled", "--agent", "planner", "--json")
    assert (moved.code, moved.codes) == (1, ["signature_required"])
    unchanged(repo, head)

    # The same revocation with plain git, as taskfs used to write it: named, and the key still
    # stands for what follows.
    key = (repo / ".taskfs/keys/agent/planner.pub").read_text().strip()
    record = ".taskfs/keys/revoked/agent/planner-0000000000000000.yaml"
    (repo / record).parent.mkdir(parents=True)
    (repo / record).write_text(
        f"name: planner\nkey: {key}\nkeyId: 0000000000000000\nby: mallory\n"
        "at: '2026-01-01T00:00:00.000000Z'\n"
    )
    git(repo, "rm", "-q", ".taskfs/keys/agent/planner.pub")
    commit_as(repo, "mallory", "revoke planner", ".taskfs")
    head = git(repo, "rev-parse", "HEAD")
    moved = taskfs("move", task, "canceled", "--agent", "planner", "--json")
    assert (moved.code, moved.codes) == (1, ["signature_required"])
    unchanged(repo, head)
    canceled = forge(
        repo, task, "0002-canceled-aaaaaaaa.yaml", state="canceled", by="planner",
        prev=status_files(repo, task)[0],
    )  # fmt: skip
    found = codes()
    assert ("agent_key_changed", ".taskfs/keys/agent/planner.pub") in found
    assert ("transition_unauthorized", canceled) in found
    named = {f["path"]: f for f in taskfs("audit", "--json").json["findings"]}
    assert named[".taskfs/keys/agent/planner.pub"]["rule"] == "agent-key"
    # Each names the file, the commit, who wrote it and the rule it broke.
    forged = named[canceled]
    assert forged["rule"] == "status"
    assert forged["author"] == "planner <planner@taskfs>"
    assert forged["commit"] == git(repo, "rev-parse", "--short=12", "HEAD")


def test_the_owner_revokes_its_own_key_signed_and_the_operator_any(
    repo: Path, machines: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    done = taskfs("keys", "remove", "--agent", "planner", "--by", "planner", "--json")
    assert done.code == 0, done.stdout
    assert "sig:" in (repo / done.json["record"]).read_text()
    assert codes() == []
    # The operator (no agent named) revokes a peer's key, as interlink's remove_peer does.
    peer = "CZZWn2Kuz2I5y4dnRxjntKDA8jRhsvl-nwwrqUmCijo"
    assert taskfs("keys", "add", "--agent", "helper", "--public", peer).code == 0
    on(machines["mallory"], monkeypatch)
    assert taskfs("keys", "remove", "--agent", "helper", "--json").code == 0
    assert codes() == []
    notes = taskfs("audit", "--json").json["notes"]
    assert sorted(n["code"] for n in notes) == ["agent_key_revoked", "agent_key_revoked"]


def test_a_revocation_record_in_the_owners_name_but_unsigned_is_named(
    repo: Path, machines: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    on(machines["mallory"], monkeypatch)
    refused = taskfs("keys", "remove", "--agent", "planner", "--by", "planner", "--json")
    assert (refused.code, refused.codes) == (1, ["signature_required"])
    key = (repo / ".taskfs/keys/agent/planner.pub").read_text().strip()
    record = ".taskfs/keys/revoked/agent/planner-0000000000000000.yaml"
    (repo / record).parent.mkdir(parents=True)
    (repo / record).write_text(
        f"name: planner\nkey: {key}\nkeyId: 0000000000000000\nby: planner\n"
        "at: '2026-01-01T00:00:00.000000Z'\n"
    )
    git(repo, "rm", "-q", ".taskfs/keys/agent/planner.pub")
    commit_as(repo, "planner", "revoke", ".taskfs")
    found = codes()
    assert ("agent_key_changed", ".taskfs/keys/agent/planner.pub") in found


# -- item 5: a forged retry ------------------------------------------------------------------


def _failed_with_dependent(repo: Path) -> tuple[str, str]:
    ta = submit(repo, id="ta", filesAndInterfaces=["src/ta/**"])
    td = submit(repo, id="td", dependsOn=["ta"], filesAndInterfaces=["src/td/**"])
    assert taskfs("claim", ta, "--agent", "builder").code == 0
    failed = taskfs("move", ta, "failed", "--agent", "builder", "--reason", "too hard")
    assert failed.code == 0
    return ta, td


# The failed task's contract, as a retry repeats it (its sender and acceptance command).
RETRY = {"id": "ta-r1", "x-retriedFrom": "ta", "filesAndInterfaces": ["src/ta/**"]}


def test_new_refuses_an_unsigned_submission_in_the_name_of_an_agent_with_a_key(
    repo: Path, machines: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _failed_with_dependent(repo)
    on(machines["mallory"], monkeypatch)
    head = git(repo, "rev-parse", "HEAD")
    path = write_envelope(repo.parent / "retry.yaml", **RETRY)
    refused = taskfs("new", str(path), "--json")
    assert (refused.code, refused.codes) == (1, ["signature_required"])
    assert refused.json["errors"][0]["rule"] == "status"
    unchanged(repo, head)
    assert not (repo / "tasks" / "ta-r1").exists()


def test_a_forged_retry_satisfies_no_dependent_and_the_claim_resting_on_it_is_named(
    repo: Path, machines: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ta, td = _failed_with_dependent(repo)
    # Mallory, without planner's key, writes the retry with plain git in planner's name.
    folder = repo / "tasks" / "ta-r1"
    (folder / "status").mkdir(parents=True)
    write_envelope(folder / "envelope.yaml", **RETRY)
    (folder / "status" / "0001-submitted-aaaaaaaa.yaml").write_text(
        "task: ta-r1\nstate: submitted\nby: planner\nat: '2026-01-01T00:00:00.000000Z'\n"
    )
    commit_as(repo, "planner", "retry", "tasks/ta-r1")
    on(machines["mallory"], monkeypatch)
    # Its recipient, who cannot tell, works it and completes it.
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "login.py").write_text("ok = True\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "login")
    assert taskfs("claim", "ta-r1", "--agent", "builder").code == 0
    assert taskfs("check", "ta-r1", "--agent", "builder").code == 0
    assert taskfs("complete", "ta-r1", "--agent", "builder").code == 0
    refused = taskfs("claim", td, "--agent", "builder", "--json")
    assert (refused.code, refused.codes) == (1, ["dependencies_unresolved"])
    # A claim of td made anyway (plain git) is named for the link it rests on.
    claim = forge(
        repo, td, "0002-working-aaaaaaaa.yaml", state="working", by="builder",
        prev=status_files(repo, td)[0],
    )  # fmt: skip
    found = codes()
    assert ("transition_unauthorized", "tasks/ta-r1/status/0001-submitted-aaaaaaaa.yaml") in found
    assert ("dependencies_unresolved", claim) in found
    # The real sender can still retry: the forged task is no successor of ta.
    on(machines["planner"], monkeypatch)
    retried = taskfs("retry", ta, "--agent", "planner", "--json")
    assert retried.code == 0, retried.stdout
