"""How long the ownership conflict check takes as the number of open tasks grows.

Run: `python bench/ownership.py`. For 50 and for 5,000 open tasks with 5 entries each, checks a
new envelope of 10 entries against them, the way `taskfs new` and `taskfs claim` do:

* check: build an `OwnershipIndex` from the entries' text (placed by literal prefix, parsed
  only when a query reaches them), then run the query. Every repetition starts with empty
  caches, as a fresh process would.
* rule: the same through `rules.ownership_conflicts` on envelope values (dependency test
  included), caches emptied after the envelopes were built. Loading the envelopes from disk
  is not measured here.
* eager build: the index built by parsing every entry first (the old way), for comparison.

Prints medians (wall clock, and the check's CPU time, steadier on a busy machine) and the ratio
5,000/50. The query itself grows with its answer: two entries of
the new envelope (`src/*/__init__.py`, `*.toml`) meet every package, so 5,000 tasks give
~100 times the conflicts of 50.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from taskfs.api.tasks import rules
from taskfs.core import globs
from taskfs.core.envelope import Envelope
from taskfs.core.globs import automata, parse, relations

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


BASE = {
    "objective": "o",
    "outputFormat": "f",
    "toolAndSourceGuidance": "g",
    "boundaries": "b",
    "acceptanceCheck": {"passFailCommand": "true", "endToEndVerification": "v"},
    "contextID": "bench",
}


def envelopes(n: int) -> list[Envelope]:
    return [
        Envelope.model_validate(
            {**BASE, "id": f"t{t}", "filesAndInterfaces": [s.format(t=t) for s in shapes]}
        )
        for t, shapes in ((t, SHAPES[t % len(SHAPES)]) for t in range(n))
    ]


def clear_caches() -> None:
    for cached in (
        parse._parse_text,
        automata._compile,
        automata._segment,
        relations._meet_patterns,
        automata._nfa,
    ):
        cached.cache_clear()


def build(entries: list[tuple[str, str]]) -> globs.OwnershipIndex[str]:
    index: globs.OwnershipIndex[str] = globs.OwnershipIndex()
    for key, raw in entries:
        index.add(key, raw)
    return index


def build_eager(entries: list[tuple[str, str]]) -> globs.OwnershipIndex[str]:
    index: globs.OwnershipIndex[str] = globs.OwnershipIndex()
    for key, raw in entries:
        index.add(key, globs.parse_entry(raw))
    return index


def query(index: globs.OwnershipIndex[str]) -> list[tuple[str, globs.Entry, str]]:
    found: list[tuple[str, globs.Entry, str]] = []
    for raw in NEW_ENVELOPE:
        found.extend(index.conflicts(globs.parse_entry(raw)))
    return found


def timed(call: Callable[[], object]) -> float:
    clear_caches()
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def measure(n: int, runs: int) -> dict[str, float]:
    entries = task_entries(n)
    others = envelopes(n)
    new = Envelope.model_validate({**BASE, "id": "new", "filesAndInterfaces": NEW_ENVELOPE})
    rows: dict[str, list[float]] = {
        "build": [],
        "query": [],
        "check": [],
        "cpu": [],
        "rule": [],
        "eager": [],
    }
    for _ in range(runs):
        clear_caches()
        cpu = time.process_time()
        start = time.perf_counter()
        index = build(entries)
        middle = time.perf_counter()
        query(index)
        end = time.perf_counter()
        rows["cpu"].append(time.process_time() - cpu)
        rows["build"].append(middle - start)
        rows["query"].append(end - middle)
        rows["check"].append(end - start)
        rows["rule"].append(timed(lambda: rules.ownership_conflicts([new], others, {})))
        rows["eager"].append(timed(lambda: build_eager(entries)))
    medians = {name: statistics.median(values) for name, values in rows.items()}
    medians["conflicts"] = len(query(build(entries)))
    return medians


def main() -> None:
    results = {}
    for n, runs in ((50, 31), (5000, 7)):
        r = results[n] = measure(n, runs)
        print(
            f"{n:>5} tasks x 5 entries: check {r['check'] * 1000:7.1f} ms "
            f"(build {r['build'] * 1000:6.1f} + query {r['query'] * 1000:6.1f}; "
            f"CPU {r['cpu'] * 1000:6.1f}), "
            f"rule {r['rule'] * 1000:7.1f} ms, {int(r['conflicts'])} conflicts; "
            f"eager build {r['eager'] * 1000:7.1f} ms (median of {runs})"
        )
    big, small = results[5000], results[50]
    print(
        "ratio 5000/50: "
        + ", ".join(
            f"{name} {big[name] / small[name]:.0f}x"
            for name in ("check", "cpu", "build", "query", "rule", "eager")
        )
    )


if __name__ == "__main__":
    main()
