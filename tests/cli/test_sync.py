"""`taskfs sync` and `claim --sync`: clones of one bare remote exchanging the ledger."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import pytest

from taskfs.api.lifecycle.forks import superseded_transitions
from taskfs.store.repository import Repository
from tests.helpers import git, taskfs
from tests.remotes import clone, make_remote, new_task


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return make_remote(tmp_path)


def clones(remote: Path, *names: str) -> list[Path]:
    return [clone(str(remote), remote.parent / name) for name in names]


def fixed_nonces(monkeypatch: pytest.MonkeyPatch, by_clone: dict[Path, str]) -> None:
    """Status files written in a clone get that clone's nonce, so forks have a known order."""

    def name(seq: int, state: str) -> str:
        here = Path.cwd().resolve()
        nonce = next(n for c, n in by_clone.items() if here == c.resolve())
        return f"{seq:04d}-{state}-{nonce}.yaml"

    monkeypatch.setattr("taskfs.api.lifecycle.transitions.status_name", name)


def sync(where: Path, *args: str) -> dict[str, object]:
    result = taskfs("sync", "--json", *args, cwd=where)
    assert result.code == 0, result.stdout + result.stderr
    return dict(result.json)


def state_of(where: Path, task: str) -> tuple[str, str | None]:
    shown = taskfs("show", task, "--json", cwd=where).json
    return shown["state"], shown["holder"]


def snapshot(where: Path) -> tuple[str, str, str]:
    """HEAD, the porcelain status and the index: what a refused sync must leave as it was."""
    return (
        git(where, "rev-parse", "HEAD"),
        git(where, "status", "--porcelain", "--untracked-files=all"),
        git(where, "ls-files", "--stage"),
    )


# -- forks: the same winner on every clone ---------------------------------------------

ORDERS = list(itertools.permutations("abc"))


@pytest.mark.parametrize("order", ORDERS, ids=["".join(o) for o in ORDERS])
def test_three_clones_claim_offline_and_agree_in_every_order(
    remote: Path, monkeypatch: pytest.MonkeyPatch, order: tuple[str, ...]
) -> None:
    a, b, c = clones(remote, "a", "b", "c")
    task = new_task(a, to=None)
    sync(a)
    sync(b)
    sync(c)
    by_name = {"a": a, "b": b, "c": c}
    # b's nonce sorts first and c's last: the content rule alone would always pick b.
    fixed_nonces(monkeypatch, {a: "mmmmmmmm", b: "00000000", c: "xxxxxxxx"})
    for name, where in by_name.items():
        assert taskfs("claim", task, "--agent", f"agent-{name}", cwd=where).code == 0
    for name in order:
        sync(by_name[name])
    for name in order:
        sync(by_name[name])
    first = f"agent-{order[0]}"
    heads = {git(where, "rev-parse", "HEAD") for where in by_name.values()}
    assert len(heads) == 1
    for where in by_name.values():
        assert state_of(where, task) == ("working", first)
        history = taskfs("log", task, "--json", cwd=where).json["history"]
        lost = sorted(row["by"] for row in history if row.get("superseded"))
        assert lost == sorted(f"agent-{n}" for n in "abc" if n != order[0])
        assert all(row["supersededBy"]["by"] == first for row in history if row.get("superseded"))
        row = next(t for t in taskfs("ls", "--json", cwd=where).json["tasks"] if t["id"] == task)
        assert row["superseded"] == 2
        assert "(superseded" in taskfs("log", task, cwd=where).stdout
        assert taskfs("audit", "--json", cwd=where).json["ok"] is True
        repo = Repository.open(where)
        for name in "abc":
            told = superseded_transitions(repo, f"agent-{name}")
            assert [t.id for t in told] == ([] if name == order[0] else [task])
            # ... and the losing agent is told so in its inbox.
            box = taskfs("inbox", "--agent", f"agent-{name}", "--json", cwd=where).json
            assert [(t["id"], t["supersededBy"]["by"]) for t in box["superseded"]] == (
                [] if name == order[0] else [(task, first)]
            )


