"""How fast taskfs is at 200 to 10,000 tasks, as whole processes, beside its peers.

    .venv/bin/python bench/run.py [--sizes 200,1000,5000,10000] [--runs 5] [--quick]
                                  [--no-peers] [--markdown FILE] [--cache DIR]

For each size it takes a synthetic repository (built once through taskfs's own writer and
cached under bench/.cache/, see generate.py), copies it, and runs every operation as a real
process of the installed `taskfs` console script: one warm-up run (its output is checked),
then `--runs` rounds taking turns, reporting the median time and the largest peak memory.
Baselines measured in the same rounds: `python -c pass` (the same interpreter), a bare
`git add` + `git commit` of one small file in the same repository, and
`find tasks -type f | wc -l`. Backlog.md and seeds (see peers.py) run the same operations
on repositories of the same plan, where they can be installed.

What is measured is an ordinary install, as a user has it: by default the harness keeps a
venv under bench/.cache/venv/ with taskfs installed from this checkout (not editable: an
editable install adds an import hook to every start of that Python, `python -c pass`
included), reinstalled whenever taskfs's source changes. `--taskfs PATH` measures another
console script instead (the tests use the development venv's, to stay fast). Bytecode is
compiled and PYTHONDONTWRITEBYTECODE dropped from the children's environment, since a user's
install starts from .pyc files. `python -c pass` runs the interpreter of that script.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import generate
import peers as peers_module
from measure import Argv, Op, Run, measure

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SIZES = (200, 1000, 5000, 10000)
TASKFS_OPS = (
    "--version",
    "ls --json",
    "ready --json",
    "show ID",
    "claim",
    "new",
    "validate",
    "owners PATH",
)
BASELINES = ("python -c pass", "git add+commit", "find tasks | wc -l")
# Which baseline each operation's ratio is taken against.
RATIO_TO = {
    "--version": "python -c pass",
    "ls --json": "find tasks | wc -l",
    "ready --json": "find tasks | wc -l",
    "show ID": "python -c pass",
    "claim": "git add+commit",
    "new": "git add+commit",
    "validate": "find tasks | wc -l",
    "owners PATH": "python -c pass",
}


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    if args.report:
        return report(args.report, args.markdown)
    cache = Path(args.cache).resolve()
    log = _log
    env = _child_env()
    script = Path(args.taskfs).absolute() if args.taskfs else _installed_script(cache, env)
    taskfs_cmd = [str(script)]
    python = _interpreter(script)
    _compile_bytecode(python, env)
    peers = [] if args.no_peers else peers_module.install(cache, log)
    results: dict[str, Any] = {"machine": machine(), "runs": args.runs, "sizes": {}}
    for size in args.sizes:
        log(f"== {size} tasks")
        results["sizes"][str(size)] = _measure_size(
            size, args, cache=cache, taskfs_cmd=taskfs_cmd, peers=peers, env=env
        )
        print(table(size, results["sizes"][str(size)], args.runs), flush=True)
    results["machine"]["load_after"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    results["targets"] = targets(results)
    print(targets_table(results["targets"]))
    out = cache / f"results-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    log(f"raw results: {out}")
    if args.markdown:
        write_markdown(Path(args.markdown), markdown(results))
        log(f"wrote {args.markdown}")
    return 0


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=None)
    parser.add_argument("--runs", type=int, default=None, help="measured runs (default 5)")
    parser.add_argument("--quick", action="store_true", help="sizes 200,1000 and 3 runs")
    parser.add_argument("--no-peers", action="store_true", help="do not run Backlog.md, seeds")
    parser.add_argument("--markdown", help="also write the tables as markdown to this file")
    parser.add_argument("--cache", default=str(BENCH / ".cache"), help="default bench/.cache")
    parser.add_argument("--taskfs", help="the taskfs command (default: beside this python)")
    parser.add_argument(
        "--report",
        nargs="+",
        metavar="JSON",
        help="measure nothing: merge these raw results (later files win per size) and print "
        "the tables (and --markdown)",
    )
    args = parser.parse_args(argv)
    args.sizes = args.sizes or ([200, 1000] if args.quick else list(SIZES))
    args.runs = args.runs or (3 if args.quick else 5)
    return args


def report(files: Sequence[str], markdown_path: str | None) -> int:
    merged: dict[str, Any] = {"sizes": {}}
    for name in files:
        found = json.loads(Path(name).read_text())
        merged["machine"] = merged.get("machine") or found["machine"]
        merged["runs"] = found["runs"]
        merged.setdefault("parts", []).append(
            {"sizes": list(found["sizes"]), "machine": found["machine"]}
        )
        merged["sizes"].update(found["sizes"])
    merged["sizes"] = dict(sorted(merged["sizes"].items(), key=lambda kv: int(kv[0])))
    for i, part in enumerate(merged["parts"]):  # a size measured again later is that run's
        later = {s for p in merged["parts"][i + 1 :] for s in p["sizes"]}
        part["sizes"] = [s for s in part["sizes"] if s not in later]
    merged["parts"] = [p for p in merged["parts"] if p["sizes"]]
    merged["targets"] = targets(merged)
    for size, data in merged["sizes"].items():
        print(table(int(size), data, merged["runs"]))
    print(targets_table(merged["targets"]))
    if markdown_path:
        write_markdown(Path(markdown_path), markdown(merged))
    return 0


BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def write_markdown(path: Path, tables: str) -> None:
    """Write the tables; into an existing file, only between its bench markers, so that the
    notes around them (the diagnosis in RESULTS.md) stay."""
    old = path.read_text() if path.is_file() else ""
    if BEGIN in old and END in old:
        head, _, rest = old.partition(BEGIN)
        _, _, tail = rest.partition(END)
        path.write_text(f"{head}{BEGIN}\n{tables}{END}{tail}")
    else:
        path.write_text(f"{BEGIN}\n{tables}{END}\n")


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _installed_script(cache: Path, env: dict[str, str]) -> Path:
    """taskfs installed from this checkout into bench/.cache/venv, as `pip install .` does."""
    venv = cache / "venv"
    python = venv / "bin" / "python"
    stamp = venv / "taskfs-source.sha256"
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    if not python.is_file():
        _log(f"making the measuring venv {venv} and installing taskfs into it ...")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([*pip, str(ROOT)], check=True, env=env)
        stamp.write_text(_source_digest())
    digest = _source_digest()
    if not stamp.is_file() or stamp.read_text() != digest:
        _log("taskfs changed: reinstalling it into the measuring venv ...")
        built = (ROOT / "build").exists()
        subprocess.run([*pip, "--no-deps", "--force-reinstall", str(ROOT)], check=True, env=env)
        if not built:  # setuptools builds in the tree: a `build/` left there shadows `build`
            shutil.rmtree(ROOT / "build", ignore_errors=True)
        stamp.write_text(digest)
    return venv / "bin" / "taskfs"


def _source_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted([ROOT / "pyproject.toml", *(ROOT / "taskfs").rglob("*")]):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _interpreter(script: Path) -> str:
    """The Python a console script runs on (its #! line), for the `python -c pass` baseline."""
    first = script.read_bytes().split(b"\n", 1)[0]
    if first.startswith(b"#!") and b" " not in first.strip():
        return first[2:].decode().strip()
    return sys.executable


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TASKFS_", "GIT_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(generate.IDENTITY)
    env["LC_ALL"] = "C"
    # The operator's folder of its own: keys, a capability ledger or a trust list left in this
    # machine's ~/.config/taskfs (by a demo, a test run by hand) must not change what is
    # measured (a private key there makes every `new` of its agent load the signing library).
    config = Path(__file__).resolve().parent / ".cache" / "config"
    config.mkdir(parents=True, exist_ok=True)
    env["XDG_CONFIG_HOME"] = str(config)
    return env


def _compile_bytecode(python: str, env: dict[str, str]) -> None:
    """Make sure taskfs and its dependencies start from .pyc files, as installed ones do."""
    code = (
        "import compileall, importlib.util, os\n"
        "for name in ('taskfs', 'click', 'pydantic', 'pydantic_core', 'yaml', 'annotated_types',"
        " 'typing_extensions', 'typing_inspection', 'git', 'gitdb', 'cryptography'):\n"
        "    spec = importlib.util.find_spec(name)\n"
        "    if spec and spec.origin:\n"
        "        where = spec.submodule_search_locations\n"
        "        target = list(where)[0] if where else spec.origin\n"
        "        (compileall.compile_dir if where else compileall.compile_file)(target, quiet=1)\n"
    )
    subprocess.run([python, "-c", code], env=env, check=False, capture_output=True)


def _copy(src: Path, dst: Path) -> Path:
    """A fresh working copy (operations change it), with git's index refreshed so that the
    first command does not pay for re-reading every file whose inode changed in the copy."""
    shutil.rmtree(dst, ignore_errors=True)
    dst.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", str(src), str(dst)], check=True)
    subprocess.run(["git", "status", "--porcelain"], cwd=dst, capture_output=True, check=True)
    return dst


# -- one size ----------------------------------------------------------------------------


def _measure_size(
    size: int,
    args: argparse.Namespace,
    *,
    cache: Path,
    taskfs_cmd: list[str],
    peers: list[peers_module.Peer],
    env: dict[str, str],
) -> dict[str, Any]:
    source, manifest = generate.cached_repo(cache, size, _log)
    if len(manifest["pool"]) < args.runs + 2:
        raise SystemExit(
            f"{size} tasks give {len(manifest['pool'])} claimable tasks: use fewer runs"
        )
    work = cache / "work" / f"n{size}"
    repo = _copy(source, work / "taskfs")
    python = _interpreter(Path(taskfs_cmd[0]))
    ops = _taskfs_ops(repo, work, taskfs_cmd, manifest, size) + _baselines(repo, python)
    peer_ops: dict[str, list[Op]] = {}
    for peer in peers:
        try:
            peer_source, peer_manifest = peers_module.cached_repo(cache, peer, size, _log)
        except (subprocess.CalledProcessError, OSError) as exc:
            _log(f"peers: {peer.name} repository could not be built, skipped: {exc}")
            continue
        peer_repo = _copy(peer_source, work / peer.name)
        peer_ops[peer.name] = [
            Op(name, _peer_steps(peer, build, peer_manifest), peer_repo)
            for name, build in peer.ops.items()
        ]
    every = ops + [op for group in peer_ops.values() for op in group]
    measure(every, args.runs, env, _log)
    return {
        "manifest": {k: v for k, v in manifest.items() if k != "pool"},
        "taskfs": {op.name: _summary(op) for op in ops},
        "peers": {
            name: {op.name: _summary(op) for op in group} for name, group in peer_ops.items()
        },
    }


def _peer_steps(
    peer: peers_module.Peer,
    build: Callable[[dict[str, Any], int], list[str]],
    manifest: dict[str, Any],
) -> Callable[[int], list[Argv]]:
    return lambda i: [[*peer.command, *build(manifest, i)]]


def _summary(op: Op) -> dict[str, Any]:
    return {
        "median_ms": None if op.median is None else round(op.median * 1000, 1),
        "min_ms": round(min(r.seconds for r in op.runs) * 1000, 1) if op.runs else None,
        "cpu_ms": None if op.cpu_median is None else round(op.cpu_median * 1000, 1),
        "peak_mib": None if op.peak_mib is None else round(op.peak_mib, 1),
        "runs": len(op.runs),
        "error": op.error,
    }


def _taskfs_ops(
    repo: Path, work: Path, cmd: list[str], manifest: dict[str, Any], size: int
) -> list[Op]:
    agent = manifest["agent"]
    inputs = work / "inputs"
    inputs.mkdir(parents=True, exist_ok=True)

    def new_steps(i: int) -> list[Argv]:
        path = inputs / f"new-{i}.yaml"
        path.write_text(_envelope_text(f"bench-new-{i}", size + 100 + i))
        return [[*cmd, "new", str(path), "--agent", "planner", "--json"]]

    ops = [
        Op("--version", lambda i: [[*cmd, "--version"]], repo, _expect_version),
        Op("ls --json", lambda i: [[*cmd, "ls", "--json"]], repo, _expect_tasks(size)),
        Op("ready --json", lambda i: [[*cmd, "ready", "--json"]], repo, _expect_ready(manifest)),
        Op(
            "show ID",
            lambda i: [[*cmd, "show", manifest["show"], "--json"]],
            repo,
            _expect_json(id=manifest["show"], state="completed"),
        ),
        Op(
            "claim",
            lambda i: [[*cmd, "claim", manifest["pool"][i], "--agent", agent, "--json"]],
            repo,
            _expect_json(state="working"),
        ),
        Op("new", new_steps, repo, _expect_json(state="submitted")),
        Op("validate", lambda i: [[*cmd, "validate", "--json"]], repo, _expect_json(ok=True)),
    ]
    if _has_command(cmd, "owners", repo):
        ops.append(
            Op(
                "owners PATH",
                lambda i: [[*cmd, "owners", manifest["owners_path"], "--json"]],
                repo,
                _expect_json(ok=True),
            )
        )
    else:
        _log("  taskfs has no `owners` command yet: skipped")
    return ops


def _baselines(repo: Path, python: str) -> list[Op]:
    def commit_steps(i: int) -> list[Argv]:
        name = f"notes/bench-{i}.txt"
        (repo / "notes").mkdir(exist_ok=True)
        (repo / name).write_text(f"note {i}\n")
        return [["git", "add", "--", name], ["git", "commit", "-q", "-m", f"note {i}"]]

    return [
        Op("python -c pass", lambda i: [[python, "-c", "pass"]], repo),
        Op("git add+commit", commit_steps, repo),
        Op("find tasks | wc -l", lambda i: [["sh", "-c", "find tasks -type f | wc -l"]], repo),
    ]


def _has_command(cmd: list[str], name: str, cwd: Path) -> bool:
    proc = subprocess.run([*cmd, name, "--help"], cwd=cwd, capture_output=True, check=False)
    return proc.returncode == 0


def _envelope_text(task_id: str, n: int) -> str:
    return (
        f"id: {task_id}\nobjective: Add the m{n} module.\noutputFormat: A commit.\n"
        "toolAndSourceGuidance: Use pytest.\nboundaries: Touch nothing else.\n"
        f"filesAndInterfaces:\n  - src/m{n}/**\nacceptanceCheck:\n"
        f"  passFailCommand: pytest -q tests/m{n}\n  endToEndVerification: Run it.\n"
        "contextID: ctx-bench\nfrom: planner\nto: builder\n"
    )


# -- checks of the warm-up's output ------------------------------------------------------


def _doc(run: Run) -> dict[str, Any]:
    value = json.loads(run.stdout)
    assert isinstance(value, dict)
    return value


def _expect_version(run: Run) -> str | None:
    return None if run.stdout.startswith(b"taskfs ") else f"unexpected output {run.stdout[:80]!r}"


def _expect_json(**wanted: Any) -> Callable[[Run], str | None]:
    def check(run: Run) -> str | None:
        try:
            doc = _doc(run)
        except (ValueError, AssertionError):
            return f"not one JSON document: {run.stdout[:120]!r}"
        wrong = {k: doc.get(k) for k, v in wanted.items() if doc.get(k) != v}
        return f"expected {wanted}, got {wrong}" if wrong else None

    return check


def _expect_tasks(size: int) -> Callable[[Run], str | None]:
    def check(run: Run) -> str | None:
        try:
            count = len(_doc(run)["tasks"])
        except (ValueError, AssertionError, KeyError):
            return f"not a task list: {run.stdout[:120]!r}"
        return None if count >= size else f"listed {count} tasks of {size}"

    return check


def _expect_ready(manifest: dict[str, Any]) -> Callable[[Run], str | None]:
    def check(run: Run) -> str | None:
        try:
            ready = {t["id"] for t in _doc(run)["tasks"]}
        except (ValueError, AssertionError, KeyError):
            return f"not a task list: {run.stdout[:120]!r}"
        missing = [i for i in manifest["pool"] if i not in ready]
        return f"{len(missing)} claimable tasks not listed as ready" if missing else None

    return check


# -- reporting ---------------------------------------------------------------------------


def machine() -> dict[str, str]:
    cpu = "unknown"
    info = Path("/proc/cpuinfo")
    if info.is_file():
        for line in info.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "unknown"
    meminfo = Path("/proc/meminfo")
    if meminfo.is_file():
        kib = int(meminfo.read_text().split("\n", 1)[0].split()[1])
        mem = f"{kib / 1024 / 1024:.1f} GiB"
    git = subprocess.run(["git", "--version"], capture_output=True, text=True, check=False)
    import taskfs

    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "load": " ".join(f"{x:.1f}" for x in os.getloadavg()),
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "memory": mem,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "git": git.stdout.strip().removeprefix("git version "),
        "taskfs": taskfs.__version__,
    }


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def _ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "-"
    return f"{a / b:.2f}x" if a / b < 10 else f"{a / b:.0f}x"


