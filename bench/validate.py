"""`taskfs validate` over N envelopes against a plain `yaml.safe_load` loop over the same files.

Both sides run as whole processes in the same run, so start-up is paid by both; the baseline
does no validation at all. Target (issue 2): taskfs at least 2x faster.

    python bench/validate.py [--count 10000] [--runs 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from taskfs.core import yamlio

BASELINE = """
import sys, yaml
from pathlib import Path
for path in sorted(Path(sys.argv[1]).rglob("*.yaml")):
    with open(path, "rb") as handle:
        yaml.safe_load(handle)
"""


def envelope(i: int) -> dict[str, object]:
    return {
        "id": f"bench-{i:05d}",
        "objective": f"Refactor module {i} so that its public functions have type annotations "
        "and docstrings, without changing behaviour.",
        "outputFormat": "A commit touching only the owned files, with passing tests.",
        "toolAndSourceGuidance": "Use mypy --strict and pytest; read the module and its tests.",
        "boundaries": "Do not rename public functions; do not add dependencies.",
        "filesAndInterfaces": [f"src/pkg{i % 50}/mod{i}.py", f"tests/pkg{i % 50}/test_mod{i}.py"],
        "acceptanceCheck": {
            "passFailCommand": f"pytest -q tests/pkg{i % 50}/test_mod{i}.py && mypy src",
            "endToEndVerification": "Import the module in a fresh interpreter and call main().",
            "timeoutSeconds": 300,
        },
        "contextID": f"typing-{i % 20}",
        "from": "planner",
        "to": f"builder{i % 7}",
        "toolsAllowed": ["read", "edit", "pytest", "mypy"],
        "dependsOn": [f"bench-{i - 1:05d}"] if i % 3 == 0 and i else [],
    }


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{command[:3]} failed: {proc.stderr.decode()[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="taskfs-bench-validate-"))
    try:
        for i in range(args.count):
            (folder / f"env-{i:05d}.yaml").write_text(yamlio.dump(envelope(i)))
        taskfs = [sys.executable, "-m", "taskfs", "validate", str(folder), "--json"]
        baseline = [sys.executable, "-c", BASELINE, str(folder)]
        ours, theirs = [], []
        for _ in range(args.runs):
            theirs.append(timed(baseline))
            ours.append(timed(taskfs))
        t_ours, t_theirs = statistics.median(ours), statistics.median(theirs)
        print(f"envelopes:                          {args.count}")
        print(f"yaml.safe_load loop (no validation): {t_theirs:8.2f} s")
        print(f"taskfs validate (full validation):   {t_ours:8.2f} s")
        print(f"ratio safe_load / taskfs:            {t_theirs / t_ours:8.2f}x  (target >= 2x)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
