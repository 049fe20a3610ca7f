"""Two clones racing `taskfs claim --sync` for one task, 100 times, over a git daemon on loopback.

Run: `python bench/sync_race.py [TRIALS]`. A bare remote is served by `git daemon` on a free
loopback port; a planner clone submits TRIALS tasks and pushes them; then for each task two clones
start `taskfs claim TASK --sync` at the same moment, each as its own process. Prints how many
trials ended with exactly one winner (the loser refused with transition_not_allowed naming it),
how many were decided by the push race itself (the loser's claim was already committed and then
withdrawn) rather than by the loser's first fetch, and whether both clones agree after syncing.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers import IDENTITY, taskfs
from tests.remotes import clone, git_daemon, make_remote, new_task, race_claims


def main(trials: int) -> int:
    os.environ.update(IDENTITY)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ["HOME"] = str(base)
        make_remote(base)
        with git_daemon(base) as url:
            planner, one, two = (clone(f"{url}/remote.git", base / n) for n in ("p", "1", "2"))
            tasks = [
                new_task(planner, to=None, filesAndInterfaces=[f"r/{i}.py"]) for i in range(trials)
            ]
            for where in (planner, one, two):
                assert taskfs("sync", cwd=where).code == 0
            one_winner = by_race = 0
            won: dict[str, str] = {}
            started = time.perf_counter()
            for task in tasks:
                winners, errors = race_claims(task, {"one": one, "two": two})
                exact = (
                    len(winners) == 1
                    and [e["code"] for e in errors] == ["transition_not_allowed"]
                    and errors[0].get("by") == winners[0]
                )
                one_winner += exact
                by_race += bool(exact and errors[0].get("lost_race"))
                if winners:
                    won[task] = winners[0]
            elapsed = time.perf_counter() - started
            for where in (one, two, one):
                assert taskfs("sync", cwd=where).code == 0
            agree = sum(
                taskfs("show", t, "--json", cwd=one).json["holder"]
                == taskfs("show", t, "--json", cwd=two).json["holder"]
                == w
                for t, w in won.items()
            )
    print(f"trials with exactly one winner: {one_winner}/{trials}")
    print(f"  decided by the push race (loser's claim withdrawn): {by_race}")
    print(f"  decided at the loser's first fetch: {one_winner - by_race}")
    print(f"both clones agree on the winner after sync: {agree}/{trials}")
    print(f"{elapsed / trials:.2f} s per trial (two processes each)")
    return 0 if one_winner == agree == trials else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 100))