def rows(size: int, data: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    ours = data["taskfs"]
    peer_names = sorted(data["peers"])
    head = ["operation", "taskfs ms", "cpu ms", "peak MiB", "vs baseline"]
    for name in peer_names:
        head += [f"{name} ms", f"taskfs/{name}"]
    out = []
    for op in (*TASKFS_OPS, *BASELINES):
        if op not in ours:
            continue
        got = ours[op]
        base = RATIO_TO.get(op)
        vs = f"{_ratio(got['median_ms'], ours[base]['median_ms'])} {base}" if base else ""
        name = op if not got["error"] else f"{op} (failed: {got['error'][:60]})"
        row = [name, _ms(got["median_ms"]), _ms(got["cpu_ms"]), _ms(got["peak_mib"]), vs]
        for peer in peer_names:
            theirs = data["peers"][peer].get(op)
            if theirs is None:
                row += ["n/a", ""]
            else:
                their_ms = theirs["median_ms"]
                note = "" if not theirs["error"] else " (failed)"
                row += [_ms(their_ms) + note, _ratio(got["median_ms"], their_ms)]
        out.append(row)
    return head, out


def table(size: int, data: dict[str, Any], runs: int) -> str:
    head, body = rows(size, data)
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    lines = [f"\n{size} tasks (median of {runs} runs; ms)"]
    for r in [head, *body]:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    return "\n".join(lines)


def _get(results: dict[str, Any], size: int, who: str, op: str, metric: str) -> float | None:
    data = results["sizes"].get(str(size))
    if data is None:
        return None
    group = data["taskfs"] if who == "taskfs" else data["peers"].get(who, {})
    found = group.get(op)
    return None if found is None else found.get(metric)


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's targets, judged on wall time (as the issue asks) and, beside it, on CPU
    time, which a machine busy with other work disturbs much less. None: not measured."""
    out: list[dict[str, Any]] = []

    def add(
        name: str,
        value: Callable[[str], float | None],
        limit: Callable[[str], float | None],
        unit: str = "ms",
    ) -> None:
        row: dict[str, Any] = {"target": name, "unit": unit}
        for metric in ("median_ms", "cpu_ms"):
            v, lim = value(metric), limit(metric)
            row[metric] = {
                "value": v,
                "limit": lim,
                "ok": None if v is None or lim is None else v <= lim,
            }
        out.append(row)

    def times(x: float) -> Callable[[float | None], float | None]:
        return lambda v: None if v is None else v * x

    def get(size: int, who: str, op: str, scale: float = 1.0) -> Callable[[str], float | None]:
        return lambda metric: times(scale)(_get(results, size, who, op, metric))

    for size in [int(s) for s in results["sizes"]]:
        add(
            f"--version <= 2.5x python -c pass ({size:,})",
            get(size, "taskfs", "--version"),
            get(size, "taskfs", "python -c pass", 2.5),
        )
    for op in ("ls --json", "ready --json"):
        add(f"{op} at 5,000 faster than seeds", get(5000, "taskfs", op), get(5000, "seeds", op))
        add(
            f"{op} at 5,000 >= 20x faster than Backlog.md",
            get(5000, "taskfs", op),
            get(5000, "backlog", op, 1 / 20),
        )
        add(
            f"{op} at 10,000 <= 1.5x its 5,000 time",
            get(10000, "taskfs", op),
            get(5000, "taskfs", op, 1.5),
        )
    add(
        "claim at 5,000 <= 3x bare git add+commit",
        get(5000, "taskfs", "claim"),
        get(5000, "taskfs", "git add+commit", 3),
    )

    def peak(metric: str) -> float | None:
        found = results["sizes"].get("10000", {}).get("taskfs", {}).get("ls --json", {})
        return found.get("peak_mib")

    add("ls peak memory at 10,000 < 150 MiB", peak, lambda metric: 150.0, "MiB")
    return out


def _verdict(cell: dict[str, Any], unit: str) -> tuple[str, str, str]:
    value = "-" if cell["value"] is None else f"{cell['value']:,.1f} {unit}"
    limit = "-" if cell["limit"] is None else f"{cell['limit']:,.1f} {unit}"
    holds = {True: "yes", False: "**no**", None: "not measured"}[cell["ok"]]
    return value, limit, holds


def targets_table(found: list[dict[str, Any]]) -> str:
    lines = ["\nTargets (wall time; CPU time in brackets)"]
    for t in found:
        wall, cpu = t["median_ms"], t["cpu_ms"]
        mark = {True: "PASS", False: "FAIL", None: "n/a "}[wall["ok"]]
        value, limit, _ = _verdict(wall, t["unit"])
        cpu_value, cpu_limit, cpu_holds = _verdict(cpu, t["unit"])
        lines.append(
            f"  {mark}  {t['target']}: {value} (limit {limit}) "
            f"[cpu {cpu_value}, limit {cpu_limit}: {cpu_holds}]"
        )
    return "\n".join(lines)


def markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    out = [
        "## Machine\n",
        f"{m['nproc']} cores, {m['cpu']}, {m['memory']} RAM; {m['os']}; Python {m['python']}; "
        f"git {m['git']}; taskfs {m['taskfs']}.\n",
    ]
    for part in results.get("parts") or [{"sizes": list(results["sizes"]), "machine": m}]:
        pm = part["machine"]
        sizes = ", ".join(f"{int(s):,}" for s in part["sizes"])
        out.append(
            f"- {sizes} tasks: measured {pm['date']}; load average (1, 5, 15 min) "
            f"{pm['load']} at the start, {pm.get('load_after', '?')} at the end."
        )
    out.append(
        f"\nTimes are medians of {results['runs']} runs after one warm-up, wall clock from "
        "spawn to exit; `cpu ms` is the median user + system time of the process and the "
        "children it waited for (less sensitive to a busy machine); peak memory is the peak "
        "RSS of one more run under `/usr/bin/time`.\n"
    )
    for size, data in results["sizes"].items():
        head, body = rows(int(size), data)
        states = ", ".join(f"{k} {v}" for k, v in data["manifest"]["states"].items())
        out.append(f"\n### {int(size):,} tasks\n")
        out.append(f"{data['manifest']['transitions']:,} status files; states: {states}.\n")
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in body]
    out.append("\n### Targets\n")
    out.append("| target | wall | limit | holds | cpu | limit | holds |")
    out.append("|---|---|---|---|---|---|---|")
    for t in results["targets"]:
        cells = [*_verdict(t["median_ms"], t["unit"]), *_verdict(t["cpu_ms"], t["unit"])]
        out.append(f"| {t['target']} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
