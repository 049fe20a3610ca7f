"""The watcher under a burst: 1,000 envelope files dropped into tasks/ at once.

1. A running `taskfs watch` takes a burst of N files (most valid, some without an id, some
   invalid, some in conflict with an open task): every file must end as exactly one task or
   a refusal report, nothing lost, nothing doubled. Prints the time per envelope, from the
   first file written to the last one answered.
2. The baseline, measured in the same repository right after: `taskfs new FILE` run one by
   one (a sample), each paying start-up and reading the ledger once per call.
3. Killing the watcher (SIGKILL) at a few points of the same burst and restarting it must end
   with the same outcome as an uninterrupted `taskfs watch --once` on a copy.

    python bench/watch_burst.py [--files 1000] [--sample 20] [--kills 3]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import env, envelope, git, new_repo, submit_many, taskfs

from taskfs.core import yamlio

DEADLINE = 600.0


def drop_burst(repo: Path, count: int) -> dict[str, str]:
    """Write `count` files into tasks/ as fast as possible; what each should become."""
    expected: dict[str, str] = {}
    tasks = repo / "tasks"
    for n in range(count):
        name = f"d{n:05d}.yaml"
        if n % 50 == 7:
            text, kind = f"objective: broken {n}\nbogus: true\n", "refused"
        elif n % 50 == 13:
            text = yamlio.dump(envelope(n, id=f"d{n:05d}", filesAndInterfaces=["src/held.py"]))
            kind = "refused"
        elif n % 20 == 5:
            data = envelope(n)
            del data["id"]
            text, kind = yamlio.dump(data), "task"
        else:
            text, kind = yamlio.dump(envelope(n, id=f"d{n:05d}")), "task"
        (tasks / name).write_text(text)
        expected[name] = kind
    return expected


def unanswered(repo: Path) -> list[Path]:
    return [
        p
        for p in (repo / "tasks").glob("d*.yaml")
        if not p.name.endswith(".refused.yaml")
        and not p.with_name(p.name.removesuffix(".yaml") + ".refused.yaml").exists()
    ]


def outcome(repo: Path) -> dict[str, object]:
    """What a run left, independent of generated ids (tasks keyed by objective)."""
    from taskfs.store.all_tasks import load_all
    from taskfs.store.repository import Repository

    tasks: dict[str, tuple[str, str]] = {}
    for task in load_all(Repository.open(repo)).values():
        key = task.envelope.objective
        if key in tasks:
            raise SystemExit(f"doubled: {key!r} is two tasks")
        named = task.id if re.fullmatch(r"d[0-9]{5}|held", task.id) else "<generated>"
        tasks[key] = (named, task.state)
    refused = {}
    for report in sorted((repo / "tasks").glob("*.refused.yaml")):
        value = yamlio.load(report.read_bytes())
        assert isinstance(value, dict)
        refused[report.name] = sorted(e["code"] for e in value["errors"])
    files = sorted(p.name for p in (repo / "tasks").iterdir() if p.is_file())
    return {"tasks": tasks, "refused": refused, "files": files}


def check(repo: Path, expected: dict[str, str]) -> None:
    """Every file answered once: the valid ones are tasks, the others have reports."""
    found = outcome(repo)
    tasks, refused = found["tasks"], found["refused"]
    assert isinstance(tasks, dict)
    assert isinstance(refused, dict)
    want_tasks = sum(1 for kind in expected.values() if kind == "task")
    want_refused = {
        name.removesuffix(".yaml") + ".refused.yaml"
        for name, k in expected.items()
        if k == "refused"
    }
    if len(tasks) != want_tasks + 1 or set(refused) != want_refused:
        extra = {name: refused[name] for name in set(refused) - want_refused}
        for name in extra:
            folder = repo / "tasks" / name.removesuffix(".refused.yaml")
            print(folder, sorted(str(p.relative_to(folder)) for p in folder.rglob("*")))
            print(git(repo, "log", "--oneline", "-5", "--", str(folder)))
        raise SystemExit(
            f"unexpected reports: {extra}; missing: {want_refused - set(refused)}\n"
            f"lost or doubled: {len(tasks) - 1} tasks (want {want_tasks}), "
            f"{len(refused)} reports (want {len(want_refused)})"
        )
    trailers = git(repo, "log", "--format=%B", "--grep=^Taskfs-Intake: ", "-E").count(
        "Taskfs-Intake: "
    )
    if trailers != want_tasks:
        raise SystemExit(f"{trailers} intake trailers in history, want {want_tasks}")


def start_watcher(repo: Path, log: Path, *args: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskfs", "watch", "-v", "--log", str(log), *args],
        cwd=repo,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait(lambda: " pass trigger=start" in read(log), "the watcher to start", proc)
    return proc


def read(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


def wait(condition: object, what: str, proc: subprocess.Popen[bytes] | None = None) -> None:
    end = time.monotonic() + DEADLINE
    while not condition():  # type: ignore[operator]
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"the watcher exited ({proc.returncode}) while waiting for {what}")
        if time.monotonic() > end:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.02)


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    if proc.wait(timeout=60) != 0:
        raise SystemExit(f"the watcher stopped with {proc.returncode}")


def prepared(path: Path) -> Path:
    repo = new_repo(path)
    held = envelope(0, id="held", objective="Hold src/held.py.", filesAndInterfaces=["src/held.py"])
    submit_many(repo, [held])
    return repo


def burst_run(tmp: Path, count: int) -> tuple[Path, float, dict[str, str]]:
    repo = prepared(tmp / "burst")
    log = tmp / "burst.log"
    proc = start_watcher(repo, log)
    try:
        started = time.perf_counter()
        expected = drop_burst(repo, count)
        written = time.perf_counter() - started
        wait(lambda: not unanswered(repo), "every file to be answered", proc)
        elapsed = time.perf_counter() - started
    finally:
        stop(proc)
    check(repo, expected)
    commits = read(log).count(" submitted ")
    print(
        f"burst: {count} files written in {written:.2f} s, all answered after {elapsed:.2f} s "
        f"({commits} submitted, {count - commits} refused)"
    )
    return repo, elapsed, expected


def new_one_by_one(repo: Path, sample: int, tmp: Path) -> float:
    times = []
    for n in range(sample):
        source = tmp / f"new{n}.yaml"
        source.write_text(yamlio.dump(envelope(100_000 + n)))
        start = time.perf_counter()
        taskfs(repo, "new", str(source))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def kill_run(
    tmp: Path, count: int, reference: dict[str, object], *, at: float, delay: float, n: int
) -> None:
    repo = prepared(tmp / f"killed{n}")
    expected = drop_burst(repo, count)
    log = tmp / f"killed{n}.log"
    proc = start_watcher(repo, log, "--batch", "50")
    target = int(count * at)
    wait(lambda: count - len(unanswered(repo)) >= target, f"{target} files answered", proc)
    time.sleep(delay)  # somewhere inside the next batch: writing files, committing, reporting
    proc.kill()
    proc.wait()
    answered = count - len(unanswered(repo))
    journal = list((repo / ".git" / "taskfs" / "journal").glob("*"))
    restarted = start_watcher(repo, tmp / f"restarted{n}.log")
    try:
        wait(lambda: not unanswered(repo), "the restarted watcher to finish", restarted)
    finally:
        stop(restarted)
    check(repo, expected)
    found = outcome(repo)
    if found != reference:
        diff = {
            part: (
                {k: v for k, v in found[part].items() if reference[part].get(k) != v}  # type: ignore[attr-defined]
                if isinstance(found[part], dict)
                else sorted(set(found[part]) ^ set(reference[part]))  # type: ignore[call-overload]
            )
            for part in found
            if found[part] != reference[part]
        }
        raise SystemExit(f"kill {n}: the outcome differs from the uninterrupted run: {diff}")
    print(
        f"kill {n}: SIGKILL with {answered} of {count} answered "
        f"({len(journal)} unfinished write in the journal); restarted: same outcome"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--kills", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="taskfs-bench-") as name:
        tmp = Path(name)
        repo, elapsed, _expected = burst_run(tmp, args.files)
        per_watch = elapsed / args.files
        per_new = new_one_by_one(repo, args.sample, tmp)
        print(f"watcher, per envelope in the burst: {per_watch * 1000:8.1f} ms")
        print(f"taskfs new, one by one (median of {args.sample}): {per_new * 1000:8.1f} ms")
        print(f"ratio new / watcher: {per_new / per_watch:8.1f}x")

        reference_repo = prepared(tmp / "reference")
        drop_burst(reference_repo, args.files)
        once = taskfs(reference_repo, "watch", "--once", check=False)
        if once.returncode != 0:
            raise SystemExit(f"watch --once failed: {once.stderr}")
        reference = outcome(reference_repo)
        shutil.rmtree(reference_repo)
        rng = random.Random(int(os.environ.get("BENCH_SEED", "6")))
        for n in range(args.kills):
            at, delay = rng.uniform(0.1, 0.8), rng.uniform(0, 0.5)
            kill_run(tmp, args.files, reference, at=at, delay=delay, n=n)


if __name__ == "__main__":
    main()
