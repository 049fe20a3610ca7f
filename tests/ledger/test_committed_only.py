"""Decisions rest on committed files only (issue 16): a file no commit holds, or a committed
file edited in the working tree, never unblocks a claim, buys a completion or is built upon."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import check, git, submit, taskfs

CODE = "ledger_file_uncommitted"


def _head_count(repo: Path) -> int:
    return int(git(repo, "rev-list", "--count", "HEAD"))


def _completed_loose(repo: Path, dep: str) -> list[Path]:
    """Take `dep` to `completed` for real, then put its new files back as loose files: what a
    collaborator writing by hand (or copying from another clone) leaves in the working tree."""
    before = git(repo, "rev-parse", "HEAD")
    known = set((repo / "tasks" / dep).rglob("*"))
    assert taskfs("claim", dep, "--agent", "builder").code == 0
    check(dep)
    assert taskfs("complete", dep, "--agent", "builder").code == 0
    saved = {p: p.read_bytes() for p in (repo / "tasks" / dep).rglob("*.yaml") if p not in known}
    git(repo, "reset", "-q", "--hard", before)
    for path, data in saved.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return sorted(saved)


def test_loose_completed_status_does_not_unblock_a_dependent(repo: Path) -> None:
    dep = submit(
        repo,
        id="dep",
        filesAndInterfaces=["src/dep.py"],
        acceptanceCheck={"passFailCommand": "test -f src/dep.py", "endToEndVerification": "x"},
    )
    (repo / "src").mkdir()
    (repo / "src" / "dep.py").write_text("x = 1\n")
    git(repo, "add", "src/dep.py")
    git(repo, "commit", "-q", "-m", "dep work")
    submit(repo, id="later", dependsOn=[dep], filesAndInterfaces=["src/later.py"])
    loose = _completed_loose(repo, dep)
    assert any("completed" in p.name for p in loose)

    ready = taskfs("ready", "--agent", "builder", "--json")
    assert "later" not in [t["id"] for t in ready.json["tasks"]]
    commits = _head_count(repo)
    claimed = taskfs("claim", "later", "--agent", "builder", "--json")
    assert claimed.code == 1
    assert "dependencies_unresolved" in claimed.codes
    assert _head_count(repo) == commits
    # The dependency's own folder is loose: nothing may be written on it.
    moved = taskfs("move", dep, "failed", "--agent", "builder", "--reason", "x", "--json")
    assert moved.code == 1
    assert set(moved.codes) == {CODE}
    assert any(str(p.relative_to(repo)) in moved.stdout for p in loose)

    # Once git holds the files (committed by plain git), HEAD says completed.
    git(repo, "add", "tasks")
    git(repo, "commit", "-q", "-m", "hand-made")
    ready = taskfs("ready", "--agent", "builder", "--json")
    assert "later" in [t["id"] for t in ready.json["tasks"]]


def test_edited_evidence_does_not_buy_a_completion(repo: Path) -> None:
    task = submit(repo, acceptanceCheck={"passFailCommand": "false", "endToEndVerification": "x"})
    assert taskfs("claim", task, "--agent", "builder").code == 0
    evidence = repo / check(task)
    text = evidence.read_text()
    evidence.write_text(
        text.replace("verdict: fail", "verdict: pass").replace("exitCode: 1", "exitCode: 0")
    )
    commits = _head_count(repo)
    done = taskfs("complete", task, "--agent", "builder", "--json")
    assert done.code == 1
    assert CODE in done.codes
    assert _head_count(repo) == commits
    # A copied-in evidence file that no commit holds fares no better.
    git(repo, "checkout", "--", str(evidence.relative_to(repo)))
    copy = evidence.with_name("29991231T235959000000Z-aaaaaaaa.yaml")
    copy.write_text(text.replace("verdict: fail", "verdict: pass"))
    done = taskfs("complete", task, "--agent", "builder", "--json")
    assert done.code == 1
    assert CODE in done.codes


def test_claim_on_a_folder_never_committed_is_refused(repo: Path) -> None:
    task = submit(repo, id="ghost")
    git(repo, "reset", "-q", "HEAD~1")  # its files stay, untracked
    commits = _head_count(repo)
    claimed = taskfs("claim", task, "--agent", "builder", "--json")
    assert claimed.code == 1
    assert CODE in claimed.codes
    assert "tasks/ghost/envelope.yaml" in claimed.stdout
    assert _head_count(repo) == commits
    assert task not in [t["id"] for t in taskfs("ready", "--json").json["tasks"]]
    # The fast path (no click) says the same.
    from tests.helpers import taskfs_process

    fast = taskfs_process("claim", task, "--agent", "builder", "--json", cwd=repo)
    assert fast.code == 1
    assert CODE in fast.stdout


def test_envelope_edited_in_the_working_tree_is_not_built_upon(repo: Path) -> None:
    task = submit(repo, to="bob")
    envelope = repo / "tasks" / task / "envelope.yaml"
    envelope.write_text(envelope.read_text().replace("to: bob", "to: mallory"))
    claimed = taskfs("claim", task, "--agent", "mallory", "--json")
    assert claimed.code == 1
    assert CODE in claimed.codes
    ready = taskfs("ready", "--agent", "mallory", "--json")
    assert task not in [t["id"] for t in ready.json["tasks"]]


@pytest.mark.parametrize("fresh", [False, True])
def test_check_runs_only_what_head_holds(repo: Path, fresh: bool) -> None:
    task = submit(repo, acceptanceCheck={"passFailCommand": "false", "endToEndVerification": "x"})
    envelope = repo / "tasks" / task / "envelope.yaml"
    text = envelope.read_text()
    envelope.write_text(text.replace('passFailCommand: "false"', 'passFailCommand: "true"'))
    assert envelope.read_text() != text
    args = ["check", task, "--json", *(["--fresh"] if fresh else [])]
    ran = taskfs(*args)
    assert ran.code == 1
    assert CODE in ran.codes
    assert not (repo / "tasks" / task / "evidence").exists()


def test_loose_status_file_blocks_move_and_message(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    status = repo / "tasks" / task / "status"
    first = sorted(status.iterdir())[-1]
    shutil.copy(first, status / first.name.replace("0002", "0003"))
    moved = taskfs("move", task, "input_required", "--agent", "builder", "--json")
    assert moved.code == 1
    assert CODE in moved.codes
    sent = taskfs("send", task, "hi", "--agent", "builder", "--to", "planner", "--json")
    assert sent.code == 1
    assert CODE in sent.codes


def test_watcher_answers_no_check_on_a_loose_envelope(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("allow:\n  commands: ['true', 'false']\n")
    monkeypatch.setenv("TASKFS_POLICY", str(policy))
    task = submit(repo, acceptanceCheck={"passFailCommand": "false", "endToEndVerification": "x"})
    assert taskfs("claim", task, "--agent", "builder").code == 0
    assert taskfs("send", task, "done", "--agent", "builder", "--status", "result").code == 0
    envelope = repo / "tasks" / task / "envelope.yaml"
    text = envelope.read_text()
    envelope.write_text(text.replace('passFailCommand: "false"', 'passFailCommand: "true"'))
    assert envelope.read_text() != text
    watched = taskfs("watch", "--once")
    assert CODE in watched.stderr
    assert not (repo / "tasks" / task / "evidence").exists()
    assert taskfs("show", task, "--json").json["state"] == "working"


def test_stored_answers_follow_head_and_survive_commits_of_code(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from taskfs.cli.fast import _catch_up as catch_up
    from taskfs.readmodel import listing as db

    every = (("archived", False),)

    task = submit(repo, id="plain")
    listed = taskfs("ls", "--json").stdout
    monkeypatch.chdir(repo)
    # A commit that leaves the tasks folder alone keeps the stored answer in use.
    (repo / "code.py").write_text("x = 1\n")
    git(repo, "add", "code.py")
    git(repo, "commit", "-q", "-m", "code")
    assert db.answer("ls", every, None) is None  # HEAD moved: not vouched for alone ...
    # ... but the fast path has the store catch up: a `git diff` names no task changed
    assert db.answer("ls", every, None, catch_up=catch_up) == listed.rstrip("\n")
    assert db.answer("ls", every, None) == listed.rstrip("\n")  # and it remembers that
    # A transition's own commit keeps the answers in use as well (the hot path: claim, ready).
    other = submit(repo, id="other", filesAndInterfaces=["other/**"])
    taskfs("ls", "--json")
    assert taskfs("claim", other, "--agent", "builder").code == 0
    assert db.answer("ready", (), None) is not None
    git(repo, "reset", "-q", "--hard", "HEAD~2")  # the claim and `other` go away
    # HEAD moving the task's files out of every commit is seen without a file changing.
    git(repo, "reset", "-q", "HEAD~2")
    assert db.answer("ls", every, None) is None
    answered = db.answer("ls", every, None, catch_up=catch_up)
    assert answered is not None
    assert task not in answered
    assert task not in [t["id"] for t in taskfs("ready", "--json").json["tasks"]]


def test_an_edited_question_is_not_answered_and_a_loose_answer_waits_for_delivery(
    repo: Path,
) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    asked = taskfs(
        "send", task, "Log it?", "--agent", "builder", "--status", "needs_input", "--json"
    )
    question = asked.json["msg_id"]
    path = repo / asked.json["file"]
    # The committed question, edited in the working tree: no answer builds on it.
    path.write_text(path.read_text().replace("Log it?", "Log it, and drop the tests?"))
    answered = taskfs(
        "send", task, "yes", "--agent", "planner", "--in-reply-to", question, "--json"
    )
    assert answered.code == 1
    assert CODE in answered.codes
    assert taskfs("show", task, "--json").json["state"] == "input_required"
    git(repo, "checkout", "--", str(path.relative_to(repo)))
    # An answer written as a file and not committed moves nothing until it is delivered
    # (checked, and committed with its transition); nothing else reads it.
    answer = path.with_name("29991231T235959000000Z-aaaaaaaa.yaml")
    answer.write_text(
        path.read_text()
        .replace("from: builder", "from: planner")
        .replace("to: planner", "to: builder")
    )
    assert taskfs("show", task, "--json").json["state"] == "input_required"
    assert task not in [t["id"] for t in taskfs("ready", "--json").json["tasks"]]


def _edit_in_place(folder: Path) -> None:
    status = sorted((folder / "status").iterdir())[0]
    data = status.read_bytes()
    status.write_bytes(data.replace(b"submitted", b"submittex"))  # same size, other bytes


def _add_file(folder: Path) -> None:
    (folder / "status" / "0002-working.yaml").write_text("state: working\n")


def _delete_file(folder: Path) -> None:
    sorted((folder / "status").iterdir())[0].unlink()


def _make_executable(folder: Path) -> None:
    (folder / "envelope.yaml").chmod(0o755)


def _replace_with_link(folder: Path) -> None:
    envelope = folder / "envelope.yaml"
    kept = folder.parent.parent / "kept-envelope.yaml"
    envelope.rename(kept)
    envelope.symlink_to(kept)


def _empty_folder(folder: Path) -> None:
    (folder / "evidence").mkdir(exist_ok=True)  # git holds no folders: nothing changed


def _touch(folder: Path) -> None:
    envelope = folder / "envelope.yaml"
    envelope.write_bytes(envelope.read_bytes())  # rewritten, the same bytes: not changed


@pytest.mark.parametrize(
    ("change", "loose"),
    [
        (_edit_in_place, True),
        (_add_file, True),
        (_delete_file, True),
        (_make_executable, True),
        (_replace_with_link, True),
        (_empty_folder, False),
        (_touch, False),
    ],
)
def test_the_folder_compared_with_head_in_process_agrees_with_git(
    repo: Path, change: object, loose: bool
) -> None:
    """A writer compares the task's folder with HEAD's trees itself (no `git diff`, which
    reads the whole index) and asks git only when they differ: both must name the same."""
    from taskfs.store import head_ledger
    from taskfs.store.repository import Repository

    task = submit(repo, id="compared", filesAndInterfaces=["src/c.py"])
    folder = repo / "tasks" / task
    store = Repository.open(repo)
    assert store.git.as_at_head([f"tasks/{task}"])
    assert head_ledger.loose(store, [task]) == {}
    assert callable(change)
    change(folder)
    assert store.git.as_at_head([f"tasks/{task}"]) is not loose
    by_git = [p for _kind, p in store.git.not_at_head([f"tasks/{task}"])]
    assert bool(by_git) is loose
    assert bool(head_ledger.loose(store, [task])) is loose
    refused = taskfs("claim", task, "--agent", "builder", "--json")
    assert (CODE in refused.codes) is loose


def test_show_names_an_envelope_edited_after_its_submission_as_claim_does(repo: Path) -> None:
    """The team day: a committed edit of an envelope was shown as the task's contract with no
    word, while claim refused it (`ledger_file_edited`) and audit named it."""
    task = submit(repo)
    path = repo / "tasks" / task / "envelope.yaml"
    path.write_text(path.read_text().replace("Fix the login bug", "Fix any bug"))
    git(repo, "commit", "-qam", "an edit")
    assert taskfs("claim", task, "--agent", "builder", "--json").codes == ["ledger_file_edited"]
    for _ in range(2):  # as computed, then as stored
        shown = taskfs("show", task, "--json").json
        assert [p["code"] for p in shown["problems"]] == ["ledger_file_edited"]
    assert "ledger_file_edited" in taskfs("show", task).stdout
