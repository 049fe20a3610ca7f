"""Start-up costs are paid only by the commands that need them (issue 9).

`ls` and `ready` are called thousands of times a day: answered from the ledger cache, they
must not import pydantic, YAML, rich, the MCP SDK or git libraries. A test, not a timing: the
modules a process loaded are a fact, whatever the machine's load.

What a fast path prints is compared with what the click command prints (`_click`: the real
`taskfs.cli.app.run`, which never consults the fast path nor the answers it prepares), with
the ledger cache warm and again with no cache at all (issue 17).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.helpers import Result, git, submit, taskfs, write_envelope

HEAVY = ("pydantic", "yaml", "rich", "mcp", "watchdog", "cryptography", "git", "tomlkit")

PROBE = """
import contextlib, io, json, sys
from taskfs.cli.app import run
with contextlib.redirect_stdout(io.StringIO()):
    codes = [run(args) for args in {commands!r}]
print(json.dumps({{"codes": codes, "loaded": [m for m in {heavy!r} if m in sys.modules]}}))
"""


def _loaded(repo: Path, commands: list[list[str]]) -> dict[str, object]:
    script = PROBE.format(commands=commands, heavy=HEAVY)
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=repo, capture_output=True, text=True, check=True
    )
    return dict(json.loads(out.stdout))


def test_the_command_line_imports_nothing_heavy(repo: Path) -> None:
    assert _loaded(repo, []) == {"codes": [], "loaded": []}


def test_listings_from_a_warm_cache_import_nothing_heavy(repo: Path) -> None:
    task = submit(repo)
    submit(repo, id="second", filesAndInterfaces=["src/second.py"], dependsOn=[task])
    assert taskfs("ls", "--json").code == 0  # the cache is now warm
    found = _loaded(repo, [["ls", "--json"], ["ready", "--json"], ["ls", "--state", "submitted"]])
    assert found == {"codes": [0, 0, 0], "loaded": []}


def test_a_commit_outside_the_ledger_costs_a_listing_no_reader(repo: Path) -> None:
    """The read model catches up on HEAD: a commit that touched no task reads no task, and
    loads none of the readers' models (an agent's code commit before every claim)."""
    submit(repo)
    assert taskfs("ls", "--json").code == 0  # the store is at HEAD
    (repo / "notes.txt").write_text("code, not ledger\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "-m", "code")
    found = _fast(repo, ["ls", "--json"])
    assert (found["code"], found["loaded"]) == (0, [])


def test_version_imports_nothing_at_all(tmp_path: Path) -> None:
    script = (
        "import sys\nfrom taskfs.cli import main\ntry:\n    main(['--version'])\n"
        "except SystemExit:\n    pass\nprint([m for m in sys.modules if m.startswith('taskfs.')])"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "['taskfs.cli']"


FAST_PROBE = """
import contextlib, io, json, sys
from taskfs.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main({args!r})
    except SystemExit as exc:
        code = exc.code
print(json.dumps({{"code": code, "stdout": out.getvalue(),
                  "loaded": [m for m in {heavy!r} + ("click",) if m in sys.modules]}}))
