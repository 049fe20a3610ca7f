"""Git remotes for sync tests and benches: a bare repository on disk, clones of it, and a
`git daemon` serving it over git:// on a free loopback port (always killed afterwards)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from taskfs.core import yamlio
from tests.helpers import ENVELOPE, git, taskfs


def make_remote(base: Path) -> Path:
    """A bare remote `base/remote.git` holding one commit with taskfs initialised."""
    remote = base / "remote.git"
    subprocess.run(
        ["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True, capture_output=True
    )
    seed = base / "seed"
    clone(str(remote), seed)
    (seed / "README.md").write_text("a project\n")
    git(seed, "add", "README.md")
    git(seed, "commit", "-q", "-m", "initial")
    assert taskfs("init", cwd=seed).code == 0
    git(seed, "push", "-q", "-u", "origin", "main")
    return remote


def clone(url: str, path: Path) -> Path:
    subprocess.run(["git", "clone", "-q", url, str(path)], check=True, capture_output=True)
    git(path, "checkout", "-q", "-B", "main")
    return path


def new_task(clone_dir: Path, **changes: Any) -> str:
    """Submit an envelope (the test default with `changes`) in `clone_dir`; returns its id."""
    data = {k: v for k, v in {**ENVELOPE, **changes}.items() if v is not None}
    source = clone_dir.parent / f"{clone_dir.name}-input.yaml"
    source.write_text(yamlio.dump(data))
    result = taskfs("new", str(source), "--json", cwd=clone_dir)
    source.unlink()
    assert result.code == 0, result.stdout + result.stderr
    return str(result.json["id"])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def git_daemon(base: Path) -> Iterator[str]:
    """Serve every repository under `base`, fetch and push, at the yielded git:// URL."""
    proc = None
    try:
        for _ in range(5):
            port = free_port()
            proc = subprocess.Popen(
                [
                    "git",
                    "daemon",
                    "--export-all",
                    f"--base-path={base}",
                    "--enable=receive-pack",
                    "--reuseaddr",
                    "--listen=127.0.0.1",
                    f"--port={port}",
                    "--informative-errors",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            if _listening(proc, port):
                yield f"git://127.0.0.1:{port}"
                return
            _kill(proc)
        raise RuntimeError("git daemon did not start")
    finally:
        if proc is not None:
            _kill(proc)


def _listening(proc: subprocess.Popen[bytes], port: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        with socket.socket() as sock, contextlib.suppress(OSError):
            sock.connect(("127.0.0.1", port))
            return True
        time.sleep(0.02)
    return False


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """The daemon and the children it forked per connection: one process group."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


def offline_work(where: Path, agent: str, tasks: int, per_task: int) -> list[str]:
    """Submit `tasks` tasks in one commit, then make `per_task` transitions on each (a claim,
    then input_required and working in turn), through the api in this process."""
    from taskfs.api.lifecycle import transitions
    from taskfs.api.tasks import submit
    from taskfs.store.repository import Repository

    repo = Repository.open(where)
    sources = [
        submit.Source(
            f"{agent}-{i}",
            yamlio.dump(
                {**ENVELOPE, "from": agent, "to": None, "filesAndInterfaces": [f"{agent}/{i}/**"]}
            ).encode(),
        )
        for i in range(tasks)
    ]
    ids = [s.id for s in submit.submit(repo, sources, agent)]
    for task_id in ids:
        transitions.transition(repo, task_id, "working", agent)
        target = "input_required"
        for _ in range(per_task - 1):
            transitions.transition(repo, task_id, target, agent)
            target = "working" if target == "input_required" else "input_required"
    return ids


def race_claims(task: str, racers: dict[str, Path]) -> tuple[list[str], list[dict[str, Any]]]:
    """Start `taskfs claim TASK --sync` at once in each racer's clone (as its own process);
    returns the agents whose claim succeeded and the errors of the others."""
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root}
    procs = {
        agent: subprocess.Popen(
            [sys.executable, "-m", "taskfs", "claim", task, "--sync", "--json", "--agent", agent],
            cwd=where,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for agent, where in racers.items()
    }
    winners, errors = [], []
    for agent, proc in procs.items():
        out, _err = proc.communicate(timeout=120)
        if proc.returncode == 0:
            winners.append(agent)
        else:
            errors += json.loads(out)["errors"] if out.strip() else [{"code": "crashed"}]
    return winners, errors
