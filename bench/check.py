"""What running and judging acceptance checks costs, against baselines measured in the same run.

Run: `python bench/check.py`. In a throwaway repository it measures:

1. How far past its limit a check that sleeps forever (with a child, and with a child that
   ignores SIGTERM) is ended, as recorded in its evidence, beside GNU `timeout -k 0.5` ending
   the same command (when `timeout` is installed).
2. `taskfs check` of `true` as a whole process, against `taskfs show` (the same start-up and
   repository reading, without running or recording anything).
3. The completion gate with 5,000 owned files (the fingerprint hashes each one), against the
   same gate with one owned file.

Prints medians and ratios; asserts nothing.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPEAT = 5


def sh(cwd: Path, *args: str) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    return proc.stdout


def taskfs(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "taskfs", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def envelope(task_id: str, command: str, owned: str) -> str:
    return (
        f"id: {task_id}\nobjective: o\noutputFormat: f\ntoolAndSourceGuidance: t\n"
        f"boundaries: b\nfilesAndInterfaces: ['{owned}']\ncontextID: bench\nto: builder\n"
        f"acceptanceCheck:\n  passFailCommand: {json.dumps(command)}\n"
        "  endToEndVerification: e\n"
    )


def new_task(repo: Path, task_id: str, command: str, owned: str) -> None:
    (repo / "in.yaml").write_text(envelope(task_id, command, owned))
    assert taskfs(repo, "new", "in.yaml").returncode == 0
    assert taskfs(repo, "claim", task_id, "--agent", "builder").returncode == 0


def overshoot(repo: Path, task_id: str, limit: float) -> float:
    out = taskfs(repo, "check", task_id, "--timeout", str(limit), "--json")
    path = repo / json.loads(out.stdout)["evidence"]
    text = path.read_text()
    line = next(x for x in text.splitlines() if x.startswith("durationSeconds:"))
    return float(line.split(":", 1)[1]) - limit


def main() -> None:
    base = Path(tempfile.mkdtemp(prefix="taskfs-bench-"))
    repo = base / "repo"
    repo.mkdir()
    try:
        sh(repo, "git", "init", "-q")
        sh(repo, "git", "config", "user.name", "bench")
        sh(repo, "git", "config", "user.email", "bench@example.invalid")
        taskfs(repo, "init")
        limit = 1.0
        commands = {
            "sleeps, with a child": "sleep 317 & sleep 317",
            "ignores SIGTERM, with a child": "trap '' TERM; sleep 317 & sleep 317",
        }
        print(f"1. a check that never ends, limit {limit:g} s ({REPEAT} runs each)")
        for n, (label, command) in enumerate(commands.items()):
            new_task(repo, f"hang{n}", command, f"h{n}/**")
            ours = [overshoot(repo, f"hang{n}", limit) for _ in range(REPEAT)]
            line = f"   {label:<32} taskfs ends it {statistics.median(ours):.3f} s past the limit"
            if shutil.which("timeout"):
                theirs = [
                    timed(
                        lambda c=command: subprocess.run(
                            ["timeout", "-k", "0.5", str(limit), "sh", "-c", c], check=False
                        )
                    )
                    - limit
                    for _ in range(REPEAT)
                ]
                line += f"; GNU timeout -k 0.5: {statistics.median(theirs):.3f} s"
            print(line)

        new_task(repo, "quick", "true", "q/**")
        check = [timed(lambda: taskfs(repo, "check", "quick")) for _ in range(REPEAT)]
        show = [timed(lambda: taskfs(repo, "show", "quick")) for _ in range(REPEAT)]
        print(
            f"2. taskfs check of `true`: {statistics.median(check) * 1000:.0f} ms; "
            f"taskfs show: {statistics.median(show) * 1000:.0f} ms; "
            f"ratio {statistics.median(check) / statistics.median(show):.2f}"
        )

        many = repo / "many"
        many.mkdir()
        for i in range(5000):
            (many / f"f{i:04d}.txt").write_text(f"file {i}\n" * 20)
        (repo / "one").mkdir()
        (repo / "one" / "f.txt").write_text("one\n")
        sh(repo, "git", "add", "many", "one")
        sh(repo, "git", "commit", "-q", "-m", "files")
        new_task(repo, "bigowner", "true", "many/**")
        new_task(repo, "smallowner", "false", "one/**")
        for task_id in ("bigowner", "smallowner"):
            taskfs(repo, "check", task_id)
        # `false` never passes, so the small task's completion is refused after the same gate.
        small = [
            timed(lambda: taskfs(repo, "complete", "smallowner", "--agent", "builder"))
            for _ in range(REPEAT)
        ]
        started = time.perf_counter()
        assert taskfs(repo, "complete", "bigowner", "--agent", "builder").returncode == 0
        big = time.perf_counter() - started
        print(
            f"3. complete with 5,000 owned files: {big * 1000:.0f} ms; with one: "
            f"{statistics.median(small) * 1000:.0f} ms; ratio {big / statistics.median(small):.2f}"
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
