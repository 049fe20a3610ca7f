"""Many clones, one bare remote: N agents claiming with `--sync`, checking, completing, syncing.

Run: `python bench/many_clones.py [--agents 16] [--rounds 5] [--daemon]`. A planner submits
AGENTS x ROUNDS tasks (to no one, each owning its own files, checked by `true`) to one bare
remote (a path, or served by `git daemon` with `--daemon`); each agent works in its own clone,
as its own process, every step a real `taskfs` process (tests/many_clones.py: sync, ready,
`claim --sync` on a ready task chosen at random, check, complete, sync), all agents at once.
Then every clone is synced until they agree.

Prints: the wall time and throughput (tasks completed per minute), the races lost (claims
refused with `transition_not_allowed` because another agent's claim reached the remote first),
every sync and `claim --sync` (how long, in how many rounds; median, 90th percentile, max),
every sync that gave up (`sync_push_rejected` and anything else), and the checks of issue 37's
Done-when: no task claimed or completed twice, every clone at the same commit with the same
listing, `audit` clean on each. Exit status 0 when all of them hold.

`TASKFS_BENCH_SOURCE=DIR` runs another taskfs tree's commands (a worktree of an older commit)
under the same harness, for a before/after figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers import IDENTITY
from tests.many_clones import SOURCE, Report, make_remote, run_agents, settle
from tests.remotes import git_daemon


def _spread(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return f"median {statistics.median(ordered):.2f}, p90 {p90:.2f}, max {ordered[-1]:.2f}"


def report(run: Report, agents: int, rounds: int) -> bool:
    syncs = [(c, s, a) for agent in run.agents for c, s, a in agent.syncs]
    plain = [s for c, s, _ in syncs if c == "sync"]
    claims = [s for c, s, _ in syncs if c == "claim --sync"]
    rounds_taken = [a for _, _, a in syncs if a]
    completed = [t for a in run.agents for t in a.completed]
    claimed = [t for a in run.agents for t in a.claimed]
    lost = sum(a.lost_races for a in run.agents)
    print(f"{agents} agents x {rounds} rounds on one bare remote: {run.seconds:.1f} s")
    print(f"  completed {len(completed)} tasks: {60 * len(completed) / run.seconds:.1f} per minute")
    print(f"  races lost (claim refused, another claim pushed first): {lost}")
    print(f"  sync ({len(plain)}): seconds {_spread(plain)}")
    print(f"  claim --sync ({len(claims)}): seconds {_spread(claims)}")
    print(f"  rounds per push: {_spread([float(a) for a in rounds_taken])}")
    codes: dict[str, int] = {}
    for failure in run.sync_failures:
        for error in failure.get("errors") or [{"code": "?"}]:
            codes[str(error.get("code"))] = codes.get(str(error.get("code")), 0) + 1
    print(f"  syncs that gave up: {len(run.sync_failures)} {codes or ''}")
    for failure in run.sync_failures[:5]:
        print(f"    {failure}")
    for error in run.errors[:5]:
        print(f"  refused: {error}")
    sys.stdout.flush()
    final = settle(run.clones)
    for refusal in final.refusals[:5]:
        print(f"  settling: {refusal}")
    chains_ok = all(
        [s for s, _ in chain] == ["submitted", "working", "completed"]
        and chain[1][1] == chain[2][1]
        for chain in final.chains.values()
    )
    checks = {
        "every agent completed its rounds": len(completed) == agents * rounds,
        "no sync gave up": not run.sync_failures,
        "no other refusal": not run.errors,
        "no task claimed twice": len(set(claimed)) == len(claimed),
        "no task completed twice": len(set(completed)) == len(completed),
        "every task: submitted, working, completed by its claimer": chains_ok,
        "every clone at the same commit": len(final.heads) == 1,
        "every clone lists the same": len(set(final.listings)) == 1,
        "audit clean on every clone": final.audits_clean,
        "every clone settled (sync, ls) without a refusal": not final.refusals,
    }
    for name, held in checks.items():
        print(f"  {'yes' if held else 'NO '} {name}")
    return all(checks.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--daemon", action="store_true", help="serve the remote by git daemon")
    args = parser.parse_args()
    os.environ.update(IDENTITY)
    if os.environ.get(SOURCE):
        print(f"taskfs from {os.environ[SOURCE]}")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ["HOME"] = str(base)
        remote = make_remote(base)
        if args.daemon:
            with git_daemon(base) as url:
                run = run_agents(base, f"{url}/remote.git", agents=args.agents, rounds=args.rounds)
                held = report(run, args.agents, args.rounds)
        else:
            run = run_agents(base, str(remote), agents=args.agents, rounds=args.rounds)
            held = report(run, args.agents, args.rounds)
    return 0 if held else 1


if __name__ == "__main__":
    sys.exit(main())
