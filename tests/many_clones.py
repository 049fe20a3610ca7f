"""Many agents, each in its own clone of one bare remote, working at once (issue 37).

`run_agents` submits `agents * rounds` tasks from a planner clone (addressed to no one, each
owning files of its own, checked by `true`), clones the remote once per agent and starts one
process per agent (`python tests/many_clones.py agent ...`). Each agent, for each of its rounds:
`taskfs sync`; `taskfs ready`; `taskfs claim ID --sync` on one of the ready tasks chosen at
random (so that agents meet on the same task: a lost race is refused with
`transition_not_allowed` and the agent picks again from what it now sees); `taskfs check`;
`taskfs complete`; `taskfs sync`. Every command is a real `taskfs` process. Each agent prints
what it did as one JSON document: the tasks it claimed and completed, the races it lost, how long
each sync (and `claim --sync`) took and in how many attempts, and every refusal.

`settle` syncs every clone until they agree and reads back what a reviewer checks: each clone's
HEAD, its listing, every task's chain of transitions, and `audit` on each.

Used by tests/cli/test_sync_contention.py (small) and bench/many_clones.py (16 x 5).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# Run as a script, so that the taskfs its commands run is the one on PYTHONPATH (SOURCE).
AGENT = [sys.executable, str(Path(__file__).resolve()), "agent"]
# Another taskfs source tree to measure (a checkout of an older commit, say): bench only.
SOURCE = "TASKFS_BENCH_SOURCE"


@dataclass
class AgentReport:
    name: str
    claimed: list[str] = field(default_factory=list)
    completed: list[str] = field(default_factory=list)
    lost_races: int = 0
    # (command, seconds, attempts) of every `sync` and `claim --sync` that pushed or tried to.
    syncs: list[tuple[str, float, int]] = field(default_factory=list)
    sync_failures: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AgentReport:
        report = cls(**data)
        report.syncs = [(str(c), float(s), int(a)) for c, s, a in data["syncs"]]
        return report


@dataclass
class Report:
    clones: list[Path]
    agents: list[AgentReport]
    seconds: float

    @property
    def sync_failures(self) -> list[dict[str, Any]]:
        return [f for a in self.agents for f in a.sync_failures]

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [e for a in self.agents for e in a.errors]


def _env() -> dict[str, str]:
    paths = [os.environ.get(SOURCE) or str(ROOT), os.environ.get("PYTHONPATH")]
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in paths if p),
        "TASKFS_SANDBOX": "off",
    }


def _taskfs(where: Path, *args: str, timeout: float = 600) -> tuple[int, Any, float]:
    """One `taskfs ... --json` process: its exit status, its document, its wall time."""
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "taskfs", *args, "--json"],
        cwd=where,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=timeout,
        check=False,
    )
    took = time.perf_counter() - started
    try:
        document = json.loads(proc.stdout)
    except ValueError:
        document = {"ok": False, "errors": [{"code": "crashed", "stderr": proc.stderr[-2000:]}]}
    return proc.returncode, document, took


def _git(where: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=where, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def _clone(url: str, path: Path) -> Path:
    subprocess.run(["git", "clone", "-q", url, str(path)], check=True, capture_output=True)
    _git(path, "checkout", "-q", "-B", "main")
    return path


# -- the whole run -------------------------------------------------------------------------


def make_remote(base: Path) -> Path:
    """A bare remote `base/remote.git` holding one commit with taskfs initialised by the taskfs
    the agents run (SOURCE's, when set: a newer taskfs writes settings an older one refuses)."""
    remote = base / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    seed = _clone(str(remote), base / "seed")
    (seed / "README.md").write_text("a project\n")
    _git(seed, "add", "README.md")
    _git(seed, "commit", "-q", "-m", "initial")
    code, document, _ = _taskfs(seed, "init")
    assert code == 0, document
    _git(seed, "push", "-q", "-u", "origin", "main")
    return remote


def run_agents(
    base: Path, url: str, *, agents: int, rounds: int, seed: int = 37, timeout: float = 1800
) -> Report:
    """Submit the work, clone once per agent, run the agents at once and collect their
    reports (see the module's account)."""
    from taskfs.core import yamlio
    from tests.helpers import ENVELOPE

    planner = _clone(url, base / "planner")
    inputs = base / "envelopes"
    inputs.mkdir()
    for i in range(agents * rounds):
        envelope = {
            **{k: v for k, v in ENVELOPE.items() if k != "to"},
            "id": f"work-{i:03d}",
            "filesAndInterfaces": [f"work/{i:03d}/**"],
            "acceptanceCheck": {"passFailCommand": "true", "endToEndVerification": "none"},
        }
        (inputs / f"{i:03d}.yaml").write_text(yamlio.dump(envelope))
    for args in (("new", *map(str, sorted(inputs.iterdir()))), ("sync",)):
        code, document, _ = _taskfs(planner, *args)
        assert code == 0, document
    names = [f"agent-{n:02d}" for n in range(agents)]
    clones = [_clone(url, base / name) for name in names]
    started = time.perf_counter()
    procs = [
        subprocess.Popen(
            [*AGENT, str(where), name, str(rounds), str(seed + n)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        for n, (name, where) in enumerate(zip(names, clones, strict=True))
    ]
    reports = []
    deadline = time.monotonic() + timeout
    for name, proc in zip(names, procs, strict=True):
        try:
            out, err = proc.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for other in procs:
                other.kill()
            raise
        try:
            reports.append(AgentReport.from_json(json.loads(out)))
        except (ValueError, TypeError, KeyError):
            crashed = {"code": "crashed", "stderr": err[-2000:]}
            reports.append(AgentReport(name, errors=[crashed]))
    return Report([planner, *clones], reports, time.perf_counter() - started)


@dataclass
class Settled:
    heads: set[str]
    listings: list[tuple[tuple[str, str, str | None], ...]]
    chains: dict[str, list[tuple[str, str]]]
    audits_clean: bool
    # Any command that refused while settling, with its answer (none when all went well).
    refusals: list[dict[str, Any]] = field(default_factory=list)


def settle(clones: list[Path]) -> Settled:
    """Sync every clone twice over, in turn (the second pass brings the first ones what the
    later ones pushed), and read back what they hold."""
    refusals: list[dict[str, Any]] = []
    for _ in range(2):
        for where in clones:
            code, document, _ = _taskfs(where, "sync")
            if code != 0:
                refusals.append({"clone": where.name, "command": "sync", "answer": document})
    listings = []
    for where in clones:
        _, document, _ = _taskfs(where, "ls")
        if "tasks" not in document:
            refusals.append({"clone": where.name, "command": "ls", "answer": document})
        tasks = document.get("tasks") or []
        rows = sorted((t["id"], t["state"], t.get("holder")) for t in tasks)
        listings.append(tuple(rows))
    chains: dict[str, list[tuple[str, str]]] = {}
    for folder in sorted((clones[0] / "tasks").iterdir()):
        if not folder.is_dir():
            continue
        chains[folder.name] = [_state_and_by(p) for p in sorted((folder / "status").iterdir())]
    audits = [_taskfs(where, "audit")[1].get("ok") is True for where in clones]
    heads = {_git(where, "rev-parse", "HEAD") for where in clones}
    return Settled(heads, listings, chains, all(audits), refusals)


def _state_and_by(path: Path) -> tuple[str, str]:
    from taskfs.core import yamlio

    data = yamlio.load(path.read_bytes())
    assert isinstance(data, dict)
    return str(data["state"]), str(data["by"])


# -- one agent (its own process) -------------------------------------------------------------


def agent(where: Path, name: str, rounds: int, seed: int) -> AgentReport:
    rng = random.Random(seed)
    report = AgentReport(name)
    started = time.perf_counter()

    def synced(*args: str) -> tuple[int, Any]:
        code, document, took = _taskfs(where, *args)
        command = "claim --sync" if "claim" in args else "sync"
        attempts = int(document.get("attempts") or 0) if code == 0 else 0
        report.syncs.append((command, took, attempts))
        refusals = document.get("errors") or []
        if code != 0 and not (command == "claim --sync" and _lost(refusals)):
            report.sync_failures.append({"command": command, "errors": refusals})
        return code, document

    for _ in range(rounds):
        synced("sync")
        patience = time.monotonic() + 300
        while time.monotonic() < patience:
            _, ready, _ = _taskfs(where, "ready", "--agent", name)
            open_ids = [t["id"] for t in ready.get("tasks", [])]
            if not open_ids:
                # Every task this clone sees is taken: what others released or pushed since
                # shows after the next sync.
                time.sleep(rng.uniform(0.1, 0.5))
                synced("sync")
                continue
            task = rng.choice(open_ids)
            code, claimed = synced("claim", task, "--sync", "--agent", name)
            if code != 0:
                if _lost(claimed.get("errors") or []):
                    report.lost_races += 1
                continue
            report.claimed.append(task)
            for step in (("check", task, "--agent", name), ("complete", task, "--agent", name)):
                code, done, _ = _taskfs(where, *step)
                if code != 0:
                    report.errors.append({"command": step[0], "task": task, "answer": done})
                    break
            else:
                report.completed.append(task)
            synced("sync")
            break
        else:
            report.errors.append({"command": "ready", "reason": "no task to claim for 300 s"})
    report.seconds = time.perf_counter() - started
    return report


def _lost(errors: list[dict[str, Any]]) -> bool:
    return [e.get("code") for e in errors] == ["transition_not_allowed"]


def main(argv: list[str]) -> int:
    if len(argv) != 5 or argv[0] != "agent":
        sys.stderr.write("usage: python tests/many_clones.py agent CLONE NAME ROUNDS SEED\n")
        return 2
    where, name, rounds, seed = Path(argv[1]), argv[2], int(argv[3]), int(argv[4])
    done = agent(where, name, rounds, seed)
    sys.stdout.write(json.dumps(done.__dict__) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
