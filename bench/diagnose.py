"""Where a command's time goes, on a cached benchmark repository.

    .venv/bin/python bench/diagnose.py --size 5000 ls ready show claim [--top 15]

Runs each command once in this process under cProfile (after one unprofiled run, so the
page cache is warm), on a copy of the cached repository of that size, and prints the
exclusive time per area (YAML parsing, pydantic, file reads, pathlib, globs, git, JSON
output, the rest), then the functions that cost most. Start-up (imports) is measured apart,
in a fresh process with `-X importtime`, since profiling the imports here would count them
once for all commands.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import generate

BENCH = Path(__file__).resolve().parent
AREAS = (
    ("YAML parsing", ("yamlio.py", "/yaml/")),
    ("pydantic", ("pydantic",)),
    ("ownership globs", ("/globs/",)),
    ("status chains", ("chain.py", "records.py", "lifecycle.py")),
    ("pathlib", ("pathlib.py",)),
    ("git and subprocesses", ("subprocess.py", "selectors.py", "git.py", "fork_exec", "poll")),
    ("JSON output", ("json/", "views.py", "render.py")),
    (
        "file reads, listdir, stat",
        ("posix.", "io.open", "_io.", "'read' of", "genericpath", "os.py", "<built-in method"),
    ),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commands", nargs="+", choices=("ls", "ready", "show", "claim", "import"))
    parser.add_argument("--size", type=int, default=5000)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--cache", default=str(BENCH / ".cache"))
    args = parser.parse_args()
    cache = Path(args.cache).resolve()
    source, manifest = generate.cached_repo(cache, args.size)
    work = cache / "work" / f"profile-n{args.size}"
    shutil.rmtree(work, ignore_errors=True)
    subprocess.run(["cp", "-a", str(source), str(work)], check=True)
    subprocess.run(["git", "status", "--porcelain"], cwd=work, capture_output=True, check=True)
    os.chdir(work)
    for name in args.commands:
        if name == "import":
            imports()
            continue
        argv = {
            "ls": ["ls", "--json"],
            "ready": ["ready", "--json"],
            "show": ["show", manifest["show"], "--json"],
            "claim": ["claim", manifest["pool"][0], "--agent", manifest["agent"], "--json"],
        }[name]
        profile(name, argv, args.top, warm=name != "claim", again=manifest["pool"][1])
    return 0


def profile(name: str, argv: list[str], top: int, *, warm: bool, again: str) -> None:
    from taskfs.cli.app import run

    sink = io.StringIO()
    if warm:
        with contextlib.redirect_stdout(sink):
            run(argv)
    else:  # a claim changes the repository: warm up on another task
        with contextlib.redirect_stdout(sink):
            run([argv[0], again, *argv[2:]])
    profiler = cProfile.Profile()
    started = time.perf_counter()
    with contextlib.redirect_stdout(sink):
        profiler.runcall(run, argv)
    wall = time.perf_counter() - started
    stats = pstats.Stats(profiler)
    areas: dict[str, float] = {}
    total = 0.0
    rows = []
    for (filename, line, func), (_cc, calls, tottime, cumulative, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        where = f"{filename}:{line}({func})"
        area = next((a for a, keys in AREAS if any(k in where for k in keys)), "the rest")
        areas[area] = areas.get(area, 0.0) + tottime
        total += tottime
        rows.append((tottime, calls, cumulative, where))
    print(f"\n== {' '.join(argv)}: {wall * 1000:,.0f} ms wall under the profiler")
    for area, spent in sorted(areas.items(), key=lambda kv: -kv[1]):
        print(f"  {area:<28} {spent * 1000:>9,.0f} ms  {spent / total:>4.0%}")
    print(f"  top {top} functions by exclusive time:")
    for tottime, calls, _cumulative, where in sorted(rows, reverse=True)[:top]:
        short = where.replace(str(Path(sys.prefix)), "<venv>")
        print(f"    {tottime * 1000:>8,.0f} ms {calls:>8} calls  {short[-90:]}")


def imports() -> None:
    """The modules a fresh `ls` imports, and what each costs, from -X importtime."""
    code = "import taskfs.cli.app, taskfs.api.tasks.queries, taskfs.api.lifecycle.transitions"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        if cumulative.strip().isdigit() and name.startswith(" ") and not name.startswith("  "):
            rows.append((int(cumulative), name.strip()))
    print("\n== imports of a command (top-level modules, cumulative)")
    for micros, name in sorted(rows, reverse=True)[:15]:
        print(f"  {micros / 1000:>8.1f} ms  {name}")


if __name__ == "__main__":
    raise SystemExit(main())
