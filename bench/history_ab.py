"""Paired whole-process timings of two taskfs installs on the history readers and fast paths.

    .venv/bin/python bench/history_ab.py --a NEW/bin/taskfs --b OLD/bin/taskfs \
        [--size 1000] [--runs 5] [--only audit,review,log,ls,claim] [--cache DIR]

Issue 17 moved `audit`, `review` and `sync`'s history reads onto GitPython; this compares a
checkout (A) with another (B, e.g. the commit before) command by command. Each side runs in its
own copy of the cached repository of `--size` tasks (generate.py), in turn, B A B A ..., after
one warm-up each; the ratio A/B is taken pair by pair and its median reported (`paired.py`'s
method). `claim` takes the next task of the generated pool on each run, on both sides.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import generate
from paired import _line, _pair

BENCH = Path(__file__).resolve().parent
COMMANDS = ("audit", "review", "log", "ls", "claim")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", required=True, help="the taskfs script measured")
    parser.add_argument("--b", required=True, help="the taskfs script it is compared with")
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", default=",".join(COMMANDS))
    parser.add_argument("--cache", default=str(BENCH / ".cache"))
    args = parser.parse_args(argv)
    source, manifest = generate.cached_repo(Path(args.cache).resolve(), args.size, _log)
    pool = list(manifest["pool"])
    steps = {
        "audit": lambda s, i: [[s, "audit", "--json"]],
        "review": lambda s, i: [[s, "review", "--json"]],
        "log": lambda s, i: [[s, "log", manifest["show"], "--json"]],
        "ls": lambda s, i: [[s, "ls", "--json"]],
        "claim": lambda s, i: [[s, "claim", pool[i], "--agent", manifest["agent"], "--json"]],
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only.split(","):
            copies = [Path(tmp) / f"{name}-{side}" for side in ("a", "b")]
            for copy in copies:
                shutil.copytree(source, copy, symlinks=True)
            make = steps[name]
            result = _pair(
                lambda i, make=make: make(args.a, i),
                copies[0],
                lambda i, make=make: make(args.b, i),
                copies[1],
                dict(os.environ),
                args.runs,
                (None, None),
            )
            print(_line(f"{name} ({args.size} tasks)", result), flush=True)
    return 0


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
