"""`taskfs demo`: a complete delegation between two agents in a throwaway repository.

It types the same commands a user would and prints each with what it answered, so the demo
doubles as a tour of the command line.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from taskfs import i18n
from taskfs.core.layout import KEYS_DIR

Run = Callable[[list[str]], int]

# The keys never change; the words are the reader's language (`envelope`).
ENVELOPE = """\
objective: {objective}
outputFormat: {output}
toolAndSourceGuidance: {guidance}
boundaries: {boundaries}
filesAndInterfaces:
  - greet.py
acceptanceCheck:
  passFailCommand: python3 test_greet.py
  endToEndVerification: {verification}
  timeoutSeconds: 60
contextID: demo
from: planner
to: builder
"""


def envelope() -> str:
    """What planner asks for, in the reader's language (a translation keeps to plain YAML
    scalars: no `: ` and no `#`)."""
    return ENVELOPE.format(
        objective=i18n.say("Make greet() refuse an empty name instead of greeting nobody."),
        output=i18n.say('A change to greet.py; greet("") raises ValueError.'),
        guidance=i18n.say("Python 3 only; read greet.py and test_greet.py."),
        boundaries=i18n.say("Do not change the greeting text or add dependencies."),
        verification=i18n.say(
            "python3 -c 'import greet; print(greet.greet(\"Ada\"))' prints Hello, Ada!"
        ),
    )


BROKEN = 'def greet(name):\n    return f"Hello, {name}!"\n'
FIXED = (
    "def greet(name):\n"
    "    if not name:\n"
    '        raise ValueError("name must not be empty")\n'
    '    return f"Hello, {name}!"\n'
)
TEST = """\
import greet

assert greet.greet("Ada") == "Hello, Ada!"
try:
    greet.greet("")
except ValueError:
    print({refused})
else:
    raise SystemExit({accepted})
"""


def test_source() -> str:
    """The demo's test, its verdicts in the reader's language."""
    return TEST.format(
        refused=json.dumps(i18n.say("ok: empty names are refused"), ensure_ascii=False),
        accepted=json.dumps(i18n.say("greet('') should raise ValueError"), ensure_ascii=False),
    )


def say(text: str) -> None:
    click.secho(f"\n# {text}", fg="cyan")


def typed(run: Run, *args: str) -> str:
    """Run one taskfs command (`run`: the command line's entry) as typed at a prompt; print
    it and its answer."""
    click.secho(f"$ taskfs {shlex.join(args)}", bold=True)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(list(args))
    for stream in (out.getvalue(), err.getvalue()):
        if stream.strip():
            click.echo(stream.rstrip("\n"))
    if code:
        click.secho(i18n.say("(exit status {code})", code=code), fg="yellow")
    return out.getvalue()


@contextlib.contextmanager
def inside(folder: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


def run_demo(run: Run, keep: bool = False) -> int:
    """The demo, through `run` (the click command line, which launches it: passed in so that
    this module does not import it back)."""
    base = Path(tempfile.mkdtemp(prefix="taskfs-demo-"))
    repo = base / "repo"
    repo.mkdir()
    # Keys and trust stay inside the throwaway folder: the demo never touches ~/.config.
    settings = {
        "TASKFS_KEY_DIR": str(base / "keys"),
        "TASKFS_TRUSTED_RUNNERS": str(base / "trusted-runners.yaml"),
        "TASKFS_CACHE_KEY": str(base / "cache.key"),  # the key the caches are sealed with
        # Each command the demo types chooses its language afresh: the demo's own, passed on.
        "TASKFS_LANG": next(iter(i18n.languages()), "en"),
    }
    with inside(repo), environment(settings):
        _delegation(repo, run)
    if keep:
        click.secho("\n" + i18n.say("The demo repository is kept at {path}", path=repo), fg="green")
    else:
        import shutil

        shutil.rmtree(base, ignore_errors=True)
    return 0


def _delegation(repo: Path, run: Run) -> None:
    taskfs = functools.partial(typed, run)
    (repo / "greet.py").write_text(BROKEN)
    (repo / "test_greet.py").write_text(test_source())
    subprocess.run(["git", "init", "-q"], check=True)
    git("add", "greet.py", "test_greet.py")
    git("commit", "-q", "-m", i18n.say("greet, with a test"), author="planner")
    say(i18n.say("A throwaway repository with a small bug, and taskfs set up in it."))
    taskfs("init", "--agent", "planner")
    say(i18n.say("A runner key: the evidence `taskfs check` records is signed with it."))
    taskfs("keys", "new", "--runner", "demo-ci")
    # The operator trusts that key in a list outside the repository (the demo's own folder):
    # a named trust list that is missing fails closed.
    public = (repo / KEYS_DIR / "runner" / "demo-ci.pub").read_text().strip()
    Path(os.environ["TASKFS_TRUSTED_RUNNERS"]).write_text(f"runners:\n  demo-ci: {public}\n")
    say(i18n.say("planner writes down what it wants, and how to tell it is done."))
    asked = envelope()
    (repo / "request.yaml").write_text(asked)
    click.echo(asked.rstrip())
    task = taskfs("new", "request.yaml", "--agent", "planner").strip()
    say(i18n.say("builder sees what is waiting for it, and takes the task."))
    taskfs("ready", "--agent", "builder")
    taskfs("claim", task, "--agent", "builder")
    say(i18n.say("Saying it is done is not enough: completion needs a passing check."))
    taskfs("complete", task, "--agent", "builder")
    say(i18n.say("The check fails on the code as it is; the failure is recorded too."))
    taskfs("check", task, "--agent", "builder")
    say(
        i18n.say("builder fixes greet.py (the file the envelope says it owns) and commits the fix.")
    )
    (repo / "greet.py").write_text(FIXED)
    git("add", "greet.py")
    git("commit", "-q", "-m", i18n.say("greet: refuse empty names"))
    say(
        i18n.say(
            "Now the check passes. Its evidence file records what ran, on what, and how it ended."
        )
    )
    out = taskfs("check", task, "--agent", "builder", "--json")
    evidence = repo / json.loads(out)["evidence"]
    click.echo("\n".join(evidence.read_text().splitlines()[:14]) + "\n...")
    say(
        i18n.say("A second opinion in a fresh checkout of HEAD: nothing uncommitted helps it pass.")
    )
    taskfs("check", task, "--fresh", "--agent", "builder")
    say(i18n.say("Completion rests on the passing evidence; the result is named, not pasted."))
    taskfs("complete", task, "--agent", "builder", "--artifact", "fix=greet.py")
    say(i18n.say("The ledger is git history: every step is a commit by the agent that made it."))
    taskfs("log", task)
    click.echo(git("log", "--format=%h %an: %s"))
    taskfs("audit")


def git(*args: str, author: str = "builder") -> str:
    identity = ["-c", f"user.name={author}", "-c", f"user.email={author}@taskfs"]
    proc = subprocess.run(["git", *identity, *args], capture_output=True, text=True, check=True)
    return proc.stdout.rstrip()


@contextlib.contextmanager
def environment(settings: dict[str, str]) -> Iterator[None]:
    old = {key: os.environ.get(key) for key in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
