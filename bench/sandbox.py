"""What containing an acceptance check costs, at 5,000 tasks, against baselines in the same run.

Run: `python bench/sandbox.py [--tasks 5000] [--runs 7] [--keep DIR]`. In a throwaway
repository of N tasks it times, as whole processes taken in turn (A B C D, A B C D, ...) so
that drift in the machine's speed hits all alike:

- `taskfs check T --sandbox on`  (bubblewrap: namespaces, mounts, the probe of bwrap);
- `taskfs check T --sandbox off` (no sandbox: non-dumpable, setpriv, subreaper and sweep);
- `taskfs show T`                (start-up and reading the task, nothing run or written);
- `git commit --allow-empty`     (what any ledger write pays at this size).

The check's command is `true`, so what is measured is taskfs's cost around a command, not the
command. Prints medians and the ratio of each pair, run by run; asserts nothing. With `--keep`
the repository stays, for other tools to time (`/usr/bin/time -v`, say).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import env, envelope, git, new_repo, submit_many, taskfs


def build(path: Path, tasks: int) -> str:
    repo = new_repo(path)
    submit_many(repo, [envelope(i) for i in range(tasks)])
    body = envelope(tasks, id="bench-check")
    body["acceptanceCheck"] = {"passFailCommand": "true", "endToEndVerification": "e"}
    submit_many(repo, [body])
    taskfs(repo, "claim", "bench-check", "--agent", "bench")
    taskfs(repo, "ls", "--json")  # the cache, as a user's checkout would have it
    return "bench-check"


def one(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env(), capture_output=True, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="taskfs-bench-sandbox-"))
    repo = base / "repo"
    try:
        task = build(repo, args.tasks)
        py = [sys.executable, "-m", "taskfs"]
        commands = {
            "check --sandbox on": [*py, "check", task, "--sandbox", "on"],
            "check --sandbox off": [*py, "check", task, "--sandbox", "off"],
            "show": [*py, "show", task, "--json"],
            "git commit": ["git", "commit", "-q", "--allow-empty", "-m", "bench"],
        }
        for command in commands.values():
            one(command, repo)  # warm-up
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, command in commands.items():
                times[name].append(one(command, repo))
        print(f"{args.tasks} tasks, {args.runs} runs each, medians (ms):")
        for name, values in times.items():
            print(f"  {name:22} {statistics.median(values) * 1000:8.1f}")
        on, off = times["check --sandbox on"], times["check --sandbox off"]
        pairs = {
            "on / off": [a / b for a, b in zip(on, off, strict=True)],
            "on / show": [a / b for a, b in zip(on, times["show"], strict=True)],
            "off / show": [a / b for a, b in zip(off, times["show"], strict=True)],
            "on / git commit": [a / b for a, b in zip(on, times["git commit"], strict=True)],
        }
        print("ratios, pair by pair (median, min-max):")
        for name, ratios in pairs.items():
            print(
                f"  {name:22} {statistics.median(ratios):6.2f}  {min(ratios):.2f}-{max(ratios):.2f}"
            )
        print(f"evidence files: {len(list((repo / 'tasks' / task / 'evidence').iterdir()))}")
        git(repo, "status", "--porcelain")
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