"""


def _click(repo: Path, args: Sequence[str]) -> Result:
    """The command through click itself (`taskfs.cli.app.run`), never the paths that skip it:
    the oracle the fast paths are held to."""
    from taskfs.cli.app import run as run_click

    out, err = io.StringIO(), io.StringIO()
    old = Path.cwd()
    try:
        os.chdir(repo)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run_click(list(args))
    finally:
        os.chdir(old)
    return Result(code, out.getvalue(), err.getvalue())


def _without_cache(repo: Path) -> None:
    shutil.rmtree(repo / ".git" / "taskfs" / "cache", ignore_errors=True)


def _fast(repo: Path, args: list[str], env: dict[str, str] | None = None) -> dict[str, object]:
    script = FAST_PROBE.format(args=args, heavy=HEAVY)
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return dict(json.loads(out.stdout))


@pytest.mark.parametrize("margin", ["2000", "0"])
def test_the_listings_skip_the_command_line_framework_and_answer_the_same(
    repo: Path, margin: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With no racy margin the listing's pre-rendered rows answer `ls`; with the default one
    # (everything here is younger than two seconds) the rows are checked and rendered afresh.
    monkeypatch.setenv("TASKFS_RACY_MARGIN_MS", margin)
    task = submit(repo)
    submit(repo, id="second", filesAndInterfaces=["src/second.py"], dependsOn=[task])
    submit(repo, id="third", filesAndInterfaces=["src/third.py"])
    assert taskfs("claim", task, "--agent", "builder").code == 0
    assert taskfs("ls", "--json").code == 0  # the cache catches up with the claim
    answers = {}
    for args in (
        ["ls", "--json"],
        ["ls", "--json", "--state", "working"],
        ["ls", "--state=submitted", "--json"],
        ["ls", "--json", "--to", "builder", "--context", "auth-hardening"],
        ["ready", "--json"],
        ["ready", "--json", "--agent", "builder"],
    ):
        fast = _fast(repo, args)
        assert fast["loaded"] == [], args
        if len(args) == 2:  # unfiltered: a comparison of empty lists would prove little
            assert json.loads(str(fast["stdout"]))["tasks"], args
        through_click = _click(repo, args)
        assert (fast["code"], fast["stdout"]) == (through_click.code, through_click.stdout), args
        answers[tuple(args)] = fast["code"], fast["stdout"]
    _without_cache(repo)  # click again, every task read by the full reader
    for args, answer in answers.items():
        through_click = _click(repo, args)
        assert answer == (through_click.code, through_click.stdout), args


def test_what_the_fast_path_does_not_know_goes_to_click(repo: Path) -> None:
    bad = _fast(repo, ["ls", "--json", "--state", "done"])
    assert bad["code"] == 2
    assert "click" in bad["loaded"]  # click named the allowed states
    assert json.loads(str(bad["stdout"]))["errors"][0]["code"] == "usage"
    refused = _fast(repo, ["ready", "--json", "--agent", "not a name"])
    assert refused["code"] == 1
    assert json.loads(str(refused["stdout"]))["errors"][0]["code"] == "invalid_agent"


def test_claim_skips_the_command_line_framework_and_answers_as_click_does(repo: Path) -> None:
    first = submit(repo, id="first", filesAndInterfaces=["src/first.py"])
    second = submit(repo, id="second", filesAndInterfaces=["src/second.py"])
    fast = _fast(repo, ["claim", first, "--agent", "builder", "--json"])
    assert fast["code"] == 0
    assert fast["loaded"] == []  # no click, and no YAML: a claim's status file is plain words
    through_click = _click(repo, ["claim", second, "--json", "--agent=builder"])
    assert through_click.code == 0

    def shape(text: str) -> dict[str, object]:
        doc = json.loads(text)
        return {key: value for key, value in doc.items() if key not in ("id", "commit", "file")}

    assert shape(str(fast["stdout"])) == shape(through_click.stdout)
    assert json.loads(str(fast["stdout"]))["state"] == "working"
    assert taskfs("show", first, "--json").json["state"] == "working"
    for args, env in (
        (["claim", "nope", "--agent", "builder", "--json"], {}),
        (["claim", second, "--json"], {"TASKFS_AGENT": ""}),
        (["claim", first, "--json"], {"TASKFS_AGENT": "builder"}),
    ):
        refused = _fast(repo, args, env)
        with pytest.MonkeyPatch.context() as patch:
            for name, value in env.items():
                patch.setenv(name, value)
            expected = _click(repo, args)
        assert (refused["code"], refused["stdout"]) == (expected.code, expected.stdout), args
        assert "click" not in refused["loaded"], args


def test_show_of_a_valid_task_imports_nothing_heavy_and_answers_as_click_does(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 19: the full reader stores a valid task's answer; the next `show` prints it after
    # a dozen `stat` calls, with neither pydantic nor YAML (nor click) loaded.
    monkeypatch.setenv("TASKFS_RACY_MARGIN_MS", "0")
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    first = _fast(repo, ["show", task, "--json"], {"TASKFS_RACY_MARGIN_MS": "0"})
    assert "pydantic" in first["loaded"]  # nothing stored yet: the full reader ran
    for args in (["show", task, "--json"], ["show", task], ["show", "--format=text", task]):
        fast = _fast(repo, args, {"TASKFS_RACY_MARGIN_MS": "0"})
        assert fast["loaded"] == [], args
        assert fast["code"] == 0, args
    # The same bytes as the full reader prints with no stored answer.
    stored = _fast(repo, ["show", task, "--json"], {"TASKFS_RACY_MARGIN_MS": "0"})
    text = _fast(repo, ["show", task], {"TASKFS_RACY_MARGIN_MS": "0"})
    _without_cache(repo)
    assert (stored["code"], stored["stdout"]) == (0, _click(repo, ["show", task, "--json"]).stdout)
    _without_cache(repo)
    assert (text["code"], text["stdout"]) == (0, _click(repo, ["show", task]).stdout)
    # Markdown, an unknown id and a bad one go the full way, and say what they said before.
    markdown = _fast(repo, ["show", task, "--format", "markdown"])
    assert markdown["code"] == 0
    assert "click" in markdown["loaded"]
    missing = _fast(repo, ["show", "nope", "--json"])
    assert missing["code"] == 1
    assert json.loads(str(missing["stdout"]))["errors"][0]["code"] == "task_not_found"


def test_move_refuse_and_complete_skip_the_command_line_framework(repo: Path) -> None:
    # Issue 19: the transitions other than claim take the same path as claim.
    first = submit(repo, id="first", filesAndInterfaces=["src/first.py"])
    second = submit(repo, id="second", filesAndInterfaces=["src/second.py"])
    assert taskfs("claim", first, "--agent", "builder").code == 0
    moved = _fast(repo, ["move", first, "input_required", "--agent", "builder", "--json"])
    assert (moved["code"], json.loads(str(moved["stdout"]))["state"]) == (0, "input_required")
    assert "click" not in moved["loaded"]
    refused = _fast(repo, ["refuse", second, "--agent", "builder", "--reason", "not mine"])
    assert (refused["code"], refused["stdout"]) == (0, f"{second}: rejected\n")
    assert "click" not in refused["loaded"]
    assert taskfs("show", second, "--json").json["history"][-1]["reason"] == "not mine"
    # complete without evidence is refused as before, with the same code, without click.
    assert taskfs("move", first, "working", "--agent", "builder").code == 0
    done = _fast(repo, ["complete", first, "--agent", "builder", "--json"])
    assert done["code"] == 1
    assert json.loads(str(done["stdout"]))["errors"][0]["code"] == "completion_requires_evidence"
    assert "click" not in done["loaded"]
    expected = _click(repo, ["complete", first, "--agent", "builder", "--json"])
    assert (done["code"], done["stdout"]) == (expected.code, expected.stdout)
    # What the fast path does not read goes to click: a state that is none, an artifact.
    for args in (
        ["move", first, "finished", "--agent", "builder", "--json"],
        ["complete", first, "--agent", "builder", "--artifact", "x=y", "--json"],
        ["move", first, "failed", "--agent", "builder", "--reason", "--json"],
    ):
        slow = _fast(repo, args)
        assert "click" in slow["loaded"], args
    assert _fast(repo, ["move", first, "finished", "--agent", "builder", "--json"])["code"] == 2


def test_new_and_send_skip_the_command_line_framework_and_answer_as_click_does(
    repo: Path,
) -> None:
    # Issue 19: agents run `new` and `send` on every turn; click and its forty commands cost
    # them a fifth of the command. The same body prints the same document either way.
    fast_env = repo.parent / "fast.yaml"
    click_env = repo.parent / "click.yaml"
    write_envelope(fast_env, id="by-fast", filesAndInterfaces=["src/fast.py"])
    write_envelope(click_env, id="by-click", filesAndInterfaces=["src/click.py"])
    fast = _fast(repo, ["new", str(fast_env), "--agent", "planner", "--json"])
    assert "click" not in fast["loaded"]
    through_click = _click(repo, ["new", str(click_env), "--agent", "planner", "--json"])
    assert fast["code"] == through_click.code == 0
    assert json.loads(str(fast["stdout"])) | {"id": "x"} == json.loads(through_click.stdout) | {
        "id": "x"
    }
    # A refusal is the same refusal.
    again = _fast(repo, ["new", str(fast_env), "--agent", "planner", "--json"])
    expected = _click(repo, ["new", str(fast_env), "--agent", "planner", "--json"])
    assert (again["code"], again["stdout"]) == (expected.code, expected.stdout) != (0, "")
    assert taskfs("claim", "by-fast", "--agent", "builder").code == 0
    sent = _fast(repo, ["send", "by-fast", "progress", "--agent", "builder", "--json"])
    assert "click" not in sent["loaded"]
    by_click = _click(repo, ["send", "by-fast", "progress", "--agent", "builder", "--json"])
    assert sent["code"] == by_click.code == 0

    def shape(text: str) -> dict[str, object]:
        doc = dict(json.loads(text))
        return {k: v for k, v in doc.items() if k not in ("msg_id", "file", "commit", "at", "ts")}

    assert shape(str(sent["stdout"])) == shape(by_click.stdout)
    # What the fast path does not read goes to click: a status that is none, stdin, --help.
    for args in (
        ["send", "by-fast", "x", "--status", "done", "--agent", "builder", "--json"],
        ["send", "by-fast", "-", "--agent", "builder", "--json"],
        ["new", "-", "--json"],
        ["new", "--help"],
    ):
        assert "click" in _fast(repo, args)["loaded"], args


def test_history_readers_load_gitpython_and_the_fast_paths_do_not(repo: Path) -> None:
    # Issue 17: GitPython (`git`) is paid for once by the commands that read history, and by
    # no command that must start fast.
    first = submit(repo, id="first", filesAndInterfaces=["src/first.py"])
    submit(repo, id="second", filesAndInterfaces=["src/second.py"])
    third = write_envelope(repo / "third.yaml", id="third", filesAndInterfaces=["src/third.py"])
    writes = _loaded(
        repo,
        [
            ["new", str(third)],
            ["claim", first, "--agent", "builder"],
            ["move", first, "input_required", "--agent", "builder"],
            ["ls", "--json"],
            ["ready", "--json"],
            ["show", first, "--json"],
            ["log", first, "--json"],
        ],
    )
    assert writes["codes"] == [0, 0, 0, 0, 0, 0, 0]
    assert "git" not in writes["loaded"]  # type: ignore[operator]
    audited = _loaded(repo, [["audit", "--json"]])
    assert audited["codes"] == [0]
    assert "git" in audited["loaded"]  # type: ignore[operator]
    reviewed = _loaded(repo, [["review", "--json", "HEAD~2..HEAD"]])
    assert reviewed["codes"] == [0]
    assert "git" in reviewed["loaded"]  # type: ignore[operator]


def test_a_command_the_fast_path_answers_ends_with_its_output_and_its_status(repo: Path) -> None:
    """The real command line (`python -m taskfs`) ends a fast-path command without tearing the
    interpreter down (issue 19): what it wrote is all out, and its exit status is the one the
    command returned, refusals included."""
    envelope = write_envelope(repo.parent / "ends.yaml", id="ends", filesAndInterfaces=["src/e.py"])
    for n in range(5):
        submit(repo, id=f"many-{n:02d}", filesAndInterfaces=[f"src/m{n}.py"])

    def command(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "taskfs", *args],
            cwd=repo,
            capture_output=True,
            text=True,
            check=False,
        )

    made = command("new", str(envelope), "--agent", "planner", "--json")
    assert (made.returncode, json.loads(made.stdout)["id"]) == (0, "ends")
    again = command("new", str(envelope), "--agent", "planner", "--json")
    assert again.returncode == 1
    assert json.loads(again.stdout)["errors"][0]["code"] == "task_exists"
    listed = command("ls", "--json")
    assert listed.returncode == 0
    assert listed.stdout == taskfs("ls", "--json").stdout  # every byte of the answer
    assert len(json.loads(listed.stdout)["tasks"]) == 6
    refused = command("claim", "nope", "--agent", "builder", "--json")
    assert refused.returncode == 1
    assert json.loads(refused.stdout)["errors"][0]["code"] == "task_not_found"
    assert (
        command("--version").returncode,
        command("ls", "--json", "--state", "x").returncode,
    ) == (
        0,
        2,
    )
