"""Many processes on one checkout (issue 3), at full size.

16 processes each make 50 transitions; every transition must be present as a file and in git
history, with zero git errors and a clean audit. Then 50 trials of 8 processes racing to claim
one task: exactly one winner every time.

    python bench/concurrency.py [--processes 16] [--transitions 50] [--trials 50] [--racers 8]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import env, envelope, git, new_repo, submit_many, taskfs

WORKER = """
import sys, io, contextlib
from taskfs.cli.app import run
agent, count, task = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def call(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(list(args))
    if code != 0:
        sys.stderr.write(f"{args}: {code} {out.getvalue()} {err.getvalue()}\\n")
    return code
failures = call("claim", task, "--agent", agent) != 0
target = "input_required"
for _ in range(count - 1):
    failures += call("move", task, target, "--agent", agent) != 0
    target = "working" if target == "input_required" else "input_required"
sys.exit(1 if failures else 0)
"""


def transitions(repo: Path, processes: int, count: int) -> None:
    submit_many(repo, [envelope(p, to=f"agent{p}", id=f"w{p:03d}") for p in range(processes)])
    head = git(repo, "rev-parse", "HEAD")
    start = time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, f"agent{p}", str(count), f"w{p:03d}"],
            cwd=repo,
            env=env(),
            stderr=subprocess.PIPE,
            text=True,
        )
        for p in range(processes)
    ]
    errors = [p.communicate()[1] for p in procs]
    elapsed = time.perf_counter() - start
    failed = sum(1 for p in procs if p.returncode != 0)
    commits = int(git(repo, "rev-list", "--count", f"{head}..HEAD"))
    files = sum(
        len(list((repo / "tasks" / f"w{p:03d}" / "status").iterdir())) - 1 for p in range(processes)
    )
    audit = taskfs(repo, "audit", "--json", check=False)
    print(f"{processes} processes x {count} transitions in {elapsed:.1f} s")
    print(f"  processes with a failed transition: {failed}")
    print(f"  transitions as files: {files} / {processes * count}")
    print(f"  transitions as commits: {commits} / {processes * count}")
    print(f"  git errors reported: {sum('git_failed' in e for e in errors)}")
    print(f"  audit clean: {audit.returncode == 0}")


def races(repo: Path, trials: int, racers: int) -> None:
    submit_many(repo, [envelope(1000 + t, id=f"race{t:03d}") for t in range(trials)])
    exact = 0
    for t in range(trials):
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "taskfs",
                    "claim",
                    f"race{t:03d}",
                    "--agent",
                    f"a{i}",
                    "--json",
                ],
                cwd=repo,
                env=env(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for i in range(racers)
        ]
        winners = sum(1 for p in procs if p.wait() == 0)
        exact += winners == 1
    print(f"{trials} trials of {racers} racing claims: exactly one winner in {exact}")
    print(f"  audit clean: {taskfs(repo, 'audit', '--json', check=False).returncode == 0}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=16)
    parser.add_argument("--transitions", type=int, default=50)
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--racers", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="taskfs-bench-") as tmp:
        transitions(new_repo(Path(tmp) / "a"), args.processes, args.transitions)
        races(new_repo(Path(tmp) / "b"), args.trials, args.racers)


if __name__ == "__main__":
    main()
