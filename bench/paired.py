"""Paired whole-process ratios for the commands of issue 19, beside their yardsticks.

    .venv/bin/python bench/paired.py [--sizes 5000,10000] [--runs 7] [--json OUT]

Each pair (A, B) runs in turn, A B A B ..., after one warm-up of each, in a fresh copy of the
cached repository of that size (generate.py; seeds' from peers.py); the ratio is taken pair
by pair and its median reported, so that a slow minute of a shared machine touches both
sides alike. Times are wall clock from spawn to exit; `cpu` is user + system time of the
process and the children it waited for (`os.wait4`).

The pairs:
- `show ID --json` against seeds' `sd show ID --json`;
- `ls --json` against `sd list --all --json`, `ready --json` against `sd ready --json`;
- `new` of one envelope, `claim`, `move` (working <-> input_required) and `refuse` against a
  bare `git add` + `git commit` of one new small file in the same repository; `new` against
  `sd create` too (which commits nothing);
- the first `ls --json` after a `claim` (the claim untimed) against a settled `ls --json`
  (one taken after the racy margin has passed and a listing has settled the claim's files).

- `send` of a message on a claimed task, `check`'s bookkeeping (a claimed task whose
  acceptance command is `true`, checked with `--sandbox off`: the command costs nothing, the
  rest is taskfs), `evidence add` of a judgement, and `complete` (before each timed run, untimed:
  `new` of a task whose acceptance command is `true`, `claim`, a passing `check`) against the
  same bare commit.

`--builder direct` (the default) takes the repository direct.py writes (the same files, in one
commit); `--builder writer` the one generate.py writes through taskfs's own writer.
`--archived N` (issue 31) pairs every command on a repository of SIZE tasks and N archived
ones (`direct.build_archived`: the same plan's SIZE tasks, N finished ones more taken out by
`taskfs archive`) against the same command on the repository of SIZE tasks.
`--sizes 50000 --only show,ls,ready,claim,new` measures what issue 19 asks at 50,000 tasks.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import direct
import generate
import peers as peers_module
import run as run_module
from measure import Argv, run_steps

BENCH = Path(__file__).resolve().parent
Steps = Callable[[int], list[Argv]]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="5000,10000")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--cache", default=str(BENCH / ".cache"))
    parser.add_argument("--only", help="comma-separated pair names")
    parser.add_argument("--json", help="write the raw figures here")
    parser.add_argument("--taskfs", help="the taskfs command (default: bench/.cache/venv's)")
    parser.add_argument("--no-peers", action="store_true", help="no seeds pairs")
    parser.add_argument("--builder", choices=("direct", "writer"), default="direct")
    parser.add_argument(
        "--archived",
        type=int,
        default=0,
        help="pair each command on SIZE tasks plus this many archived ones against SIZE tasks",
    )
    args = parser.parse_args(argv)
    cache = Path(args.cache).resolve()
    env = run_module._child_env()
    script = Path(args.taskfs) if args.taskfs else run_module._installed_script(cache, env)
    run_module._compile_bytecode(run_module._interpreter(script), env)
    seeds = []
    if not args.no_peers:
        seeds = [p for p in peers_module.install(cache, _log) if p.name == "seeds"]
    out: dict[str, Any] = {}
    for size in (int(s) for s in args.sizes.split(",")):
        if args.archived:
            out[f"{size}+{args.archived}"] = _archived(
                size, args.archived, cache, [str(script)], env, args
            )
            continue
        out[str(size)] = _size(size, cache, [str(script)], seeds, env, args)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


def _size(  # noqa: PLR0917 - one size's whole setting
    size: int,
    cache: Path,
    tf: list[str],
    seeds: list[Any],
    env: dict[str, str],
    args: argparse.Namespace,
) -> dict[str, Any]:
    builder = direct.cached_repo if args.builder == "direct" else generate.cached_repo
    source, manifest = builder(cache, size, _log)
    work = cache / "work" / f"paired-{size}"
    repo = run_module._copy(source, work / "repo")
    sd_repo, sd_manifest, sd = None, None, None
    if seeds:
        sd_source, sd_manifest = peers_module.cached_repo(cache, seeds[0], size, _log)
        sd_repo = run_module._copy(sd_source, work / "seeds")
        sd = seeds[0].command
    ops = _operations(repo, manifest, tf, env, work / "inputs", size)
    counter = {"note": 0}

    def commit(i: int) -> list[Argv]:
        counter["note"] += 1
        name = f"notes/paired-{counter['note']}.txt"
        (repo / "notes").mkdir(exist_ok=True)
        (repo / name).write_text(f"note {counter['note']}\n")
        return [["git", "add", "--", name], ["git", "commit", "-q", "-m", f"note {name}"]]

    pairs: list[tuple[str, Steps, Path, Steps, Path, Callable[[int], None] | None]] = []

    def fixed(argv: Argv) -> Steps:
        return lambda i: [argv]

    if sd is not None and sd_repo is not None and sd_manifest is not None:
        peer = peers_module.SEEDS_OPS
        pairs += [
            (
                "show ID --json / sd show",
                ops["show"][0],
                repo,
                fixed([*sd, *peer["show ID"](sd_manifest, 0)]),
                sd_repo,
                None,
            ),
            (
                "ls --json / sd list",
                ops["ls"][0],
                repo,
                fixed([*sd, *peer["ls --json"](sd_manifest, 0)]),
                sd_repo,
                None,
            ),
            (
                "ready --json / sd ready",
                ops["ready"][0],
                repo,
                fixed([*sd, *peer["ready --json"](sd_manifest, 0)]),
                sd_repo,
                None,
            ),
            (
                "new / sd create",
                ops["new"][0],
                repo,
                lambda i: [[*sd, *peer["new"](sd_manifest, i)]],
                sd_repo,
                None,
            ),
        ]
    for name in WRITERS:
        steps, prepare = ops[name]
        pairs.append((f"{name} / git add+commit", steps, repo, commit, repo, prepare))

    def claim_first(i: int) -> None:  # before A: a claim, untimed
        argv = ops["claim"][0](i)[0]
        subprocess.run(argv, cwd=repo, env=env, capture_output=True, check=False)

    def settle(i: int) -> None:  # before B: the margin passes and a listing settles
        time.sleep(2.1)
        subprocess.run([*tf, "ls", "--json"], cwd=repo, env=env, capture_output=True, check=False)

    listing = fixed([*tf, "ls", "--json"])
    pairs.append(("first ls after claim / settled ls", listing, repo, listing, repo, None))
    results: dict[str, Any] = {}
    only = set(args.only.split(",")) if args.only else None
    for name, a, a_cwd, b, b_cwd, prepare in pairs:
        if only and not any(name.startswith(o) for o in only):
            continue
        before = (claim_first, settle) if name.startswith("first ls") else (prepare, None)
        results[name] = _pair(a, a_cwd, b, b_cwd, env, args.runs, before)
        print(f"{size:>6}  {_line(name, results[name])}", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    return results


# The writers paired against a bare commit, in this order.
WRITERS = (
    "new",
    "claim",
    "move",
    "refuse",
    "send",
    "check (command true)",
    "evidence add",
    "complete",
)
Operation = tuple[Steps, "Callable[[int], None] | None"]


def _operations(  # noqa: PLR0917 - a repository and what to run in it
    repo: Path,
    manifest: dict[str, Any],
    tf: list[str],
    env: dict[str, str],
    inputs: Path,
    size: int,
) -> dict[str, Operation]:
    """Each operation the benchmark times in `repo` (a fresh copy: they change it), by name:
    its steps for run i, and what to do before it, untimed (None: nothing)."""
    for warm in (["ls", "--json"], ["ready", "--json"], ["show", manifest["show"], "--json"]):
        subprocess.run([*tf, *warm], cwd=repo, env=env, capture_output=True, check=True)
    pool = list(manifest["pool"])
    inputs.mkdir(parents=True, exist_ok=True)
    counter: dict[str, int] = {}
    agent = manifest["agent"]

    def new(i: int) -> list[Argv]:
        counter["new"] = n = counter.get("new", 0) + 1
        path = inputs / f"new-{n}.yaml"
        path.write_text(run_module._envelope_text(f"paired-new-{n}", size + 500 + n))
        return [[*tf, "new", str(path), "--agent", "planner", "--json"]]

    def claim(i: int) -> list[Argv]:
        return [[*tf, "claim", pool.pop(), "--agent", agent, "--json"]]

    moving = pool.pop()
    subprocess.run([*tf, "claim", moving, "--agent", agent], cwd=repo, env=env, check=False)

    def move(i: int) -> list[Argv]:
        state = "input_required" if i % 2 == 0 else "working"
        return [[*tf, "move", moving, state, "--agent", agent, "--json"]]

    def refuse(i: int) -> list[Argv]:
        task = pool.pop()
        return [[*tf, "refuse", task, "--agent", agent, "--reason", "no", "--json"]]

    def run(*argv: str) -> str:
        done = subprocess.run(
            [*tf, *argv], cwd=repo, env=env, capture_output=True, text=True, check=False
        )
        if done.returncode:
            _log(f"setup {argv[0]} failed: {done.stdout} {done.stderr}")
        return done.stdout

    def passing_task() -> str:
        """A new task for builder whose acceptance command is `true`, claimed (untimed)."""
        counter["true"] = n = counter.get("true", 0) + 1
        path = inputs / f"true-{n}.yaml"
        text = run_module._envelope_text(f"paired-true-{n}", size + 900 + n)
        command = f"passFailCommand: pytest -q tests/m{size + 900 + n}"
        path.write_text(text.replace(command, "passFailCommand: 'true'"))
        run("new", str(path), "--agent", "planner", "--json")
        task = f"paired-true-{n}"
        run("claim", task, "--agent", agent)
        return task

    checked = passing_task()
    completing: list[str] = []

    def send(i: int) -> list[Argv]:
        return [[*tf, "send", moving, f"progress note {i}", "--agent", agent, "--json"]]

    def check(i: int) -> list[Argv]:
        argv = ["check", checked, "--sandbox", "off", "--agent", agent, "--json"]
        return [[*tf, *argv]]

    def evidence_add(i: int) -> list[Argv]:
        argv = ["evidence", "add", checked, "--verdict", "pass", "--source", "bench"]
        return [[*tf, *argv, "--note", f"judged {i}", "--agent", agent, "--json"]]

    def ready_to_complete(i: int) -> None:  # before each run: a task with a passing check
        task = passing_task()
        run("check", task, "--sandbox", "off", "--agent", agent, "--json")
        completing.append(task)

    def complete(i: int) -> list[Argv]:
        return [[*tf, "complete", completing[-1], "--agent", agent, "--json"]]

    def fixed(argv: Argv) -> Steps:
        return lambda i: [argv]

    return {
        "show": (fixed([*tf, "show", manifest["show"], "--json"]), None),
        "ls": (fixed([*tf, "ls", "--json"]), None),
        "ready": (fixed([*tf, "ready", "--json"]), None),
        "new": (new, None),
        "claim": (claim, None),
        "move": (move, None),
        "refuse": (refuse, None),
        "send": (send, None),
        "check (command true)": (check, None),
        "evidence add": (evidence_add, None),
        "complete": (complete, ready_to_complete),
    }


def _archived(  # noqa: PLR0917 - the two sizes and the whole setting
    size: int, archived: int, cache: Path, tf: list[str], env: dict[str, str], args: Any
) -> dict[str, Any]:
    """The same operation on a repository of `size` tasks and `archived` archived ones (A)
    and on one of `size` tasks (B), pair by pair."""
    source_a, manifest_a = direct.cached_archived(cache, size, archived, _log)
    source_b, manifest_b = direct.cached_repo(cache, size, _log)
    work = cache / "work" / f"archived-{size}-{archived}"
    repo_a = run_module._copy(source_a, work / "a")
    repo_b = run_module._copy(source_b, work / "b")
    ops_a = _operations(repo_a, manifest_a, tf, env, work / "inputs-a", size)
    ops_b = _operations(repo_b, manifest_b, tf, env, work / "inputs-b", size)
    results: dict[str, Any] = {}
    only = set(args.only.split(",")) if args.only else None
    for name, (steps_a, prepare_a) in ops_a.items():
        if only and not any(name.startswith(o) for o in only):
            continue
        steps_b, prepare_b = ops_b[name]
        label = f"{name}: {size}+{archived} archived / {size}"
        results[name] = _pair(
            steps_a, repo_a, steps_b, repo_b, env, args.runs, (prepare_a, prepare_b)
        )
        print(f"{size:>6}  {_line(label, results[name])}", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    return results


def _pair(  # noqa: PLR0917 - two sides, each a command and where it runs
    a: Steps,
    a_cwd: Path,
    b: Steps,
    b_cwd: Path,
    env: dict[str, str],
    runs: int,
    before: tuple[Callable[[int], None] | None, Callable[[int], None] | None],
) -> dict[str, Any]:
    walls: dict[str, list[float]] = {"a": [], "b": []}
    cpus: dict[str, list[float]] = {"a": [], "b": []}
    codes: list[int] = []
    for i in range(runs + 1):  # run 0 is the warm-up
        for side, steps, cwd, prepare in (("b", b, b_cwd, before[1]), ("a", a, a_cwd, before[0])):
            if prepare is not None:
                prepare(i)
            done = run_steps(steps(i), cwd, env)
            codes.append(done.code)
            if i:
                walls[side].append(done.seconds)
                cpus[side].append(done.cpu)
    ratio = [x / y for x, y in zip(walls["a"], walls["b"], strict=True)]
    cpu_ratio = [x / y for x, y in zip(cpus["a"], cpus["b"], strict=True)]
    return {
        "a_ms": round(statistics.median(walls["a"]) * 1000, 1),
        "b_ms": round(statistics.median(walls["b"]) * 1000, 1),
        "a_cpu_ms": round(statistics.median(cpus["a"]) * 1000, 1),
        "b_cpu_ms": round(statistics.median(cpus["b"]) * 1000, 1),
        "ratio": round(statistics.median(ratio), 2),
        "ratio_min": round(min(ratio), 2),
        "ratio_max": round(max(ratio), 2),
        "cpu_ratio": round(statistics.median(cpu_ratio), 2),
        "failed_runs": sum(1 for c in codes if c != 0),
    }


def _line(name: str, r: dict[str, Any]) -> str:
    return (
        f"{name:<36} A {r['a_ms']:>7} ms (cpu {r['a_cpu_ms']:>6})  B {r['b_ms']:>7} ms "
        f"(cpu {r['b_cpu_ms']:>6})  A/B wall {r['ratio']} ({r['ratio_min']}-{r['ratio_max']}) "
        f"cpu {r['cpu_ratio']}" + (f"  FAILED RUNS {r['failed_runs']}" if r["failed_runs"] else "")
    )


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
