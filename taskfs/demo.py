"""`taskfs demo`: a complete delegation between two agents in a throwaway repository.

It types the same commands a user would and prints each with what it answered, so the demo
doubles as a tour of the command line.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import click

ENVELOPE = """\
objective: Make greet() refuse an empty name instead of greeting nobody.
outputFormat: A change to greet.py; greet("") raises ValueError.
toolAndSourceGuidance: Python 3 only; read greet.py and test_greet.py.
boundaries: Do not change the greeting text or add dependencies.
filesAndInterfaces:
  - greet.py
acceptanceCheck:
  passFailCommand: python3 test_greet.py
  endToEndVerification: python3 -c 'import greet; print(greet.greet("Ada"))' prints Hello, Ada!
  timeoutSeconds: 60
contextID: demo
from: planner
to: builder
"""

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
    print("ok: empty names are refused")
else:
    raise SystemExit("greet('') should raise ValueError")
"""


def say(text: str) -> None:
    click.secho(f"\n# {text}", fg="cyan")


def taskfs(*args: str) -> str:
    """Run one taskfs command as typed at a prompt; print it and its answer."""
    from taskfs.cli.app import run

    click.secho(f"$ taskfs {shlex.join(args)}", bold=True)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(list(args))
    for stream in (out.getvalue(), err.getvalue()):
        if stream.strip():
            click.echo(stream.rstrip("\n"))
    if code:
        click.secho(f"(exit status {code})", fg="yellow")
    return out.getvalue()


@contextlib.contextmanager
def inside(folder: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


def run_demo(keep: bool = False) -> int:
    base = Path(tempfile.mkdtemp(prefix="taskfs-demo-"))
    repo = base / "repo"
    repo.mkdir()
    with inside(repo):
        (repo / "greet.py").write_text(BROKEN)
        (repo / "test_greet.py").write_text(TEST)
        subprocess.run(["git", "init", "-q"], check=True)
        say("A throwaway repository with a small bug, and taskfs set up in it.")
        taskfs("init", "--agent", "planner")
        say("planner writes down what it wants, and how to tell it is done.")
        (repo / "request.yaml").write_text(ENVELOPE)
        click.echo(ENVELOPE.rstrip())
        task = taskfs("new", "request.yaml", "--agent", "planner").strip()
        say("builder sees what is waiting for it, and takes the task.")
        taskfs("ready", "--agent", "builder")
        taskfs("claim", task, "--agent", "builder")
        say("Saying it is done is not enough: completion needs a passing check.")
        taskfs("complete", task, "--agent", "builder")
        say("builder fixes greet.py (the file the envelope says it owns).")
        (repo / "greet.py").write_text(FIXED)
        say("The ledger is git history: every step is a commit by the agent that made it.")
        taskfs("log", task)
        click.echo(
            subprocess.run(
                ["git", "log", "--format=%h %an: %s"], capture_output=True, text=True, check=True
            ).stdout.rstrip()
        )
        taskfs("audit")
    if keep:
        click.secho(f"\nThe demo repository is kept at {repo}", fg="green")
    else:
        import shutil

        shutil.rmtree(base, ignore_errors=True)
    return 0
