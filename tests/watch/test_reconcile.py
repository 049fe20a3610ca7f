"""The watcher's pass, driven directly: no threads, no observer, a clock the test moves.

Each test works in a real repository with real files and real git; only time is simulated,
so that "two looks, far enough apart" is exact.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from taskfs.core import yamlio
from taskfs.core.policy import NOTHING
from taskfs.store import fs
from taskfs.store.repository import Repository
from taskfs.watch.log import ActionLog
from taskfs.watch.reconcile import PassResult, Reconciler, Settings
from tests.helpers import ENVELOPE, git, submit, taskfs, write_envelope

SETTLE = 5.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Pass:
    """A reconciler over `repo` whose clock only moves when the test says so."""

    def __init__(self, root: Path, batch: int = 200) -> None:
        self.root = root
        self.clock = Clock()
        self.out = io.StringIO()
        self.expected: list[tuple[list[str], list[str]]] = []
        self.reconciler = Reconciler(
            Repository.open(root),
            ActionLog(self.out),
            NOTHING,
            Settings(settle=SETTLE, batch=batch),
            clock=self.clock,
            expect=lambda removed, written: self.expected.append((list(removed), list(written))),
        )

    def look(self) -> PassResult:
        return self.reconciler.pass_()

    def settled(self) -> PassResult:
        """Two looks `SETTLE` apart: what a file that stopped changing gets."""
        self.look()
        self.clock.now += SETTLE
        return self.look()

    def actions(self) -> list[str]:
        return [line.split()[1] for line in self.out.getvalue().splitlines()]


def envelope(path: Path, n: int, **changes: object) -> Path:
    """A valid envelope owning files of its own (so that many never conflict)."""
    own = {"filesAndInterfaces": [f"src/mod{n}.py"], **changes}
    return write_envelope(path, **own)


def task_ids(root: Path) -> list[str]:
    return sorted(t["id"] for t in taskfs("ls", "--json", cwd=root).json["tasks"])


def report(path: Path) -> dict[str, object]:
    value = yamlio.load(
        path.with_name(path.name.removesuffix(".yaml") + "+refused.yaml").read_bytes()
    )
    assert isinstance(value, dict)
    return value


def codes(path: Path) -> list[str]:
    errors = report(path)["errors"]
    assert isinstance(errors, list)
    return [e["code"] for e in errors]


def test_a_valid_drop_is_submitted_committed_and_removed(repo: Path) -> None:
    drop = envelope(repo / "tasks" / "fix.yaml", 1, id="fix-login")
    result = Pass(repo).settled()
    assert result.waiting == ()
    assert not drop.exists()
    assert task_ids(repo) == ["fix-login"]
    message = git(repo, "log", "-1", "--format=%B")
    assert "Taskfs-Task: fix-login" in message
    assert "Taskfs-Intake: fix-login sha256:" in message
    assert message.rstrip().endswith("Taskfs-Agent: planner")
    assert git(repo, "status", "--porcelain") == ""
    show = taskfs("show", "fix-login", "--json").json
    assert show["state"] == "submitted"
    assert show["history"][0]["by"] == "planner"


def test_a_file_is_read_only_after_two_looks_that_agree(repo: Path) -> None:
    drop = repo / "tasks" / "slow.yaml"
    text = yamlio.dump({**ENVELOPE, "id": "slow"})
    drop.write_text(text[: len(text) // 2])  # half written
    run = Pass(repo)
    assert run.look().waiting == ("tasks/slow.yaml",)
    run.clock.now += SETTLE
    drop.write_text(text)  # the writer finishes: it changed between the looks
    assert run.look().waiting == ("tasks/slow.yaml",)
    run.clock.now += SETTLE - 0.1
    assert run.look().waiting == ("tasks/slow.yaml",)  # not yet far enough apart
    run.clock.now += 0.1
    assert run.look().waiting == ()
    assert task_ids(repo) == ["slow"]
    assert not drop.with_name("slow+refused.yaml").exists()


def test_an_invalid_drop_gets_a_report_naming_every_error(repo: Path) -> None:
    drop = repo / "tasks" / "bad.yaml"
    drop.write_text("objectve: typo\nfrom: planner\n")
    Pass(repo).settled()
    assert sorted(codes(drop)) == sorted(
        [
            "unknown_field",
            "objective_required",
            "output_format_required",
            "tool_and_source_guidance_required",
            "boundaries_required",
            "files_and_interfaces_required",
            "acceptance_check_command_required",
            "acceptance_check_verification_required",
            "context_id_required",
        ]
    )
    assert report(drop)["file"] == "tasks/bad.yaml"
    assert drop.exists()
    assert task_ids(repo) == []
    assert git(repo, "log", "-1", "--format=%s") == "taskfs: init"


def test_a_refused_file_is_not_judged_again_until_it_changes(repo: Path) -> None:
    drop = repo / "tasks" / "bad.yaml"
    drop.write_text("objective: only this\n")
    run = Pass(repo)
    run.settled()
    first = drop.with_name("bad+refused.yaml").read_bytes()
    run.clock.now += SETTLE
    run.look()
    again = Pass(repo)  # a restarted watcher recognises its report by the file's sha256
    again.settled()
    assert drop.with_name("bad+refused.yaml").read_bytes() == first
    assert run.actions().count("refused") == 1
    assert "refused" not in again.actions()


def test_fixing_a_refused_file_submits_it_and_removes_the_report(repo: Path) -> None:
    drop = repo / "tasks" / "bad.yaml"
    write_envelope(drop, objective=None, id="fixed")
    run = Pass(repo)
    run.settled()
    assert codes(drop) == ["objective_required"]
    write_envelope(drop, id="fixed", boundaries="  ")
    run.clock.now += SETTLE
    run.settled()
    assert codes(drop) == ["boundaries_required"]  # replaced, not added to
    write_envelope(drop, id="fixed")
    run.clock.now += SETTLE
    run.settled()
    assert not drop.exists()
    assert not drop.with_name("bad+refused.yaml").exists()
    assert task_ids(repo) == ["fixed"]


def test_a_report_whose_file_is_gone_is_removed(repo: Path) -> None:
    drop = repo / "tasks" / "bad.yaml"
    drop.write_text("objective: x\n")
    run = Pass(repo)
    run.settled()
    drop.unlink()
    run.look()
    assert not drop.with_name("bad+refused.yaml").exists()
    assert "report-removed" in run.actions()


def test_an_ownership_conflict_is_refused_and_the_rest_go_in(repo: Path) -> None:
    existing = submit(repo, id="holder")
    write_envelope(repo / "tasks" / "a-conflict.yaml", id="clash")  # owns what holder owns
    envelope(repo / "tasks" / "b-fine.yaml", 2, id="fine")
    Pass(repo).settled()
    assert codes(repo / "tasks" / "a-conflict.yaml") == ["ownership_conflict"]
    error = report(repo / "tasks" / "a-conflict.yaml")["errors"][0]  # type: ignore[index]
    assert error["other"] == existing
    assert task_ids(repo) == ["fine", "holder"]


def test_drops_that_conflict_with_each_other_first_come_first_served(repo: Path) -> None:
    envelope(repo / "tasks" / "one.yaml", 7, id="one")
    envelope(repo / "tasks" / "two.yaml", 7, id="two")
    envelope(repo / "tasks" / "three.yaml", 7, id="three", dependsOn=["one"])
    Pass(repo).settled()
    # in name order: one is admitted, three may overlap it (it depends on one), two may not
    assert task_ids(repo) == ["one", "three"]
    assert codes(repo / "tasks" / "two.yaml") == ["ownership_conflict", "ownership_conflict"]
    errors = report(repo / "tasks" / "two.yaml")["errors"]
    assert sorted(e["other"] for e in errors) == ["one", "three"]  # type: ignore[union-attr]


def test_one_commit_per_sender(repo: Path) -> None:
    envelope(repo / "tasks" / "a.yaml", 1, id="a")
    envelope(repo / "tasks" / "b.yaml", 2, id="b", **{"from": "lead"})
    envelope(repo / "tasks" / "c.yaml", 3, id="c", **{"from": None})
    envelope(repo / "tasks" / "d.yaml", 4, id="d")
    Pass(repo).settled()
    subjects = git(repo, "log", "-3", "--format=%an: %s").splitlines()
    assert sorted(subjects) == [
        "anonymous: taskfs: c submitted by anonymous",
        "lead: taskfs: b submitted by lead",
        "planner: taskfs: submit 2 tasks by planner",
    ]


def test_the_same_bytes_dropped_again_make_no_second_task(repo: Path) -> None:
    text = yamlio.dump({k: v for k, v in ENVELOPE.items() if k != "id"})
    (repo / "tasks" / "req.yaml").write_text(text)
    (repo / "tasks" / "copy.yaml").write_text(text)  # the same bytes twice in one batch
    run = Pass(repo)
    run.settled()
    assert len(task_ids(repo)) == 1
    assert not (repo / "tasks" / "copy.yaml").exists()
    (repo / "tasks" / "req.yaml").write_text(text)  # saved again later
    run.clock.now += SETTLE
    run.settled()
    again = Pass(repo)  # and once more, for a watcher that never saw the first
    (repo / "tasks" / "later.yaml").write_text(text)
    again.settled()
    assert len(task_ids(repo)) == 1
    assert not (repo / "tasks" / "req.yaml").exists()
    assert not (repo / "tasks" / "later.yaml").exists()
    assert run.actions().count("already-submitted") == 2
    assert again.actions().count("already-submitted") == 1


def test_a_tracked_drop_is_removed_in_the_submitting_commit(repo: Path) -> None:
    drop = envelope(repo / "tasks" / "pulled.yaml", 1, id="pulled")
    git(repo, "add", "tasks/pulled.yaml")
    git(repo, "commit", "-q", "-m", "a plan arrives with a pull")
    Pass(repo).settled()
    assert not drop.exists()
    changed = git(repo, "show", "--no-renames", "--name-status", "--format=", "HEAD").splitlines()
    assert "D\ttasks/pulled.yaml" in changed
    assert "A\ttasks/pulled/envelope.yaml" in changed
    assert git(repo, "status", "--porcelain") == ""
    assert taskfs("audit", "--json").json["ok"] is True


def test_an_envelope_dropped_in_place_is_committed_as_it_is(repo: Path) -> None:
    folder = repo / "tasks" / "in-place"
    folder.mkdir()
    drop = envelope(folder / "envelope.yaml", 1)
    written = drop.read_bytes()
    Pass(repo).settled()
    assert task_ids(repo) == ["in-place"]
    assert drop.read_bytes() == written
    assert git(repo, "show", "HEAD:tasks/in-place/envelope.yaml") == written.decode().rstrip("\n")
    assert taskfs("audit", "--json").json["ok"] is True
    # an envelope without an id is the folder's: the rules and the commands treat it so
    assert taskfs("show", "in-place", "--json").json["envelope"]["id"] == "in-place"
    assert submit(repo, id="later", filesAndInterfaces=["src/later.py"]) == "later"
    assert taskfs("claim", "in-place", "--agent", "builder").code == 0


def test_an_envelope_in_place_that_names_another_id_is_refused(repo: Path) -> None:
    folder = repo / "tasks" / "copied"
    folder.mkdir()
    drop = envelope(folder / "envelope.yaml", 1, id="original")
    Pass(repo).settled()
    assert codes(drop) == ["task_id_mismatch"]
    assert (folder / "envelope+refused.yaml").exists()
    assert task_ids(repo) == []


def test_a_folder_that_is_not_a_task_id_is_refused(repo: Path) -> None:
    folder = repo / "tasks" / "Not An Id"
    folder.mkdir()
    drop = envelope(folder / "envelope.yaml", 1)
    Pass(repo).settled()
    assert codes(drop) == ["invalid_task_id"]


def test_editor_temporary_files_are_never_read(repo: Path) -> None:
    tasks = repo / "tasks"
    names = [".#fix.yaml", "fix.yaml~", ".fix.yaml.swp", "4913", "#fix.yaml#", ".fix.yaml.tmp"]
    for name in names:
        (tasks / name).write_text("objective: [unfinished\n")
    result = Pass(repo).settled()
    assert result.waiting == ()
    assert sorted(p.name for p in tasks.iterdir()) == sorted([*names, ".gitkeep"])


def test_an_existing_task_is_left_alone(repo: Path) -> None:
    submit(repo, id="done")
    before = git(repo, "rev-parse", "HEAD")
    run = Pass(repo)
    run.settled()
    assert git(repo, "rev-parse", "HEAD") == before
    assert run.actions() == []


def test_a_link_is_refused_not_followed(repo: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    write_envelope(secret, objective="a secret objective")
    os.symlink(secret, repo / "tasks" / "link.yaml")
    Pass(repo).settled()
    assert codes(repo / "tasks" / "link.yaml") == ["file_unreadable"]
    assert "secret objective" not in (repo / "tasks" / "link+refused.yaml").read_text()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_refused_and_the_others_go_in(repo: Path) -> None:
    locked = envelope(repo / "tasks" / "locked.yaml", 1, id="locked")
    locked.chmod(0)
    envelope(repo / "tasks" / "open.yaml", 2, id="open")
    Pass(repo).settled()
    assert codes(locked) == ["file_unreadable"]
    assert task_ids(repo) == ["open"]


def test_an_unexpected_error_in_one_file_spares_the_others(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from taskfs.api.intake import drops as intake

    real = intake.parse_source

    def parse(source: intake.Source) -> object:
        if source.label.endswith("poison.yaml"):
            raise RuntimeError("boom")
        return real(source)

    monkeypatch.setattr(intake, "parse_source", parse)
    envelope(repo / "tasks" / "a.yaml", 1, id="a")
    envelope(repo / "tasks" / "poison.yaml", 2, id="poison")
    envelope(repo / "tasks" / "z.yaml", 3, id="z")
    run = Pass(repo)
    result = run.settled()
    assert result.failed == 1
    assert task_ids(repo) == ["a", "z"]
    assert (repo / "tasks" / "poison.yaml").exists()
    run.clock.now += SETTLE
    assert run.look().failed == 0  # left alone until it changes, not retried each pass
    assert run.actions().count("error") == 1


def test_batches_hold_the_batch_size(repo: Path) -> None:
    for n in range(5):
        envelope(repo / "tasks" / f"t{n}.yaml", n, id=f"t{n}")
    Pass(repo, batch=2).settled()
    assert task_ids(repo) == [f"t{n}" for n in range(5)]
    assert git(repo, "rev-list", "--count", "HEAD") == str(2 + 3)  # initial, init, 3 batches


def test_a_stop_between_batches_leaves_the_rest_for_later(repo: Path) -> None:
    for n in range(4):
        envelope(repo / "tasks" / f"t{n}.yaml", n, id=f"t{n}")
    run = Pass(repo, batch=2)
    commits: list[str] = []
    run.reconciler.stopping = lambda: len(commits) > 0
    run.look()
    run.clock.now += SETTLE
    original = run.reconciler._take

    def take(chunk: list[tuple[str, object]]) -> None:
        original(chunk)  # type: ignore[arg-type]
        commits.append(chunk[0][0])

    run.reconciler._take = take  # type: ignore[assignment,method-assign]
    assert run.look().stopped is True
    assert task_ids(repo) == ["t0", "t1"]
    assert (repo / "tasks" / "t2.yaml").exists()


def test_own_changes_are_announced(repo: Path) -> None:
    envelope(repo / "tasks" / "fix.yaml", 1, id="fix")
    run = Pass(repo)
    run.settled()
    assert run.expected == [(["tasks/fix.yaml"], ["tasks/fix", "tasks/fix/envelope.yaml"])]


def test_a_write_killed_after_its_commit_files_is_finished_by_the_next_pass(
    repo: Path,
) -> None:
    """A watcher killed after writing a batch's files but before committing them: the next
    writer commits them from the journal, and the dropped file is then known as taken in."""
    from taskfs.api.intake import drops as intake

    drop = envelope(repo / "tasks" / "fix.yaml", 1, id="fix")
    store = Repository.open(repo)
    calls: list[str] = []

    class Killed(BaseException):
        pass

    real_commit = store.git.commit_files

    def die(*args: object, place: Callable[[], object] | None = None, **kwargs: object) -> str:
        calls.append("commit")
        if place is not None:
            place()  # the files are written, then the process dies before git commits them
        raise Killed

    store.git.commit_files = die  # type: ignore[method-assign]
    with pytest.raises(Killed):
        intake.take_in(store, ["tasks/fix.yaml"], intake.IntakeIndex())
    store.git.commit_files = real_commit  # type: ignore[method-assign]
    assert calls == ["commit"]
    assert (repo / "tasks" / "fix" / "envelope.yaml").exists()  # written, not committed
    assert list((store.state_dir() / "journal").iterdir())
    with store.writing():
        pass
    assert not list((store.state_dir() / "journal").iterdir())
    assert drop.exists()
    run = Pass(repo)
    run.settled()
    assert not drop.exists()
    assert run.actions() == ["already-submitted"]
    assert task_ids(repo) == ["fix"]


def test_the_lock_refuses_a_second_holder(tmp_path: Path) -> None:
    with fs.sole_lock(tmp_path / "lock", "pid 1"):
        with pytest.raises(fs.LockHeld) as held, fs.sole_lock(tmp_path / "lock", "pid 2"):
            pass
        assert held.value.owner == "pid 1"
    with fs.sole_lock(tmp_path / "lock", "pid 3"):
        pass


def test_a_tracked_copy_of_what_was_taken_in_is_removed_in_a_commit(repo: Path) -> None:
    text = yamlio.dump({k: v for k, v in ENVELOPE.items() if k != "id"})
    (repo / "tasks" / "first.yaml").write_text(text)
    Pass(repo).settled()
    (repo / "tasks" / "again.yaml").write_text(text)  # the same plan, arriving with a pull
    git(repo, "add", "tasks/again.yaml")
    git(repo, "commit", "-q", "-m", "pulled")
    run = Pass(repo)
    run.settled()
    assert run.actions() == ["already-submitted"]
    assert len(task_ids(repo)) == 1
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "log", "-1", "--format=%an %s") == (
        "taskfs-watch taskfs: remove dropped files already taken in"
    )
