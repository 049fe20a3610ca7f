"""The progress-nudge hook, run after every tool call of an agent, against bare interpreter
start-up (`python -c pass`) and `taskfs --version`, in a repository of N tasks (one of them
working for the agent).

Cached: nothing changed since the last call and no reminder is due (the common case).
Reading: HEAD moved since (a commit), so the hook reads the ledger once.

    python bench/nudge_hook.py [--tasks 2000] [--runs 9]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import env, envelope, git, median_time, new_repo, submit_many, taskfs

EVENT = json.dumps({"hook_event_name": "PostToolUse", "tool_name": "Bash", "session_id": "b"})
HOOK = [sys.executable, "-m", "taskfs", "nudge", "--hook", "claude", "--agent", "builder"]


def hook_time(repo: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        HOOK, cwd=repo, env=env(), input=EVENT, capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or proc.stdout:
        raise SystemExit(f"hook answered {proc.returncode}: {proc.stdout!r} {proc.stderr!r}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="taskfs-bench-") as tmp:
        repo = new_repo(Path(tmp) / "repo")
        submit_many(repo, [envelope(i, to="builder") for i in range(args.tasks)])
        taskfs(repo, "claim", "t00000", "--agent", "builder")
        python = median_time([sys.executable, "-c", "pass"], repo, args.runs)
        version = median_time([sys.executable, "-m", "taskfs", "--version"], repo, args.runs)
        hook_time(repo)
        cached = statistics.median(hook_time(repo) for _ in range(args.runs))
        reading = []
        for run in range(args.runs):
            (repo / f"note{run}.txt").write_text(f"{run}\n")
            git(repo, "add", f"note{run}.txt")
            git(repo, "commit", "-q", "-m", f"note {run}")
            reading.append(hook_time(repo))
        read = statistics.median(reading)
        print(f"{args.tasks} tasks, median of {args.runs}")
        print(f"python -c pass:       {python * 1000:8.1f} ms")
        print(f"taskfs --version:     {version * 1000:8.1f} ms")
        print(f"nudge hook, cached:   {cached * 1000:8.1f} ms  ({cached / python:.2f}x python)")
        print(f"nudge hook, reading:  {read * 1000:8.1f} ms  ({read / python:.2f}x python)")


if __name__ == "__main__":
    main()
