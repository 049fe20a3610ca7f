"""Bulk intake and memory at scale (issue 31): one `taskfs new` of many envelopes into a large
repository, and the peak memory of `ls --json` beside seeds' `sd list`.

    .venv/bin/python bench/bulk.py [--size 50000] [--envelopes 1000] [--runs 3] [--cache DIR]

Each run of `new` submits a fresh batch (new ids, each owning a path of its own, so that every
envelope is checked against the ledger's entries and the batch's own) in one process, into a
fresh copy of the cached repository (direct.py); times are wall clock from spawn to exit and
user + system CPU, memory the peak resident set under GNU time. The peak memory of `ls --json`
and `sd list --all --json` is taken the same way, one run each after a warm-up.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import direct
import peers as peers_module
import run as run_module
from measure import run_steps

BENCH = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=50000)
    parser.add_argument("--envelopes", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cache", default=str(BENCH / ".cache"))
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    cache = Path(args.cache).resolve()
    env = run_module._child_env()
    script = run_module._installed_script(cache, env)
    source, _manifest = direct.cached_repo(cache, args.size, _log)
    work = cache / "work" / f"bulk-{args.size}"
    out: dict[str, Any] = {"size": args.size, "envelopes": args.envelopes}
    walls, cpus, peaks = [], [], []
    for n in range(args.runs):
        repo = run_module._copy(source, work / "repo")
        warm = [str(script), "ls", "--json"]
        subprocess.run(warm, cwd=repo, env=env, capture_output=True, check=False)
        files = _envelopes(work / f"batch-{n}", n, args.envelopes, args.size)
        argv = [str(script), "new", *map(str, files), "--agent", "planner", "--json"]
        done = run_steps([argv], repo, env)
        peak = _peak(argv, repo, env, undo=True)
        if done.code != 0:
            _log(f"new failed: {done.stdout[-400:]!r} {done.stderr[-400:]!r}")
        walls.append(done.seconds)
        cpus.append(done.cpu)
        peaks.append(peak)
        _log(f"new of {args.envelopes} into {args.size}: {done.seconds:.2f} s (cpu {done.cpu:.2f})")
    out["new"] = {
        "wall_s": round(statistics.median(walls), 2),
        "cpu_s": round(statistics.median(cpus), 2),
        "walls": [round(w, 2) for w in walls],
        "peak_mib": round(max(peaks) / 1024, 1),
    }
    repo = run_module._copy(source, work / "repo")
    listing = [str(script), "ls", "--json"]
    subprocess.run(listing, cwd=repo, env=env, capture_output=True, check=False)
    out["ls_peak_mib"] = round(_peak(listing, repo, env) / 1024, 1)
    seeds = [p for p in peers_module.install(cache, _log) if p.name == "seeds"]
    if seeds:
        sd_source, sd_manifest = peers_module.cached_repo(cache, seeds[0], args.size, _log)
        sd_repo = run_module._copy(sd_source, work / "seeds")
        sd = [*seeds[0].command, *peers_module.SEEDS_OPS["ls --json"](sd_manifest, 0)]
        subprocess.run(sd, cwd=sd_repo, env=env, capture_output=True, check=False)
        out["sd_list_peak_mib"] = round(_peak(sd, sd_repo, env) / 1024, 1)
    out["load_after"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(json.dumps(out, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return 0


def _envelopes(folder: Path, batch: int, count: int, size: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for k in range(count):
        n = 10 * size + batch * count + k  # a module of its own: no overlap with the ledger
        path = folder / f"e{k}.yaml"
        path.write_text(run_module._envelope_text(f"bulk-{batch}-{k}", n))
        files.append(path)
    return files


def _peak(argv: list[str], cwd: Path, env: dict[str, str], *, undo: bool = False) -> int:
    """Peak resident KiB of one more run of `argv` under GNU time (`new` is run on a copy
    of the repository as it was: `undo` resets HEAD and the tasks folder first)."""
    if undo:
        subprocess.run(["git", "reset", "-q", "--hard", "HEAD~1"], cwd=cwd, check=True)
    timed = ["/usr/bin/time", "-f", "%M", *argv]
    done = subprocess.run(timed, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    return int(done.stderr.strip().splitlines()[-1])


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
