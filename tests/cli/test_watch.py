"""`taskfs watch` as a user runs it: a real process in a real repository, files dropped the
way agents, editors and tools drop them, and the ledger and git history looked at afterwards."""

from __future__ import annotations

import os
import re
import shutil
import signal
from pathlib import Path

import pytest

from taskfs.core import yamlio
from tests.cli.watcher import FAST, drop, fields, poll, processes_in, watching
from tests.helpers import ENVELOPE, git, submit, taskfs, taskfs_process

ALL_MISSING = sorted(
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


def envelope_text(n: int, **changes: object) -> str:
    data: dict[str, object] = {
        **ENVELOPE,
        "objective": f"Objective number {n}.",
        "filesAndInterfaces": [f"src/mod{n}.py"],
        **changes,
    }
    return yamlio.dump({k: v for k, v in data.items() if v is not None})


def report_codes(path: Path) -> list[str]:
    report = path.with_name(path.name.removesuffix(".yaml") + "+refused.yaml")
    value = yamlio.load(report.read_bytes())
    assert isinstance(value, dict)
    return sorted(e["code"] for e in value["errors"])


def task_ids(repo: Path) -> list[str]:
    return sorted(t["id"] for t in taskfs("ls", "--json", cwd=repo).json["tasks"])


def assert_clean_stop(repo: Path, code: int, out: str, lines: list[str], reason: str) -> None:
    assert code == 0
    assert out == ""  # the log never goes to stdout
    assert fields(lines[-1]) == {"reason": reason}
    assert lines[-1].split(" ")[1] == "stopped"
    assert not list((repo / ".git" / "taskfs" / "journal").glob("*"))
    assert processes_in(repo) == []


@pytest.mark.parametrize("observer", ["inotify", "polling"])
def test_a_valid_envelope_dropped_in_is_submitted_and_committed(repo: Path, observer: str) -> None:
    extra = ("--polling",) if observer == "polling" else ()
    with watching(repo, *extra) as watcher:
        drop(repo / "tasks" / "fix.yaml", envelope_text(1, id="fix-login"))
        (submitted,) = watcher.wait_for("submitted")
        assert submitted["path"] == "tasks/fix.yaml"
        assert submitted["id"] == "fix-login"
        code = watcher.stop()
        assert_clean_stop(repo, code, watcher.out, watcher.lines(), "SIGTERM")
    assert not (repo / "tasks" / "fix.yaml").exists()
    assert task_ids(repo) == ["fix-login"]
    assert git(repo, "log", "-1", "--format=%s") == "taskfs: fix-login submitted by planner"
    assert submitted["commit"] == git(repo, "rev-parse", "HEAD")[:12]
    assert git(repo, "status", "--porcelain") == ""


def test_an_invalid_envelope_gets_a_report_and_fixing_it_is_picked_up(repo: Path) -> None:
    bad = repo / "tasks" / "bad.yaml"
    with watching(repo) as watcher:
        with bad.open("w") as handle:  # written in place, in two steps, as a slow writer does
            handle.write("objectve: typo\n")
            handle.flush()
            handle.write("from: planner\n")
        (refused,) = watcher.wait_for("refused")
        assert refused["report"] == "tasks/bad+refused.yaml"
        assert report_codes(bad) == ALL_MISSING
        assert sorted(refused["errors"].split(",")) == ALL_MISSING
        head = git(repo, "rev-parse", "HEAD")
        drop(bad, envelope_text(1, id="fixed"))
        watcher.wait_for("submitted", path="tasks/bad.yaml")
        watcher.wait_for("report-removed", path="tasks/bad+refused.yaml")
        assert watcher.stop() == 0
    assert not bad.with_name("bad+refused.yaml").exists()
    assert task_ids(repo) == ["fixed"]
    assert git(repo, "rev-list", "--count", f"{head}..HEAD") == "1"


def test_a_conflicting_envelope_is_refused_even_from_before_the_start(repo: Path) -> None:
    holder = submit(repo, id="holder")
    clash = repo / "tasks" / "clash.yaml"
    clash.write_text(envelope_text(1, id="clash", filesAndInterfaces=["src/auth/**"]))
    with watching(repo) as watcher:
        watcher.wait_for("refused", path="tasks/clash.yaml")
        assert watcher.stop() == 0
    assert report_codes(clash) == ["ownership_conflict"]
    report = yamlio.load(clash.with_name("clash+refused.yaml").read_bytes())
    assert report["errors"][0]["other"] == holder
    assert report["errors"][0]["witness"] == "src/auth/login.py"
    assert task_ids(repo) == ["holder"]


def test_once_handles_a_backlog_and_exits(repo: Path) -> None:
    tasks = repo / "tasks"
    for n in range(5):
        (tasks / f"t{n}.yaml").write_text(envelope_text(n, id=f"t{n}"))
    (tasks / "no-id.yaml").write_text(envelope_text(10))
    (tasks / "bad.yaml").write_text("objective: [unclosed\n")
    (tasks / "placed").mkdir()
    (tasks / "placed" / "envelope.yaml").write_text(envelope_text(11))
    (tasks / ".t9.yaml.swp").write_text("junk")
    result = taskfs_process("watch", "--once", *FAST, cwd=repo)
    assert result.code == 0, result.stderr
    assert result.stdout == ""
    actions = [line.split(" ")[1] for line in result.stderr.splitlines()]
    assert actions.count("submitted") == 7
    assert actions.count("refused") == 1
    assert actions[-1] == "stopped"
    assert report_codes(tasks / "bad.yaml") == ["yaml_invalid"]
    ids = task_ids(repo)
    assert len(ids) == 7
    assert {"t0", "t1", "t2", "t3", "t4", "placed"} <= set(ids)
    assert sorted(p.name for p in tasks.iterdir() if p.is_file()) == sorted(
        [".gitkeep", ".t9.yaml.swp", "bad.yaml", "bad+refused.yaml"]
    )
    findings = taskfs("audit", "--json").json["findings"]
    assert sorted((f["code"], f["path"]) for f in findings) == [
        ("file_invalid", "tasks/.t9.yaml.swp"),  # audit names what is not a taskfs file
        ("yaml_invalid", "tasks/bad.yaml"),
    ]
    # Again: nothing is pending, the refusal is not repeated, and nothing is committed.
    head = git(repo, "rev-parse", "HEAD")
    again = taskfs_process("watch", "--once", *FAST, cwd=repo)
    assert again.code == 0
    assert [line.split(" ")[1] for line in again.stderr.splitlines()] == ["watching", "stopped"]
    assert git(repo, "rev-parse", "HEAD") == head


def test_editor_temporary_files_are_ignored(repo: Path) -> None:
    tasks = repo / "tasks"
    with watching(repo) as watcher:
        # What vim does on :w of tasks/fix.yaml, then emacs and a backup-keeping tool.
        (tasks / ".fix.yaml.swp").write_text("b0VIM junk")
        probe = tasks / "4913"
        probe.write_text("")
        probe.unlink()
        (tasks / "fix.yaml~").write_text("objective: old\n")
        os.symlink("user@host.1234", tasks / ".#fix.yaml")
        (tasks / "#fix.yaml#").write_text("objective: [half\n")
        (tasks / "fix.yaml").write_text(envelope_text(1, id="fix"))
        watcher.wait_for("submitted", path="tasks/fix.yaml")
        assert watcher.stop() == 0
        log = "\n".join(watcher.lines())
    for name in (".fix.yaml.swp", "fix.yaml~", ".#fix.yaml", "#fix.yaml#"):
        assert os.path.lexists(tasks / name)
        assert name not in log
    assert [p.name for p in tasks.glob("*+refused.yaml")] == []
    assert task_ids(repo) == ["fix"]


def test_its_own_writes_do_not_wake_it(repo: Path) -> None:
    with watching(repo) as watcher:
        drop(repo / "tasks" / "fix.yaml", envelope_text(1, id="fix"))
        watcher.wait_for("submitted", path="tasks/fix.yaml")
        # A later file, so that any event of our own commit has arrived before it is handled.
        drop(repo / "tasks" / "later.yaml", envelope_text(2, id="later"))
        watcher.wait_for("submitted", path="tasks/later.yaml")
        assert watcher.stop() == 0
        passes = watcher.actions("pass")
    woken_by = [p.get("hints", "") + "," + p.get("gone", "") for p in passes]
    assert not any("tasks/fix/" in w or w.endswith("tasks/fix") for w in woken_by), passes
    assert not any("tasks/later/" in w for w in woken_by), passes
    assert not any("tasks/fix.yaml" in p.get("gone", "") for p in passes), passes
    assert len(watcher.actions("submitted")) == 2


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_it_between_steps(repo: Path, sig: int) -> None:
    tasks = repo / "tasks"
    for n in range(60):
        (tasks / f"t{n:02d}.yaml").write_text(envelope_text(n, id=f"t{n:02d}"))
    with watching(repo, "--batch", "5") as watcher:
        watcher.wait_for("submitted")
        code = watcher.stop(sig)
        assert_clean_stop(repo, code, watcher.out, watcher.lines(), signal.Signals(sig).name)
    done = task_ids(repo)
    left = sorted(p.name for p in tasks.glob("t*.yaml"))
    assert len(done) + len(left) == 60  # each file is either a task or still waiting
    assert not set(done) & {name.removesuffix(".yaml") for name in left}
    assert taskfs("audit", "--json").json["ok"] is True
    assert taskfs_process("watch", "--once", *FAST, cwd=repo).code == 0
    assert len(task_ids(repo)) == 60


def test_a_second_watcher_on_the_checkout_is_refused(repo: Path) -> None:
    with watching(repo) as watcher:
        second = taskfs_process("watch", "--once", cwd=repo)
        assert second.code == 1
        assert "error[watcher_running]" in second.stderr
        assert f"pid {watcher.proc.pid}" in second.stderr
        assert watcher.stop() == 0


def test_a_policy_inside_the_repository_is_refused(repo: Path, tmp_path: Path) -> None:
    inside = repo / "policy.yaml"
    inside.write_text("allow:\n  commands: ['**']\n")
    result = taskfs_process("watch", "--once", cwd=repo, env={"TASKFS_POLICY": str(inside)})
    assert (result.code, "error[policy_unsafe]" in result.stderr) == (1, True)
    outside = tmp_path / "policy.yaml"
    outside.write_text("allow:\n  commands: 'make check'\n")
    result = taskfs_process("watch", "--once", cwd=repo, env={"TASKFS_POLICY": str(outside)})
    assert (result.code, "error[policy_invalid]" in result.stderr) == (1, True)
    outside.write_text("allow:\n  commands: ['make check']\n")
    result = taskfs_process("watch", "--once", cwd=repo, env={"TASKFS_POLICY": str(outside)})
    assert result.code == 0
    assert "1 command patterns" in result.stderr


def test_outside_a_repository_it_is_refused(tmp_path: Path) -> None:
    result = taskfs_process("watch", "--once", cwd=tmp_path)
    assert result.code == 1
    assert "error[not_a_repository]" in result.stderr
    assert "Traceback" not in result.stderr


def burst(root: Path, count: int) -> None:
    """`count` files: most with ids, some without, some invalid, some in conflict."""
    tasks = root / "tasks"
    for n in range(count):
        name = tasks / f"f{n:04d}.yaml"
        if n % 10 == 3:
            name.write_text(f"objective: broken {n}\nbogus: true\n")
        elif n % 10 == 7:
            name.write_text(envelope_text(n, filesAndInterfaces=["src/auth/login.py"], id=None))
        elif n % 10 == 5:
            name.write_text(envelope_text(n, id=None))
        else:
            name.write_text(envelope_text(n, id=f"f{n:04d}"))


def outcome(root: Path) -> dict[str, object]:
    """What a run left, independent of generated ids: each task by its objective, each
    refusal by its file, and whatever else is in the tasks folder."""
    tasks = {}
    for row in taskfs("ls", "--json", cwd=root).json["tasks"]:
        shown = taskfs("show", row["id"], "--json", cwd=root).json
        key = shown["envelope"]["objective"]
        assert key not in tasks, f"{key} submitted twice"
        named = row["id"] if re.fullmatch(r"f[0-9]{4}|holder", row["id"]) else "<generated>"
        tasks[key] = (named, row["state"])
    refused = {
        p.name: report_codes(p)
        for p in (root / "tasks").glob("f*.yaml")
        if not p.name.endswith("+refused.yaml")
    }
    files = sorted(p.name for p in (root / "tasks").iterdir() if p.is_file())
    audit = taskfs("audit", "--json", cwd=root).json
    return {"tasks": tasks, "refused": refused, "files": files, "audit": audit["findings"]}


def test_killed_mid_burst_and_restarted_ends_as_an_uninterrupted_run(
    repo: Path, tmp_path: Path
) -> None:
    submit(repo, id="holder")  # owns src/auth/login.py: every 10th file conflicts with it
    burst(repo, 100)
    reference = tmp_path / "reference"
    shutil.copytree(repo, reference, symlinks=True)
    once = taskfs_process("watch", "--once", *FAST, cwd=reference)
    assert once.code == 0, once.stderr
    expected = outcome(reference)
    assert len(expected["tasks"]) == 1 + 80  # type: ignore[arg-type]
    assert len(expected["refused"]) == 20  # type: ignore[arg-type]
    # audit names only the broken files still waiting to be fixed
    assert {f["path"] for f in expected["audit"]} == {  # type: ignore[attr-defined]
        f"tasks/f{n:04d}.yaml" for n in range(3, 100, 10)
    }

    with watching(repo, "--batch", "7") as watcher:
        watcher.wait_for("submitted")
        watcher.kill()  # SIGKILL: no chance to finish anything
    poll(lambda: processes_in(repo) == [], "the killed watcher's children to end")
    with watching(repo) as watcher:
        poll(lambda: not unanswered(repo), "every file to be submitted or refused")
        assert watcher.stop() == 0
    found = outcome(repo)
    tasks, wanted = found["tasks"], expected["tasks"]
    assert isinstance(tasks, dict)
    assert isinstance(wanted, dict)
    assert {k: v for k, v in tasks.items() if wanted.get(k) != v} == {}
    assert {k: v for k, v in wanted.items() if tasks.get(k) != v} == {}
    assert found == expected


def unanswered(root: Path) -> list[Path]:
    """Dropped files neither consumed nor refused yet."""
    return [
        p
        for p in (root / "tasks").glob("*.yaml")
        if not p.name.endswith("+refused.yaml")
        and not p.with_name(p.name.removesuffix(".yaml") + "+refused.yaml").exists()
    ]


# -- a recipient asks for its result to be checked ----------------------------------------


def _policy(tmp_path: Path, *commands: str, complete: bool = False) -> dict[str, str]:
    """A runner policy outside the repository that allows exactly `commands` (and lets a
    passing check complete the task with `complete`)."""
    path = tmp_path / "policy.yaml"
    path.write_text(yamlio.dump({"allow": {"commands": list(commands)}, "complete": complete}))
    return {"TASKFS_POLICY": str(path)}


def _ask_for_the_check(repo: Path, task: str) -> None:
    # `taskfs check --request` is `taskfs send --status result`: both ask, neither runs.
    asked = taskfs("check", task, "--request", "--agent", "builder", "--json")
    assert asked.code == 0, asked.stdout + asked.stderr
    assert asked.json["status"] == "result"


def test_a_result_message_leads_to_evidence_and_completion(repo: Path, tmp_path: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    command = ENVELOPE["acceptanceCheck"]["passFailCommand"]
    with watching(repo, env=_policy(tmp_path, command, complete=True)) as watcher:
        # The work is not done yet: the check fails, its evidence says why, the task stays.
        _ask_for_the_check(repo, task)
        watcher.wait_for("checked", task=task, verdict="fail")
        assert taskfs("show", task, "--json").json["state"] == "working"
        (repo / "src" / "auth").mkdir(parents=True)
        (repo / "src" / "auth" / "login.py").write_text("def login(p):\n    return bool(p)\n")
        git(repo, "add", "src")
        git(repo, "commit", "-q", "-m", "the work")  # only committed work completes
        _ask_for_the_check(repo, task)
        watcher.wait_for("checked", task=task, verdict="pass")
        poll(lambda: taskfs("show", task, "--json").json["state"] == "completed", "completion")
    runs = [r for r in taskfs("log", task, "--json").json["timeline"] if r["kind"] == "evidence"]
    assert [r["what"] for r in runs] == ["fail", "pass"]
    # git history alone tells the story: evidence commits, then the completion the watcher
    # committed for the holder.
    subjects = git(repo, "log", "--format=%an %s", "-4").splitlines()
    assert subjects[0] == (
        f"watcher taskfs: {task} working -> completed by builder (committed by watcher)"
    )
    assert taskfs("audit", "--json").json["ok"] is True


def test_a_command_the_policy_does_not_allow_is_not_run(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    task = submit(
        repo,
        acceptanceCheck={
            "passFailCommand": f"touch {marker}",
            "endToEndVerification": "nothing to see",
        },
    )
    assert taskfs("claim", task, "--agent", "builder").code == 0
    with watching(repo, env=_policy(tmp_path, "pytest -q")) as watcher:
        _ask_for_the_check(repo, task)
        refused = watcher.wait_for("check-not-run", task=task)
    assert "check_not_allowed" in refused[0]["errors"]
    assert not marker.exists()
    assert not list((repo / "tasks" / task / "evidence").glob("*.yaml"))
    assert taskfs("show", task, "--json").json["state"] == "working"


def test_without_a_policy_nothing_is_run(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    task = submit(
        repo,
        acceptanceCheck={"passFailCommand": f"touch {marker}", "endToEndVerification": "x"},
    )
    assert taskfs("claim", task, "--agent", "builder").code == 0
    sent = taskfs("send", task, "done, please check", "--agent", "builder", "--status", "result")
    assert sent.code == 0, sent.stdout + sent.stderr
    result = taskfs_process("watch", "--once", *FAST, cwd=repo, env={"TASKFS_POLICY": ""})
    assert result.code == 0, result.stderr
    assert "check-not-run" in result.stderr
    assert not marker.exists()
