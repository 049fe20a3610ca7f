"""Helpers shared by the benchmark scripts: throwaway repositories and timing."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

IDENTITY = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def env() -> dict[str, str]:
    return {**os.environ, **IDENTITY}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, env=env(), capture_output=True, text=True, check=True
    ).stdout.strip()


def taskfs(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "taskfs", *args],
        cwd=repo,
        env=env(),
        capture_output=True,
        text=True,
        check=False,
    )
    if check and proc.returncode != 0:
        raise SystemExit(f"taskfs {' '.join(args)} failed: {proc.stdout}{proc.stderr}")
    return proc


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("bench\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "initial")
    taskfs(path, "init", "--agent", "bench")
    return path


def envelope(i: int, **changes: object) -> dict[str, object]:
    data: dict[str, object] = {
        "id": f"t{i:05d}",
        "objective": f"Refactor module {i} so that its public functions have type annotations.",
        "outputFormat": "A commit touching only the owned files, with passing tests.",
        "toolAndSourceGuidance": "Use mypy --strict and pytest; read the module and its tests.",
        "boundaries": "Do not rename public functions; do not add dependencies.",
        "filesAndInterfaces": [f"src/pkg{i % 50}/mod{i}.py", f"tests/pkg{i % 50}/test_mod{i}.py"],
        "acceptanceCheck": {
            "passFailCommand": f"pytest -q tests/pkg{i % 50}/test_mod{i}.py",
            "endToEndVerification": "Import the module in a fresh interpreter and call main().",
        },
        "contextID": f"typing-{i % 20}",
        "from": "planner",
    }
    data.update(changes)
    return data


def submit_many(repo: Path, envelopes: Sequence[dict[str, object]], batch: int = 500) -> None:
    """Submit envelopes in-process through taskfs's own writer, many per commit."""
    from taskfs.api.tasks.submit import Source, submit
    from taskfs.core import yamlio
    from taskfs.store.repository import Repository

    here = Path.cwd()
    os.chdir(repo)
    try:
        store = Repository.open(repo)
        for start in range(0, len(envelopes), batch):
            chunk = envelopes[start : start + batch]
            sources = [Source(str(e["id"]), yamlio.dump(e).encode()) for e in chunk]
            submit(store, sources, "planner")
    finally:
        os.chdir(here)


def median_time(command: Sequence[str], cwd: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, env=env(), capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)