def test_forks_published_on_both_sides_are_settled_by_content(
    remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = clones(remote, "a", "b")
    task = new_task(a, to=None)
    sync(a)
    sync(b)
    fixed_nonces(monkeypatch, {a: "mmmmmmmm", b: "00000000"})
    assert taskfs("claim", task, "--agent", "alice", cwd=a).code == 0
    assert taskfs("claim", task, "--agent", "bob", cwd=b).code == 0
    sync(a)
    git(b, "push", "-q", "origin", "HEAD:refs/heads/bob-side")  # b's claim is published too
    result = sync(b)
    assert result["demoted"] == []
    assert [row["by"] for row in result["superseded"]] == ["alice"]  # type: ignore[index]
    sync(a)
    for where in (a, b):
        assert state_of(where, task) == ("working", "bob")
        assert taskfs("audit", "--json", cwd=where).json["ok"] is True


def test_a_transition_that_would_overturn_a_published_one_is_renamed_to_lose(
    remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = clones(remote, "a", "b")
    task = new_task(a, to=None)
    sync(a)
    sync(b)
    fixed_nonces(monkeypatch, {a: "mmmmmmmm", b: "00000000"})
    assert taskfs("claim", task, "--agent", "alice", cwd=a).code == 0
    assert taskfs("claim", task, "--agent", "bob", cwd=b).code == 0
    assert taskfs("move", task, "input_required", "--agent", "bob", cwd=b).code == 0
    (b / "notes.txt").write_text("bob's own work\n")
    git(b, "add", "notes.txt")
    git(b, "commit", "-q", "-m", "bob's own commit after the claim")
    sync(a)
    result = sync(b)
    text = taskfs("log", task, cwd=b).stdout
    assert "working         by bob  (superseded by working by alice)" in text
    [demoted] = result["demoted"]  # type: ignore[misc]
    assert demoted["file"] == "0002-working-00000000.yaml"
    assert demoted["now"] > "0002-working-mmmmmmmm.yaml"
    assert demoted["supersededBy"]["by"] == "alice"
    assert state_of(b, task) == ("working", "alice")
    history = taskfs("log", task, "--json", cwd=b).json["history"]
    superseded = [row for row in history if row.get("superseded")]
    assert [(row["state"], row["by"]) for row in superseded] == [
        ("working", "bob"),
        ("input_required", "bob"),
    ]
    assert superseded[1]["prev"] == demoted["now"]
    assert git(b, "log", "-1", "--format=%s", "HEAD^1") == "bob's own commit after the claim"
    assert (b / "notes.txt").read_text() == "bob's own work\n"
    assert git(b, "status", "--porcelain") == ""
    assert taskfs("audit", "--json", cwd=b).json["ok"] is True


def test_no_nonce_sorts_after_the_winner_so_the_loser_is_withdrawn(
    remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = clones(remote, "a", "b")
    task = new_task(a, to=None)
    sync(a)
    sync(b)
    fixed_nonces(monkeypatch, {a: "zzzzzzzz", b: "00000000"})
    assert taskfs("claim", task, "--agent", "alice", cwd=a).code == 0
    assert taskfs("claim", task, "--agent", "bob", cwd=b).code == 0
    sync(a)
    text = taskfs("sync", cwd=b).stdout  # as people read it
    assert f"lost to a published transition: {task} 0002-working-00000000.yaml by bob " in text
    assert "(withdrawn); working by alice was pushed first" in text
    history = taskfs("log", task, "--json", cwd=b).json["history"]
    assert [row["by"] for row in history] == ["planner", "alice"]
    assert state_of(b, task) == ("working", "alice")
    assert not (b / "tasks" / task / "status" / "0002-working-00000000.yaml").exists()
    assert git(b, "status", "--porcelain") == ""


# -- merges of ledger files never conflict ---------------------------------------------


def test_appends_to_one_task_and_new_tasks_merge_with_plain_git(remote: Path) -> None:
    a, b = clones(remote, "a", "b")
    task = new_task(a, to=None)
    sync(a)
    sync(b)
    for where, agent in ((a, "alice"), (b, "bob")):
        new_task(where, filesAndInterfaces=[f"{agent}/**"])
        judged = taskfs(
            "evidence",
            "add",
            task,
            "--verdict",
            "pass",
            "--source",
            agent,
            "--note",
            f"{agent} looked",
            "--agent",
            agent,
            cwd=where,
        )
        assert judged.code == 0, judged.stdout + judged.stderr
        said = taskfs(
            "send", task, f"hello from {agent}", "--agent", "planner", "--to", agent, cwd=where
        )
        assert said.code == 0, said.stdout + said.stderr
        assert taskfs("move", task, "canceled", "--agent", "planner", cwd=where).code == 0
    sync(a)
    git(b, "fetch", "-q")
    merge = subprocess.run(
        ["git", "merge", "--no-edit", "origin/main"],
        cwd=b,
        capture_output=True,
        text=True,
        check=False,
    )
    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert "CONFLICT" not in merge.stdout
    sync(b)
    sync(a)
    for where in (a, b):
        assert len(taskfs("ls", "--json", cwd=where).json["tasks"]) == 3
        for kind in ("evidence", "messages"):
            assert len(list((where / "tasks" / task / kind).iterdir())) == 2
        assert taskfs("audit", "--json", cwd=where).json["ok"] is True


# -- what sync refuses, leaving everything as it was -----------------------------------


def test_sync_carries_uncommitted_work_across_a_merge(remote: Path) -> None:
    a, b = clones(remote, "a", "b")
    new_task(a)
    sync(a)
    git(b, "commit", "-q", "--allow-empty", "-m", "local commit: the merge is a real one")
    (b / "staged.txt").write_text("staged\n")
    git(b, "add", "staged.txt")
    (b / "README.md").write_text("changed, not staged\n")
    (b / "untracked.txt").write_text("new\n")
    result = sync(b)
    assert result["integration"] == "merge"
    assert sorted(git(b, "status", "--porcelain").splitlines()) == [
        " M README.md",
        "?? untracked.txt",
        "A  staged.txt",
    ]
    assert git(b, "rev-parse", "HEAD^2") == git(a, "rev-parse", "HEAD")
    assert git(remote, "rev-parse", "main") == git(b, "rev-parse", "HEAD")


def test_uncommitted_work_in_the_way_stops_sync(remote: Path) -> None:
    a, b = clones(remote, "a", "b")
    (a / "README.md").write_text("theirs\n")
    git(a, "commit", "-q", "-am", "change README")
    sync(a)
    (b / "README.md").write_text("mine, uncommitted\n")
    before = snapshot(b)
    result = taskfs("sync", "--json", cwd=b)
    assert result.code == 1
    assert result.codes == ["sync_local_changes"]
    assert result.json["errors"][0]["paths"] == ["README.md"]
    assert snapshot(b) == before
    assert (b / "README.md").read_text() == "mine, uncommitted\n"


def test_a_conflict_outside_the_ledger_stops_sync(remote: Path) -> None:
    a, b = clones(remote, "a", "b")
    for where in (a, b):
        (where / "README.md").write_text(f"{where.name}\n")
        git(where, "commit", "-q", "-am", "both edit README")
    sync(a)
    before = snapshot(b)
    result = taskfs("sync", "--json", cwd=b)
    assert result.codes == ["sync_conflict"]
    assert result.json["errors"][0]["paths"] == ["README.md"]
    assert snapshot(b) == before
    assert not (b / ".git" / "MERGE_HEAD").exists()


def test_two_envelopes_under_one_id_stop_sync_and_are_named(remote: Path) -> None:
    a, b = clones(remote, "a", "b")
    new_task(a, id="fix-login")
    new_task(b, id="fix-login", objective="Something else entirely.")
    sync(a)
    before = snapshot(b)
    result = taskfs("sync", "--json", cwd=b)
    assert result.code == 1
    assert result.codes == ["task_id_collision"]
    assert result.json["errors"][0]["id"] == "fix-login"
    assert snapshot(b) == before


def test_id_collision_merged_by_hand_is_found_by_validate_and_audit(remote: Path) -> None:
    a, b = clones(remote, "a", "b")
    new_task(a, id="fix-login")
    new_task(b, id="fix-login", objective="Something else entirely.")
    sync(a)
    git(b, "fetch", "-q")
    merging = subprocess.run(
        ["git", "merge", "origin/main"], cwd=b, capture_output=True, check=False
    )
    assert merging.returncode != 0
    assert "task_id_collision" in taskfs("validate", "--json", cwd=b).codes
    assert taskfs("sync", "--json", cwd=b).codes == ["sync_in_progress"]
    git(b, "merge", "--abort")
    git(b, "merge", "-q", "-X", "ours", "--no-edit", "origin/main")
    for command in ("validate", "audit"):
        result = taskfs(command, "--json", cwd=b)
        assert result.code == 1
        found = result.json.get("errors", []) + result.json.get("findings", [])
        assert "task_id_collision" in [f["code"] for f in found], command


def test_sync_needs_a_branch_and_an_upstream(remote: Path) -> None:
    [a] = clones(remote, "a")
    git(a, "checkout", "-q", "--detach")
    assert taskfs("sync", "--json", cwd=a).codes == ["sync_detached_head"]
    git(a, "checkout", "-q", "-b", "lonely")
    assert taskfs("sync", "--json", cwd=a).codes == ["sync_no_upstream"]
    assert taskfs("sync", "--remote", "nowhere", "--json", cwd=a).codes == ["sync_no_upstream"]
    new_task(a)
    result = sync(a, "--remote", "origin")  # the same name on the remote: created by the push
    assert result["branch"] == "lonely"
    assert git(remote, "rev-parse", "lonely") == git(a, "rev-parse", "HEAD")


def test_unrelated_histories_are_refused(remote: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    assert taskfs("init", cwd=other).code == 0
    git(other, "remote", "add", "origin", str(remote))
    result = taskfs("sync", "--remote", "origin", "--json", cwd=other)
    assert result.codes == ["sync_unrelated_histories"]


def test_a_push_the_remote_refuses_is_named(remote: Path) -> None:
    [a] = clones(remote, "a")
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'frozen for the release' >&2\nexit 1\n")
    hook.chmod(0o755)
    new_task(a)
    head = git(a, "rev-parse", "HEAD")
    result = taskfs("sync", "--json", cwd=a)
    assert result.codes == ["sync_push_rejected"]
    assert git(a, "rev-parse", "HEAD") == head


def test_a_push_that_loses_a_race_is_retried(remote: Path, tmp_path: Path) -> None:
    a, b = clones(remote, "a", "b")
    new_task(b, filesAndInterfaces=["b/**"])
    git(b, "push", "-q", "origin", "HEAD:refs/heads/parked")
    parked = git(b, "rev-parse", "HEAD")
    # The first push reaching the remote finds main moved under it by the hook: a lost race.
    marker = tmp_path / "raced"
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\n"
        f"if [ ! -e {marker} ]; then touch {marker}; "
        "env -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES "
        f"git update-ref refs/heads/main {parked}; fi\n"
    )
    hook.chmod(0o755)
    new_task(a, filesAndInterfaces=["a/**"])
    result = sync(a)
    assert result["attempts"] == 2
    assert git(a, "rev-parse", "HEAD^2") == parked
    assert git(remote, "rev-parse", "main") == git(a, "rev-parse", "HEAD")
    assert len(taskfs("ls", "--json", cwd=a).json["tasks"]) == 2


# -- ownership and audit after merges --------------------------------------------------


def test_overlap_that_only_a_merge_creates_is_reported_and_blocks_the_claim(
    remote: Path,
) -> None:
    a, b = clones(remote, "a", "b")
    first = new_task(a, filesAndInterfaces=["src/auth/login.py"])
    second = new_task(b, filesAndInterfaces=["src/auth/**"])
    sync(a)
    sync(b)
    sync(a)
    for where in (a, b):
        validation = taskfs("validate", "--json", cwd=where)
        assert validation.code == 1
        assert [e["code"] for e in validation.json["errors"]] == ["ownership_conflict"]
        codes = [f["code"] for f in taskfs("audit", "--json", cwd=where).json["findings"]]
        assert codes == ["ownership_conflict"]
    assert taskfs("claim", second, "--agent", "builder", "--json", cwd=b).codes == [
        "ownership_conflict"
    ]
    assert taskfs("claim", first, "--agent", "builder", "--json", cwd=a).codes == [
        "ownership_conflict"
    ]


def test_audit_of_merged_history_still_names_edits_and_deletions(remote: Path) -> None:
    a, b = clones(remote, "a", "b")
    task = new_task(a)
    sync(a)
    sync(b)
    status = sorted((b / "tasks" / task / "status").iterdir())[0]
    status.write_text(status.read_text().replace("by: planner", "by: mallory"))
    git(b, "commit", "-q", "-am", "edit on a side branch")
    envelope = b / "tasks" / task / "envelope.yaml"
    git(b, "rm", "-q", str(envelope))
    git(b, "commit", "-q", "-m", "delete on a side branch")
    new_task(a, filesAndInterfaces=["other.py"])
    sync(a)
    sync(b)
    findings = {(f["code"], f["path"]) for f in taskfs("audit", "--json", cwd=b).json["findings"]}
    rel = f"tasks/{task}"
    assert ("ledger_file_edited", f"{rel}/status/{status.name}") in findings
    assert ("ledger_file_deleted", f"{rel}/envelope.yaml") in findings


def test_audit_names_an_edit_hidden_by_a_merge_that_took_the_other_side(remote: Path) -> None:
    a, b = clones(remote, "a", "b")
    task = new_task(a)
    sync(a)
    sync(b)
    status = sorted((b / "tasks" / task / "status").iterdir())[0]
    status.write_text(status.read_text().replace("by: planner", "by: mallory"))
    git(b, "commit", "-q", "-am", "edit on a side branch")
    git(b, "checkout", "-q", "-b", "side")
    git(b, "checkout", "-q", "main")
    git(b, "reset", "-q", "--hard", "origin/main")
    git(b, "merge", "-q", "-s", "ours", "--no-edit", "side")
    findings = {(f["code"], f["path"]) for f in taskfs("audit", "--json", cwd=b).json["findings"]}
    assert ("ledger_file_edited", f"tasks/{task}/status/{status.name}") in findings


# -- claim --sync ----------------------------------------------------------------------


def test_claim_sync_pushes_the_claim(remote: Path) -> None:
    a, b = clones(remote, "a", "b")
    task = new_task(a, to=None)
    sync(a)
    result = taskfs("claim", task, "--agent", "bob", "--sync", "--json", cwd=b)
    assert result.code == 0, result.stdout
    assert result.json["state"] == "working"
    assert git(remote, "rev-parse", "main") == git(b, "rev-parse", "HEAD")
    sync(a)
    assert state_of(a, task) == ("working", "bob")


def test_claim_sync_loses_to_a_claim_already_pushed(remote: Path) -> None:
    a, b = clones(remote, "a", "b")
    task = new_task(a, to=None)
    sync(a)
    sync(b)
    assert taskfs("claim", task, "--agent", "alice", "--sync", cwd=a).code == 0
    result = taskfs("claim", task, "--agent", "bob", "--sync", "--json", cwd=b)
    assert result.codes == ["transition_not_allowed"]
    assert result.json["errors"][0]["by"] == "alice"
    assert state_of(b, task) == ("working", "alice")


def test_claim_sync_withdraws_a_claim_that_lost_the_push_race(
    remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = clones(remote, "a", "b")
    task = new_task(a, to=None)
    sync(a)
    sync(b)
    # alice's claim is ready on the remote; the hook publishes it just before bob's push lands.
    fixed_nonces(monkeypatch, {a: "zzzzzzzy", b: "00000000"})
    assert taskfs("claim", task, "--agent", "alice", cwd=a).code == 0
    git(a, "push", "-q", "origin", "HEAD:refs/heads/parked")
    parked = git(a, "rev-parse", "HEAD")
    marker = tmp_path / "raced"
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\n"
        f"if [ ! -e {marker} ]; then touch {marker}; "
        "env -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES "
        f"git update-ref refs/heads/main {parked}; fi\n"
    )
    hook.chmod(0o755)
    head = git(b, "rev-parse", "HEAD")
    result = taskfs("claim", task, "--agent", "bob", "--sync", "--json", cwd=b)
    assert result.codes == ["transition_not_allowed"]
    error = result.json["errors"][0]
    assert (error["by"], error["lost_race"]) == ("alice", True)
    # bob's claim would have won by the content rule; it was never pushed, so it is gone.
    assert git(remote, "rev-parse", "main") == parked
    assert not list((b / "tasks" / task / "status").glob("*-00000000.yaml"))
    assert git(b, "merge-base", "--is-ancestor", head, "HEAD") == ""
    assert state_of(b, task) == ("working", "alice")
    assert git(b, "status", "--porcelain") == ""
    assert taskfs("audit", "--json", cwd=b).json["ok"] is True


# -- a fork is only a fork when it was concurrent ----------------------------------------


def test_a_sibling_written_after_the_claim_it_forks_is_refused_by_sync_and_named_by_audit(
    remote: Path,
) -> None:
    from tests.helpers import commit_as

    a, bob, mallory = clones(remote, "a", "bob", "mallory")
    task = new_task(a, to="bob")
    sync(a)
    sync(bob)
    claimed = taskfs("claim", task, "--agent", "bob", "--sync", "--json", cwd=bob)
    assert claimed.code == 0, claimed.stdout
    sync(mallory)
    assert state_of(mallory, task) == ("working", "bob")
    # Mallory's clone already holds bob's claim, and writes a sibling of it by hand whose
    # nonce sorts first: the nonce rule alone would let it overturn the claim.
    folder = mallory / "tasks" / task / "status"
    first = sorted(p.name for p in folder.iterdir())[0]
    late = folder / "0002-canceled-00000000.yaml"
    late.write_text(
        f"task: {task}\nstate: canceled\nby: planner\nat: '2026-01-01T00:00:00.000000Z'\n"
        f"prev: {first}\n"
    )
    rel = f"tasks/{task}/status/{late.name}"
    commit_as(mallory, "planner", "cancel", rel)
    # taskfs sync will not publish it...
    before = snapshot(mallory)
    remote_head = git(remote, "rev-parse", "main")
    refused = taskfs("sync", "--json", cwd=mallory)
    assert refused.code == 1
    assert refused.codes == ["transition_not_allowed"]
    assert refused.json["errors"][0]["path"] == rel
    assert snapshot(mallory) == before
    assert git(remote, "rev-parse", "main") == remote_head
    # ...audit names it where it stands...
    audit = taskfs("audit", "--json", cwd=mallory).json
    assert [(f["code"], f["path"]) for f in audit["findings"]] == [("transition_not_allowed", rel)]
    # ...and once pushed with plain git, bob's sync refuses to merge it.
    git(mallory, "push", "-q", "origin", "main")
    before = snapshot(bob)
    refused = taskfs("sync", "--json", cwd=bob)
    assert refused.code == 1
    assert refused.codes == ["transition_not_allowed"]
    assert refused.json["errors"][0]["path"] == rel
    assert snapshot(bob) == before
    assert state_of(bob, task) == ("working", "bob")


def test_concurrent_siblings_still_settle_as_a_fork(
    remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = clones(remote, "a", "b")
    task = new_task(a, to=None)
    sync(a)
    sync(b)
    fixed_nonces(monkeypatch, {a: "mmmmmmmm", b: "00000000"})
    assert taskfs("claim", task, "--agent", "agent-a", cwd=a).code == 0
    assert taskfs("claim", task, "--agent", "agent-b", cwd=b).code == 0
    sync(a)
    sync(b)
    sync(a)
    assert state_of(a, task) == state_of(b, task) == ("working", "agent-a")
    for where in (a, b):
        audit = taskfs("audit", "--json", cwd=where)
        assert audit.json["findings"] == [], audit.stdout


def test_a_signed_transition_settling_repoints_is_signed_again(
    remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = clones(remote, "a", "b")
    task = new_task(a, to=None)
    sync(a)
    sync(b)
    assert taskfs("keys", "new", "--agent", "bob", "--json", cwd=b).code == 0
    fixed_nonces(monkeypatch, {a: "mmmmmmmm", b: "00000000"})
    assert taskfs("claim", task, "--agent", "alice", cwd=a).code == 0
    assert taskfs("claim", task, "--agent", "bob", cwd=b).code == 0
    assert taskfs("move", task, "input_required", "--agent", "bob", cwd=b).code == 0
    sync(a)
    result = sync(b)
    assert len(result["demoted"]) == 1  # type: ignore[arg-type]
    folder = b / "tasks" / task / "status"
    moved = next(p for p in folder.iterdir() if "input_required" in p.name)
    assert "sig: ed25519:" in moved.read_text()
    audit = taskfs("audit", "--json", cwd=b)
    assert audit.json["findings"] == [], audit.stdout
