"""`taskfs claim` in a repository of N tasks against a bare `git commit` of one small file in
the same repository (issue 3 and 9 target: within 3x at 5,000 tasks).

    python bench/claim_cost.py [--tasks 5000] [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import env, envelope, new_repo, submit_many


def timed(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env(), capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{command} failed: {proc.stdout!r} {proc.stderr!r}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="taskfs-bench-") as tmp:
        repo = new_repo(Path(tmp) / "repo")
        start = time.perf_counter()
        submit_many(repo, [envelope(i) for i in range(args.tasks)])
        print(f"built {args.tasks} tasks in {time.perf_counter() - start:.1f} s")
        commits, claims = [], []
        for run in range(args.runs):
            (repo / f"note{run}.txt").write_text(f"note {run}\n")
            commits.append(
                timed(["sh", "-c", f"git add note{run}.txt && git commit -q -m note{run}"], repo)
            )
            claims.append(
                timed(
                    [sys.executable, "-m", "taskfs", "claim", f"t{run:05d}", "--agent", "b"], repo
                )
            )
        git_time, claim_time = statistics.median(commits), statistics.median(claims)
        print(f"bare git add + commit:  {git_time * 1000:8.1f} ms")
        print(f"taskfs claim:           {claim_time * 1000:8.1f} ms")
        print(f"ratio claim / commit:   {claim_time / git_time:8.2f}x  (target <= 3x)")


if __name__ == "__main__":
    main()
