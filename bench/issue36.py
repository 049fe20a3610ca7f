"""Issue 36's speed figures, measured as users run taskfs, each paired in one run.

    .venv/bin/python bench/issue36.py [--runs 7] [--bulk-runs 3]
        [--only check,complete,new,bulk,archived,first-ls,journal] [--json OUT]

Every figure is a paired ratio (A B A B ..., one warm-up each, the median of the pair-by-pair
ratios, min-max beside it) in fresh copies of the cached repositories `bench/direct.py` writes
(an ordinary install of this tree, compiled to bytecode first, in `bench/.cache/venv`):

- `check`: `taskfs check` of a claimed task whose acceptance command is `true`, in the sandbox
  the host provides (`--sandbox auto`: bubblewrap where it is installed, as users run it),
  against a bare `git add` + `git commit` of one small file in the same 5,000-task repository;
- `complete`: `taskfs complete` of a task with a passing check (made untimed before each run),
  against the same bare commit;
- `new`: `taskfs new` of one envelope, against the same bare commit;
- `bulk`: one `taskfs new` of 1,000 envelopes into the 5,000-task repository (each run in a
  fresh copy, once the copy's own writes are on disk), against one bare commit in that copy,
  wall and CPU;
- `archived`: `show ID --json` of an archived task against `show` of a live one in the same
  repository of 50,000 tasks (5,000 live, 45,000 archived), both answers stored;
- `first-ls`: the first `ls --json` on the 50,000-task repository with no store (the store is
  built), its peak memory under GNU time and its wall time;
- `journal`: the same store in WAL against SQLite's rollback journal (what taskfs makes:
  `taskfs.readmodel.db.JOURNAL`), for `ls --json` and `claim` at 5,000 tasks, and `ls --json`
  while another process holds the store in `BEGIN EXCLUSIVE`.

The load average of the shared machine is printed before and after each figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import direct
import paired
import run as run_module
from measure import run_steps

BENCH = Path(__file__).resolve().parent
TARGETS = {
    "check": 2.0,
    "complete": 1.5,
    "new": 2.5,
    "bulk": 10.0,
    "archived": 1.2,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--bulk-runs", type=int, default=3)
    parser.add_argument("--size", type=int, default=5000)
    parser.add_argument("--cache", default=str(BENCH / ".cache"))
    parser.add_argument("--only", help="comma-separated figure names")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    cache = Path(args.cache).resolve()
    env = run_module._child_env()
    script = run_module._installed_script(cache, env)
    run_module._compile_bytecode(run_module._interpreter(script), env)
    tf = [str(script)]
    only = set(args.only.split(",")) if args.only else None
    out: dict[str, Any] = {"bwrap": shutil.which("bwrap")}
    figures = (
        ("check", _writers),
        ("bulk", _bulk),
        ("archived", _archived),
        ("journal", _journal),
        ("first-ls", _first_ls),
    )
    for name, measure in figures:
        if only and name not in only and not (name == "check" and only & {"complete", "new"}):
            continue
        before = os.getloadavg()
        found = measure(args, cache, tf, env, only)
        out[name] = {"load_before": before, "load_after": os.getloadavg(), **found}
        _log(f"load average {before[0]:.1f} -> {os.getloadavg()[0]:.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0


def _writers(
    args: argparse.Namespace, cache: Path, tf: list[str], env: dict[str, str], only: Any
) -> dict[str, Any]:
    """check (sandbox auto), complete and new, each against a bare commit, at `--size`."""
    source, manifest = direct.cached_repo(cache, args.size, _log)
    work = cache / "work" / f"issue36-{args.size}"
    repo = run_module._copy(source, work / "repo")
    ops = paired._operations(repo, manifest, tf, env, work / "inputs", args.size)
    counter = {"note": 0}

    def commit(i: int) -> list[list[str]]:
        counter["note"] += 1
        name = f"notes/issue36-{counter['note']}.txt"
        (repo / "notes").mkdir(exist_ok=True)
        (repo / name).write_text(f"note {counter['note']}\n")
        return [["git", "add", "--", name], ["git", "commit", "-q", "-m", f"note {name}"]]

    checked = ops["check (command true)"][0](0)[0]
    sandboxed = [*checked[: checked.index("--sandbox") + 1], "auto", *checked[checked.index(
        "--sandbox") + 2 :]]  # fmt: skip
    pairs = {
        "check": (lambda i: [sandboxed], None),
        "complete": ops["complete"],
        "new": ops["new"],
    }
    results: dict[str, Any] = {}
    for name, (steps, prepare) in pairs.items():
        if only and name not in only:
            continue
        results[name] = paired._pair(steps, repo, commit, repo, env, args.runs, (prepare, None))
        _report(f"{name} / bare git add+commit, {args.size}", results[name], TARGETS[name])
    shutil.rmtree(work, ignore_errors=True)
    return results


def _bulk(
    args: argparse.Namespace, cache: Path, tf: list[str], env: dict[str, str], only: Any
) -> dict[str, Any]:
    """One `new` of 1,000 envelopes into `--size`, against one bare commit in the same copy."""
    import bulk

    source, _manifest = direct.cached_repo(cache, args.size, _log)
    work = cache / "work" / f"issue36-bulk-{args.size}"
    ratios, walls, commits, cpus = [], [], [], []
    for n in range(args.bulk_runs + 1):  # run 0 is the warm-up
        # A copy of its own for each run, removed only once all are measured: this disk is
        # mounted with `discard`, and a tree of hundreds of megabytes deleted just before a
        # run has the run pay for its discards in system time (0.2 s more each run).
        shutil.rmtree(work / "repo", ignore_errors=True)
        repo = run_module._copy(source, work / f"repo-{n}")
        subprocess.run([*tf, "ls", "--json"], cwd=repo, env=env, capture_output=True, check=False)
        files = bulk._envelopes(work / f"batch-{n}", n, 1000, args.size)
        _settled()  # the copy's own writes are not the commit's to pay for
        (repo / "note.txt").write_text(f"note {n}\n")
        bare = run_steps([["git", "add", "--", "note.txt"], ["git", "commit", "-q", "-m", "n"]],
                         repo, env)  # fmt: skip
        argv = [*tf, "new", *map(str, files), "--agent", "planner", "--json"]
        done = run_steps([argv], repo, env)
        if done.code:
            _log(f"new failed: {done.stdout[-300:]!r}")
        if n:
            ratios.append(done.seconds / bare.seconds)
            walls.append(done.seconds)
            commits.append(bare.seconds)
            cpus.append((done.cpu, bare.cpu))
    shutil.rmtree(work, ignore_errors=True)
    found = {
        "new_ms": [round(w * 1000) for w in walls],
        "bare_ms": [round(c * 1000) for c in commits],
        "ratio": round(sorted(ratios)[len(ratios) // 2], 2),
        "ratio_min": round(min(ratios), 2),
        "ratio_max": round(max(ratios), 2),
        # user + system CPU of the process and its children (git), each run
        "new_cpu_ms": [round(a * 1000) for a, _b in cpus],
        "bare_cpu_ms": [round(b * 1000) for _a, b in cpus],
        "cpu_ratio": round(sorted(a / b for a, b in cpus)[len(cpus) // 2], 2),
    }
    _log(f"new of 1,000 into {args.size} / one bare commit: {found} (target <= 10)")
    return found


def _settled(limit_kib: int = 16 * 1024, patience: float = 20.0, quiet: float = 60.0) -> None:
    """Wait until the page cache's dirty data is written back (a copy of a repository of
    hundreds of megabytes just made): a command run meanwhile pays, in system time, for the
    writeback of files that are not its own. Then, where the kernel reports pressure stall
    information, wait (up to `quiet` seconds) until the disk has been idle for a while: on a
    disk mounted with `discard`, the copies and deletions made between runs keep it busy long
    after their data is written, and a run measured then pays for them in system time."""
    os.sync()
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        try:
            meminfo = Path("/proc/meminfo").read_text().splitlines()
        except OSError:
            return
        pending = sum(
            int(line.split()[1]) for line in meminfo if line.startswith(("Dirty:", "Writeback:"))
        )
        if pending < limit_kib:
            break
        time.sleep(0.2)
    deadline = time.monotonic() + quiet
    while time.monotonic() < deadline:
        try:
            some = Path("/proc/pressure/io").read_text().splitlines()[0]
        except (OSError, IndexError):
            return
        stalled = float(some.split("avg10=")[1].split()[0])
        if stalled < 1.0:  # % of the last 10 s some task waited on the disk
            return
        time.sleep(0.5)


def _archived(
    args: argparse.Namespace, cache: Path, tf: list[str], env: dict[str, str], only: Any
) -> dict[str, Any]:
    """`show` of an archived task against `show` of a live one, 5,000 + 45,000 archived."""
    source, manifest = direct.cached_archived(cache, 5000, 45000, _log)
    work = cache / "work" / "issue36-archived"
    repo = run_module._copy(source, work / "repo")
    listed = subprocess.run(
        [*tf, "ls", "--archived", "--json"], cwd=repo, env=env, capture_output=True, check=True
    )
    archived = json.loads(listed.stdout)["tasks"][len(json.loads(listed.stdout)["tasks"]) // 2]
    live = manifest["show"]
    show_a = [*tf, "show", archived["id"], "--json"]
    show_b = [*tf, "show", live, "--json"]
    for argv in (show_a, show_b):  # the answers stored, and old enough to be trusted
        subprocess.run(argv, cwd=repo, env=env, capture_output=True, check=True)
    time.sleep(2.1)
    result = paired._pair(lambda i: [show_a], repo, lambda i: [show_b], repo, env, args.runs,
                          (None, None))  # fmt: skip
    _report("show archived / show live, 50,000 (45,000 archived)", result, TARGETS["archived"])
    first_a = run_steps([show_a], run_module._copy(source, work / "cold"), env)
    shutil.rmtree(work, ignore_errors=True)
    return {**result, "archived_id": archived["id"], "first_show_ms": round(first_a.seconds * 1e3)}


def _first_ls(
    args: argparse.Namespace, cache: Path, tf: list[str], env: dict[str, str], only: Any
) -> dict[str, Any]:
    """The first `ls --json` on 50,000 tasks without a store: peak memory and wall time."""
    source, _manifest = direct.cached_repo(cache, 50000, _log)
    work = cache / "work" / "issue36-first-ls"
    repo = run_module._copy(source, work / "repo")
    shutil.rmtree(repo / ".git" / "taskfs", ignore_errors=True)
    done = run_steps([[*tf, "ls", "--json"]], repo, env, memory=True)
    found = {
        "wall_s": round(done.seconds, 1),
        "cpu_s": round(done.cpu, 1),
        "peak_mib": round(done.peak_kib / 1024, 1),
        "exit": done.code,
        "tasks": len(json.loads(done.stdout)["tasks"]) if done.code == 0 else None,
    }
    _log(f"first ls --json at 50,000 without a store: {found} (target: peak < 64 MiB)")
    shutil.rmtree(work, ignore_errors=True)
    return found


def _journal(
    args: argparse.Namespace, cache: Path, tf: list[str], env: dict[str, str], only: Any
) -> dict[str, Any]:
    """The store in WAL (A) against the same store in SQLite's rollback journal (B, taskfs's)."""
    source, manifest = direct.cached_repo(cache, args.size, _log)
    work = cache / "work" / "issue36-journal"
    repos = {m: run_module._copy(source, work / m) for m in ("wal", "delete")}
    for mode, repo in repos.items():
        subprocess.run([*tf, "ls", "--json"], cwd=repo, env=env, capture_output=True, check=True)
        store = next((repo / ".git" / "taskfs" / "cache").glob("readmodel-*.sqlite"))
        conn = sqlite3.connect(store)
        conn.execute(f"PRAGMA journal_mode = {mode.upper()}")
        conn.close()
    pool = {m: list(manifest["pool"]) for m in repos}
    results: dict[str, Any] = {}
    listing = {m: [*tf, "ls", "--json"] for m in repos}
    results["ls"] = paired._pair(lambda i: [listing["wal"]], repos["wal"],
                                 lambda i: [listing["delete"]], repos["delete"], env, args.runs,
                                 (None, None))  # fmt: skip
    _report("ls --json: WAL / rollback journal", results["ls"], None)

    def claim(mode: str) -> Any:
        return lambda i: [[*tf, "claim", pool[mode].pop(), "--agent", manifest["agent"], "--json"]]

    results["claim"] = paired._pair(claim("wal"), repos["wal"], claim("delete"),
                                    repos["delete"], env, args.runs, (None, None))  # fmt: skip
    _report("claim: WAL / rollback journal", results["claim"], None)
    for mode, repo in repos.items():  # a stuck `sqlite3` shell holding the store
        store = next((repo / ".git" / "taskfs" / "cache").glob("readmodel-*.sqlite"))
        holder = subprocess.Popen(
            [sys.executable, "-c", "import sqlite3,sys,time\nc=sqlite3.connect(sys.argv[1],"
             "isolation_level=None)\nc.execute('BEGIN EXCLUSIVE')\nprint('held',flush=True)\n"
             "time.sleep(600)", str(store)], stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert holder.stdout is not None
        holder.stdout.readline()
        try:
            held = run_steps([listing[mode]], repo, env)
        finally:
            holder.kill()
            holder.wait()
        results[f"ls held ({mode})"] = {"ms": round(held.seconds * 1000, 1), "exit": held.code}
        _log(f"ls --json while another process holds the store ({mode}): {held.seconds:.3f} s")
    shutil.rmtree(work, ignore_errors=True)
    return results


def _report(label: str, r: dict[str, Any], target: float | None) -> None:
    holds = ""
    if target is not None:
        holds = f"  target <= {target}: {'holds' if r['ratio'] <= target else 'MISSED'}"
    _log(f"{paired._line(label, r)}{holds}")


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
