"""Two clones each create 200 tasks and make 1,000 transitions offline, then sync.

Run: `python bench/sync_scale.py [TASKS] [PER_TASK]` (default 200 and 5: 1,000 transitions a
clone, each its own commit, through the api in this process). Clone a syncs first; clone b checks
that a plain `git merge` of a's history reports no conflict, then syncs (merge and push); a syncs
again. Prints whether both show the same tasks and states, and the time of b's `taskfs sync`
against a plain `git merge` of the same two histories measured in the same run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers import IDENTITY, git, taskfs
from tests.remotes import clone, make_remote, offline_work


def main(tasks: int, per_task: int) -> int:
    os.environ.update(IDENTITY)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ["HOME"] = str(base)
        remote = make_remote(base)
        a, b = clone(str(remote), base / "a"), clone(str(remote), base / "b")
        started = time.perf_counter()
        offline_work(a, "alice", tasks, per_task)
        offline_work(b, "bob", tasks, per_task)
        work = time.perf_counter() - started
        assert taskfs("sync", cwd=a).code == 0
        git(b, "fetch", "-q")
        started = time.perf_counter()
        merge = subprocess.run(
            ["git", "merge", "--no-commit", "--no-ff", "origin/main"],
            cwd=b,
            capture_output=True,
            text=True,
            check=False,
        )
        plain = time.perf_counter() - started
        conflicts = merge.returncode != 0 or "CONFLICT" in merge.stdout
        git(b, "merge", "--abort")
        started = time.perf_counter()
        synced = taskfs("sync", "--json", cwd=b)
        ours = time.perf_counter() - started
        assert synced.code == 0, synced.stdout
        assert taskfs("sync", cwd=a).code == 0
        listings = [
            sorted((t["id"], t["state"]) for t in taskfs("ls", "--json", cwd=w).json["tasks"])
            for w in (a, b)
        ]
        same = listings[0] == listings[1] and len(listings[0]) == 2 * tasks
        status_files = len(list((a / "tasks").glob("*/status/*.yaml")))
    print(f"offline work: {2 * tasks} tasks, {2 * tasks * per_task} transitions in {work:.0f} s")
    print(f"plain git merge reported a conflict: {conflicts}")
    print(f"both clones show the same {len(listings[0])} tasks and states: {same}")
    print(f"status files after sync: {status_files}")
    print(
        f"taskfs sync (fetch, merge, push) {ours:.2f} s; plain git merge {plain:.2f} s; "
        f"ratio {ours / plain:.1f}"
    )
    return 0 if same and not conflicts else 1


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    sys.exit(main(*(args + [200, 5][len(args) :])))
