"""The peers, measured on the same plan: Backlog.md and seeds, installed from npm.

Both are installed (pinned) into `bench/.cache/peers/` with npm, never globally and never
committed. seeds is TypeScript run by Bun, so Bun comes from npm too (`@oven/bun-linux-*`,
a package that ships the binary). Backlog.md is run as its platform binary (the npm package's
`backlog` script only spawns it through Node, which would add Node's start-up to its times).

Their repositories are written in their own documented file formats (seeds: one JSON line per
issue in `.seeds/issues.jsonl`; Backlog.md: one markdown file with YAML front matter per task
in `backlog/tasks/`) after their own `init`, from the same plan as taskfs's: creating 10,000
tasks through their CLIs would take hours (Backlog.md creates one in about half a second).
A peer that cannot be installed is reported and skipped.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generate import GENERATOR_VERSION, IDENTITY, Plan, plan

BACKLOG_VERSION = "1.52.0"
SEEDS_VERSION = "0.5.13"
BUN_VERSION = "1.4.4"
PEERS_FORMAT = 1  # bump when the peer repositories written here change

OPEN_STATES = ("working", "input_required", "auth_required")


@dataclass
class Peer:
    name: str
    version: str
    command: list[str]  # the argv prefix that runs the peer's CLI
    build: Callable[[Peer, Path, Plan], dict[str, Any]]
    # operation name -> argv suffix builder, given the manifest and the run number
    ops: dict[str, Callable[[dict[str, Any], int], list[str]]]


def install(cache: Path, log: Callable[[str], None]) -> list[Peer]:
    """The peers that are (or can now be) installed here; each missing one is logged."""
    home = cache / "peers"
    home.mkdir(parents=True, exist_ok=True)
    bun_pkg = _bun_package()
    wanted = [f"backlog.md@{BACKLOG_VERSION}", f"@os-eco/seeds-cli@{SEEDS_VERSION}"]
    if bun_pkg:
        wanted.append(f"{bun_pkg}@{BUN_VERSION}")
    if not _installed(home, wanted):
        if shutil.which("npm") is None:
            log("peers: npm is not installed here, so Backlog.md and seeds are not measured")
            return []
        (home / "package.json").write_text('{"name": "taskfs-bench-peers", "private": true}\n')
        log(f"peers: npm install {' '.join(wanted)} (into {home})")
        proc = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--no-save", *wanted],
            cwd=home,
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            log(f"peers: npm install failed, so the peers are not measured: {proc.stderr[-400:]}")
            return []
    peers = []
    modules = home / "node_modules"
    backlog = modules / f"backlog.md-{_platform()}" / "backlog"
    if backlog.is_file():
        peers.append(Peer("backlog", BACKLOG_VERSION, [str(backlog)], _build_backlog, BACKLOG_OPS))
    else:
        log(f"peers: Backlog.md has no binary for {_platform()} here; not measured")
    bun = modules / (bun_pkg or "-") / "bin" / "bun"
    seeds = modules / "@os-eco" / "seeds-cli" / "src" / "index.ts"
    if bun.is_file() and seeds.is_file():
        peers.append(Peer("seeds", SEEDS_VERSION, [str(bun), str(seeds)], _build_seeds, SEEDS_OPS))
    else:
        log("peers: seeds needs Bun, which has no npm package for this platform; not measured")
    return peers


def _platform() -> str:
    arch = {"x86_64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine(), "")
    system = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system(), "")
    return f"{system}-{arch}"


def _bun_package() -> str | None:
    if _platform() == "linux-x64":
        cpu = Path("/proc/cpuinfo")
        avx2 = cpu.is_file() and " avx2" in cpu.read_text()
        return "@oven/bun-linux-x64" if avx2 else "@oven/bun-linux-x64-baseline"
    if _platform() in ("linux-arm64", "darwin-arm64", "darwin-x64"):
        return f"@oven/bun-{_platform().replace('arm64', 'aarch64')}"
    return None


def _installed(home: Path, wanted: list[str]) -> bool:
    for spec in wanted:
        name, _, version = spec.rpartition("@")
        manifest = home / "node_modules" / name / "package.json"
        if not manifest.is_file() or json.loads(manifest.read_text()).get("version") != version:
            return False
    return True


def cached_repo(
    cache: Path, peer: Peer, size: int, log: Callable[[str], None]
) -> tuple[Path, dict[str, Any]]:
    key = f"{peer.name}-{peer.version}-gen{GENERATOR_VERSION}.{PEERS_FORMAT}-n{size}"
    home = cache / "repos" / key
    if (home / "manifest.json").is_file():
        return home / "repo", json.loads((home / "manifest.json").read_text())
    building = cache / "repos" / f"{key}.building-{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    log(f"building a {peer.name} repository of {size} tasks ...")
    repo = building / "repo"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    manifest = peer.build(peer, repo, plan(size))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", f"{size} tasks")
    (building / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    shutil.rmtree(home, ignore_errors=True)
    os.rename(building, home)
    return home / "repo", manifest


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, **IDENTITY}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def _run(peer: Peer, repo: Path, *args: str) -> None:
    subprocess.run(
        [*peer.command, *args],
        cwd=repo,
        check=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **IDENTITY},
    )


# -- seeds -------------------------------------------------------------------------------

SEEDS_STATUS = {"submitted": "open", **dict.fromkeys(OPEN_STATES, "in_progress")}


def _build_seeds(peer: Peer, repo: Path, the_plan: Plan) -> dict[str, Any]:
    _run(peer, repo, "init")
    ids = {t.id: f"bench-{t.index:04x}" for t in the_plan.tasks}
    lines = []
    for t in the_plan.tasks:
        stamp = f"2026-01-05T09:{t.index // 1000 % 60:02d}:{t.index % 60:02d}.000Z"
        issue: dict[str, Any] = {
            "id": ids[t.id],
            "title": f"Make module m{t.index} handle {t.context} cases correctly",
            "status": SEEDS_STATUS.get(t.final, "closed"),
            "type": "task",
            "priority": t.index % 5,
            "assignee": t.recipient,
            "description": t.envelope()["objective"],
            "labels": [t.context],
            "createdAt": stamp,
            "updatedAt": stamp,
        }
        if t.depends_on:
            issue["blockedBy"] = [ids[d] for d in t.depends_on]
        if issue["status"] == "closed":
            issue["closedAt"] = stamp
            issue["closeReason"] = t.final
        lines.append(json.dumps(issue))
    (repo / ".seeds" / "issues.jsonl").write_text("\n".join(lines) + "\n")
    return {"pool": [ids[i] for i in the_plan.pool], "show": ids[the_plan.manifest()["show"]]}


SEEDS_OPS: dict[str, Callable[[dict[str, Any], int], list[str]]] = {
    "--version": lambda m, i: ["--version"],
    "ls --json": lambda m, i: ["list", "--all", "--limit", "1000000", "--json"],
    "ready --json": lambda m, i: ["ready", "--limit", "1000000", "--json"],
    "show ID": lambda m, i: ["show", m["show"], "--json"],
    "claim": lambda m, i: [
        "update",
        m["pool"][i],
        "--status",
        "in_progress",
        "--assignee",
        "builder",
        "--json",
    ],
    "new": lambda m, i: [
        "create",
        "--title",
        f"bench new task {i}",
        "--assignee",
        "builder",
        "--json",
    ],
    "validate": lambda m, i: ["doctor", "--json"],
}


# -- Backlog.md --------------------------------------------------------------------------

BACKLOG_STATUS = {"submitted": "To Do", **dict.fromkeys(OPEN_STATES, "In Progress")}


def _build_backlog(peer: Peer, repo: Path, the_plan: Plan) -> dict[str, Any]:
    _run(
        peer,
        repo,
        "init",
        "bench",
        "--defaults",
        "--integration-mode",
        "none",
        "--check-branches",
        "false",
        "--include-remote",
        "false",
    )
    folder = repo / "backlog" / "tasks"
    folder.mkdir(parents=True, exist_ok=True)
    number = {t.id: t.index + 1 for t in the_plan.tasks}
    for t in the_plan.tasks:
        n = number[t.id]
        title = f"Make module m{t.index} handle {t.context} cases correctly"
        deps = "".join(f"\n  - TASK-{number[d]}" for d in t.depends_on) or " []"
        text = (
            f"---\nid: TASK-{n}\ntitle: {title}\nstatus: {BACKLOG_STATUS.get(t.final, 'Done')}\n"
            f"assignee:\n  - '@{t.recipient}'\ncreated_date: '2026-01-05 09:00'\n"
            f"labels:\n  - {t.context}\ndependencies:{deps}\nordinal: {n * 1000}\n---\n\n"
            f"## Description\n\n<!-- SECTION:DESCRIPTION:BEGIN -->\n"
            f"{t.envelope()['objective']}\n<!-- SECTION:DESCRIPTION:END -->\n"
        )
        (folder / f"task-{n} - {title.replace(' ', '-')}.md").write_text(text)
    return {
        "pool": [f"task-{number[i]}" for i in the_plan.pool],
        "show": f"task-{number[the_plan.manifest()['show']]}",
    }


BACKLOG_OPS: dict[str, Callable[[dict[str, Any], int], list[str]]] = {
    "--version": lambda m, i: ["--version"],
    "ls --json": lambda m, i: ["task", "list", "--json"],
    "ready --json": lambda m, i: ["task", "list", "--ready", "--json"],
    "show ID": lambda m, i: ["task", "view", m["show"], "--json"],
    "claim": lambda m, i: [
        "task",
        "edit",
        m["pool"][i],
        "-s",
        "In Progress",
        "-a",
        "@builder",
        "--plain",
    ],
    "new": lambda m, i: ["task", "create", f"bench new task {i}", "--plain"],
}
