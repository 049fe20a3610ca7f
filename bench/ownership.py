"""How long the ownership conflict check takes as the number of open tasks grows.

Run: `python bench/ownership.py`. Builds an `OwnershipIndex` of 50 and of 5,000 open tasks with
5 entries each, then checks a new envelope of 10 entries against it. Every repetition starts
with empty caches, as a fresh `taskfs new` process would: it builds the index (parsing every
entry) and then runs the query once. Prints the median of the repetitions.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from taskfs.core import globs

SHAPES = (
    (
        "src/p{t}/core.py",
        "src/p{t}/util/**",
        "tests/test_p{t}_*.py",
        "docs/p{t}.md",
        "interface:p{t}-api",
    ),
    (
        "src/p{t}/[a-m]*.py",
        "src/p{t}/models/*.py",
        "tests/p{t}/**",
        "docs/p{t}/*.md",
        "interface:p{t}-events",
    ),
    (
        "src/p{t}/**",
        "tests/test_p{t}.py",
        "docs/p{t}.md",
        "interface:p{t}-api",
        "bench/p{t}_*.py",
    ),
    (
        "src/p{t}/api/v?/*.py",
        "src/p{t}/cli.py",
        "tests/test_p{t}_cli.py",
        "docs/p{t}/cli.md",
        "interface:p{t}-cli",
    ),
)

NEW_ENVELOPE = (
    "src/pnew/**",
    "src/pnew/cli.py",
    "tests/test_pnew_*.py",
    "docs/pnew.md",
    "interface:pnew-api",
    "src/p13/models/user.py",  # conflicts with task 13
    "interface:p42-api",  # conflicts with task 42
    "src/*/__init__.py",  # a wildcard directory: meets every package
    "*.toml",  # a wildcard at the root
    ".github/workflows/*.yml",
)


def task_entries(n: int) -> list[tuple[str, str]]:
    return [(f"t{t}", shape.format(t=t)) for t in range(n) for shape in SHAPES[t % len(SHAPES)]]


def clear_caches() -> None:
    for cached in (globs._compile, globs._segment, globs._meet_patterns, globs._nfa):
        cached.cache_clear()


def build(entries: list[tuple[str, str]]) -> globs.OwnershipIndex[str]:
    index: globs.OwnershipIndex[str] = globs.OwnershipIndex()
    for key, raw in entries:
        index.add(key, globs.parse_entry(raw))
    return index


def query(index: globs.OwnershipIndex[str]) -> list[tuple[str, globs.Entry, str]]:
    found: list[tuple[str, globs.Entry, str]] = []
    for raw in NEW_ENVELOPE:
        found.extend(index.conflicts(globs.parse_entry(raw)))
    return found


def measure(n: int, runs: int) -> tuple[float, float, int]:
    entries = task_entries(n)
    builds: list[float] = []
    queries: list[float] = []
    conflicts = 0
    for _ in range(runs):
        clear_caches()
        start = time.perf_counter()
        index = build(entries)
        middle = time.perf_counter()
        conflicts = len(query(index))
        end = time.perf_counter()
        builds.append(middle - start)
        queries.append(end - middle)
    return statistics.median(builds), statistics.median(queries), conflicts


def main() -> None:
    results = {}
    for n, runs in ((50, 31), (5000, 7)):
        build_s, query_s, conflicts = measure(n, runs)
        results[n] = (build_s, query_s)
        print(
            f"{n:>5} tasks x 5 entries: build {build_s * 1000:8.2f} ms, "
            f"query of {len(NEW_ENVELOPE)} entries {query_s * 1000:7.2f} ms "
            f"({conflicts} conflicts, median of {runs})"
        )
    build_ratio = results[5000][0] / results[50][0]
    query_ratio = results[5000][1] / results[50][1]
    print(f"ratio 5000/50: build {build_ratio:.1f}x, query {query_ratio:.1f}x")


if __name__ == "__main__":
    main()
