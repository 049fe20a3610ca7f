"""The agent's views against `ls --json` (issue 38, item 12), paired, at 5,000 tasks.

    .venv/bin/python bench/agent_views.py [--size 5000] [--runs 9] [--taskfs PATH] [--json OUT]

An agent runs `inbox` on every turn, its host runs `prime --hook` at every session start and
the nudge hook after every edit. Each is paired with `ls --json` (A B A B ..., after one
warm-up of each, `paired.py`'s `_pair`): its wall time over `ls --json`'s, pair by pair, and
the median, in a copy of the cached repository of that size (`direct.py`), for the agent that
holds the most tasks. Asked again with nothing changed, each answers from what it stored the
last time (`taskfs.readmodel.answers`; the nudge from its memory), which is what these pairs
measure; the first answer after a commit reads the ledger, and is printed apart (`after a
commit`: a note committed before each run of A, untimed, and `ls --json` as B).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import direct
import paired
import run as run_module

BENCH = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--cache", default=str(BENCH / ".cache"))
    parser.add_argument("--taskfs", help="the taskfs command (default: bench/.cache/venv's)")
    parser.add_argument("--json", help="write the raw figures here")
    args = parser.parse_args(argv)
    cache = Path(args.cache).resolve()
    env = run_module._child_env()
    script = (
        Path(args.taskfs).resolve() if args.taskfs else run_module._installed_script(cache, env)
    )
    run_module._compile_bytecode(run_module._interpreter(script), env)
    source, _manifest = direct.cached_repo(cache, args.size, paired._log)
    work = cache / "work" / f"agent-views-{args.size}"
    repo = run_module._copy(source, work / "repo")
    tf = [str(script)]
    agent = _busiest(repo, tf, env)
    listing = [*tf, "ls", "--json"]
    views = {
        "inbox --json": [*tf, "inbox", "--agent", agent, "--json"],
        "prime": [*tf, "prime", "--agent", agent],
        "prime --hook": [*tf, "prime", "--hook", "claude", "--agent", agent],
        "nudge --hook": [*tf, "nudge", "--hook", "claude", "--agent", agent],
    }
    out: dict[str, Any] = {"size": args.size, "agent": agent}
    print(f"{args.size} tasks, agent {agent!r}, median of {args.runs} pairs", flush=True)
    for name, argv_a in views.items():
        result = paired._pair(
            lambda i, a=argv_a: [a], repo, lambda i: [listing], repo, env, args.runs, (None, None)
        )
        out[name] = result
        print(paired._line(f"{name} / ls --json", result), flush=True)
    counter = {"n": 0}

    def commit_first(i: int) -> None:  # before A: HEAD moves (a note), untimed
        counter["n"] += 1
        note = repo / "notes" / f"view-{counter['n']}.txt"
        note.parent.mkdir(exist_ok=True)
        note.write_text(f"{counter['n']}\n")
        for step in (["git", "add", "--", str(note)], ["git", "commit", "-q", "-m", "note"]):
            subprocess.run(step, cwd=repo, env=env, capture_output=True, check=True)

    for name in ("inbox --json", "prime"):
        argv_a = views[name]
        result = paired._pair(
            lambda i, a=argv_a: [a],
            repo,
            lambda i: [listing],
            repo,
            env,
            max(3, args.runs // 3),
            (commit_first, None),
        )
        out[f"{name} after a commit"] = result
        print(paired._line(f"{name}, after a commit / ls", result), flush=True)
    ratios = [out[name]["ratio"] for name in views]
    print(f"largest steady ratio: {max(ratios)} (target 1.2); median {statistics.median(ratios)}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


def _busiest(repo: Path, tf: list[str], env: dict[str, str]) -> str:
    """The agent holding (or addressed by) the most tasks: the inbox with the most to say."""
    listed = subprocess.run(
        [*tf, "ls", "--json"], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    tasks = json.loads(listed.stdout)["tasks"]
    counts = Counter(t["holder"] or t["to"] for t in tasks if t["holder"] or t["to"])
    return counts.most_common(1)[0][0]


if __name__ == "__main__":
    raise SystemExit(main())
