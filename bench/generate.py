"""Synthetic taskfs repositories for the benchmark, written through taskfs's own writer.

A plan (`plan(size)`) decides every task up front, from a seeded random generator: who sends
it to whom, its context, what it depends on and owns, and the states it passes through (a
realistic mix: a fifth still submitted, a third completed, the rest working, waiting, failed,
canceled or refused; a task that was worked on has 3-7 status files, 3.1 on average over all
tasks; about 0.7 evidence files and one message per task). `build()` then writes it:

- envelopes through `taskfs.api.tasks.submit.submit`, a thousand envelopes per commit;
- a few tasks' transitions through `taskfs.api.lifecycle.transitions.transition`, exactly as
  `claim` and `move` do, so the real path is exercised at every size;
- every other transition through the same `Writer` (`repo.writing()`, one commit holding
  exactly the new files) with the same `StatusRecord` and `status_name`, each edge checked
  by `check_transition`, but a thousand tasks per commit. `transition()` commits one task at
  a time, and running a real acceptance check for thousands of completions would dominate;
- evidence and message files built through the models `taskfs check` and `taskfs send` write
  them with (`parse_evidence`, `MessageRecord`), named `<stamp>-<nonce>.yaml`.

After writing, `build()` checks that `ls` shows every planned state and `validate` is clean,
so a benchmark never runs on a ledger taskfs itself would call broken.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import shutil
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import taskfs
from taskfs.api.lifecycle import transitions
from taskfs.api.tasks import listing, queries, submit
from taskfs.core import yamlio
from taskfs.core.evidence_records import parse_evidence
from taskfs.core.layout import (
    EVIDENCE,
    MESSAGES,
    STATUS,
    format_time,
    message_id,
    stamped_name,
    status_name,
)
from taskfs.core.lifecycle import Parties, check_transition
from taskfs.core.records import MessageRecord, StatusRecord
from taskfs.store.repository import Repository

# Bump when the plan or the files written change: cached repositories are keyed by it.
GENERATOR_VERSION = 3  # 3: a completion names its evidence by file name, as `complete` writes it
BATCH = 1000
POOL = 60  # submitted, ready tasks for builder: one per `claim` run
API_SAMPLE = 4  # tasks whose transitions go through transitions.transition()
SENDERS = ("planner", "lead", "reviewer")
RECIPIENTS = ("builder", "tester", "writer", "porter", "ops")
BASE_TIME = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
IDENTITY = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@taskfs.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@taskfs.invalid",
}

# (weight, states after `submitted`): final states in roughly the proportions of a busy
# ledger; the loops through input_required and auth_required make the 3-6 transitions.
PATHS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (20, ()),
    (5, ("rejected",)),
    (8, ("working",)),
    (6, ("working", "input_required", "working")),
    (4, ("working", "input_required")),
    (2, ("working", "auth_required")),
    (12, ("working", "completed")),
    (12, ("working", "input_required", "working", "completed")),
    (6, ("working", "auth_required", "working", "input_required", "working", "completed")),
    (5, ("working", "input_required", "working", "failed")),
    (3, ("working", "failed")),
    (3, ("canceled",)),
    (2, ("working", "canceled")),
)
_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


@dataclass
class Planned:
    id: str
    index: int
    sender: str
    recipient: str
    context: str
    steps: tuple[str, ...]  # states after `submitted`
    depends_on: tuple[str, ...] = ()
    messages: int = 0
    via_api: bool = False
    head: str = ""  # the current status file's name, filled in while writing
    holder: str | None = None

    @property
    def final(self) -> str:
        return self.steps[-1] if self.steps else "submitted"

    def envelope(self) -> dict[str, Any]:
        n = self.index
        doc: dict[str, Any] = {
            "id": self.id,
            "objective": f"Make module m{n} handle {self.context} cases correctly.",
            "outputFormat": f"A commit changing src/m{n}/ with tests under tests/m{n}/.",
            "toolAndSourceGuidance": "Use pytest; read the module's docstring and its callers.",
            "boundaries": "Do not change public interfaces other than the one owned here.",
            "filesAndInterfaces": [f"src/m{n}/**", f"tests/m{n}/test_*.py", f"interface:m{n}"],
            "acceptanceCheck": {
                "passFailCommand": f"pytest -q tests/m{n}",
                "endToEndVerification": f"Run the m{n} example and compare with the fixture.",
            },
            "contextID": self.context,
            "from": self.sender,
            "to": self.recipient,
        }
        if n % 7 == 0:
            doc["filesAndInterfaces"].append(f"docs/m{n}.md")
        if self.depends_on:
            doc["dependsOn"] = list(self.depends_on)
        return doc


@dataclass
class Plan:
    size: int
    tasks: list[Planned]
    pool: list[str] = field(default_factory=list)

    def manifest(self) -> dict[str, Any]:
        states: dict[str, int] = {}
        for task in self.tasks:
            states[task.final] = states.get(task.final, 0) + 1
        show = next(t for t in self.tasks if t.final == "completed" and t.messages)
        owned = next(t for t in self.tasks if t.final == "working" and not t.via_api)
        return {
            "size": self.size,
            "taskfs": taskfs.__version__,
            "generator": GENERATOR_VERSION,
            "states": dict(sorted(states.items())),
            "transitions": sum(len(t.steps) + 1 for t in self.tasks),
            "pool": self.pool,
            "show": show.id,
            "owners_path": f"src/m{owned.index}/core.py",
            "agent": "builder",
        }


def plan(size: int, seed: int = 9) -> Plan:
    rng = random.Random(seed * 1_000_003 + size)
    ids: set[str] = set()
    tasks: list[Planned] = []
    weights = [w for w, _ in PATHS]
    completed: list[str] = []
    pool_size = min(POOL, max(10, size // 10), size // 2)
    for n in range(size):
        task_id = _fresh_id(rng, ids)
        if n < pool_size:
            steps: tuple[str, ...] = ()
            recipient = "builder"
        else:
            steps = rng.choices([p for _, p in PATHS], weights)[0]
            recipient = rng.choice(RECIPIENTS)
        task = Planned(
            id=task_id,
            index=n,
            sender=rng.choice(SENDERS),
            recipient=recipient,
            context=f"ctx-{rng.randrange(max(1, size // 40)):03d}",
            steps=steps,
            messages=rng.choice((0, 0, 0, 1, 1, 2, 3)),
        )
        if n >= pool_size and rng.random() < 0.2 and tasks:
            # A claimed task's dependencies must have completed; a waiting one may depend on
            # anything, so that `ready` has blocked tasks to skip.
            candidates = completed if steps else [t.id for t in tasks[pool_size:]] or completed
            if candidates:
                task.depends_on = tuple(
                    sorted(set(rng.sample(candidates, min(2, len(candidates)))))
                )
        if task.final == "completed":
            completed.append(task_id)
        tasks.append(task)
    multi = [t for t in tasks if len(t.steps) >= 2 and "completed" not in t.steps]
    for task in multi[:API_SAMPLE]:
        task.via_api = True
    return Plan(size, tasks, [t.id for t in tasks[:pool_size]])


def _fresh_id(rng: random.Random, taken: set[str]) -> str:
    while True:
        candidate = "".join(rng.choice(_ALPHABET) for _ in range(10))
        if candidate not in taken:
            taken.add(candidate)
            return candidate


# -- evidence and messages, through the same models taskfs writes them with ------------


def _stream(text: str) -> dict[str, Any]:
    data = text.encode()
    return {
        "totalBytes": len(data),
        "digest": {"sha256": hashlib.sha256(data).hexdigest()},
        "truncated": False,
    }


def evidence_file(task: Planned, passed: bool, commit: str, at: datetime) -> tuple[str, bytes]:
    """An acceptance run's record (contract section 1), as `taskfs check` writes one."""
    stdout = f"{'12 passed' if passed else '1 failed, 11 passed'} in 3.1s\n"
    doc = {
        "task": task.id,
        "kind": "check",
        "verdict": "pass" if passed else "fail",
        "verdictSource": "script",
        "command": f"pytest -q tests/m{task.index}",
        "exitCode": 0 if passed else 1,
        "startedAt": format_time(at),
        "durationSeconds": 3.25,
        "commit": commit,
        "ownedFiles": {"digest": {"sha256": "0" * 64}, "count": 2},
        "endToEnd": {"description": "run the module"},
        "stdout": stdout,
        "stderr": "",
        "streams": {"stdout": _stream(stdout), "stderr": _stream("")},
        "limits": {
            "timeoutSeconds": 600,
            "outputCapBytes": 32768,
            "timedOut": False,
            "leftoverKilled": False,
            "outputCapped": False,
        },
        "by": task.holder or task.recipient,
    }
    return stamped_name(at), yamlio.dump(parse_evidence(doc).to_document()).encode()


def message_file(task: Planned, status: str | None, text: str, at: datetime) -> tuple[str, bytes]:
    """A message about a task (contract section 6), unsigned, as `taskfs send` writes one."""
    name = stamped_name(at)
    record = MessageRecord.model_validate(
        {
            "msg_id": message_id(task.id, name),
            "task_id": task.id,
            "from": task.recipient,
            "to": task.sender,
            "status": status,
            "at": format_time(at),
            "text": text,
        }
    )
    return name, yamlio.dump(record.to_document()).encode()


# -- building ----------------------------------------------------------------------------


def build(target: Path, size: int) -> dict[str, Any]:
    """Write the planned repository of `size` tasks at `target`; returns its manifest."""
    the_plan = plan(size)
    env = {**os.environ, **IDENTITY}
    target.mkdir(parents=True)
    _git(target, env, "init", "-q", "-b", "main")
    (target / "README.md").write_text("A synthetic project for the taskfs benchmark.\n")
    _git(target, env, "add", "README.md")
    _git(target, env, "commit", "-q", "-m", "initial")
    submit.init(target, "bench")
    repo = Repository.open(target)
    _submit_all(repo, the_plan)
    _write_transitions(repo, the_plan)
    manifest = the_plan.manifest()
    _check(repo, the_plan)
    return manifest


def _git(root: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def _submit_all(repo: Repository, the_plan: Plan) -> None:
    for sender in SENDERS:
        mine = [t for t in the_plan.tasks if t.sender == sender]
        for chunk in _chunks(mine, BATCH):
            sources = [
                submit.Source(f"{t.id}.yaml", yamlio.dump(t.envelope()).encode()) for t in chunk
            ]
            submit.submit(repo, sources, sender)
    for task in the_plan.tasks:
        (task.head,) = repo.list_dir(task.id, STATUS)


def _write_transitions(repo: Repository, the_plan: Plan) -> None:
    batched = [t for t in the_plan.tasks if not t.via_api]
    rounds = max((len(t.steps) for t in the_plan.tasks), default=0)
    clock = BASE_TIME
    for step in range(rounds):
        due = [t for t in batched if len(t.steps) > step]
        for chunk in _chunks(due, BATCH):
            clock += timedelta(minutes=7)
            commit = repo.git.head() or ""
            with repo.writing() as writer:
                for offset, task in enumerate(chunk):
                    at = clock + timedelta(seconds=offset)
                    for rel, data in _step_files(repo, task, task.steps[step], commit, at):
                        writer.add(rel, data)
                writer.commit(f"bench: {len(chunk)} transitions, round {step + 1}", "bench")
    for task in the_plan.tasks:
        if task.via_api:
            for state in task.steps:
                agent = task.holder or task.recipient
                reason = "not needed after all" if state in ("failed", "rejected") else None
                transitions.transition(repo, task.id, state, agent, reason=reason)
                task.holder = task.holder or (agent if state == "working" else None)


def _step_files(
    repo: Repository, task: Planned, state: str, commit: str, at: datetime
) -> Iterator[tuple[str, bytes]]:
    """The status file of one transition, with the evidence and messages that go with it."""
    current = _state_of(task)
    agent = task.holder or task.recipient
    reason = {
        "rejected": "out of scope for this quarter",
        "failed": "the upstream API this needs was removed",
        "canceled": "superseded by a rewrite",
        "input_required": "which of the two formats should win?",
    }.get(state)
    parties = Parties(task.sender, task.recipient, task.holder)
    problems = check_transition(
        task.id, current, state, agent=agent, parties=parties, reason=reason
    )  # type: ignore[arg-type]
    assert not problems, [p.to_json() for p in problems]
    evidence = None
    if state == "completed":
        name, data = evidence_file(task, False, commit, at - timedelta(minutes=3))
        yield repo.task_rel(task.id, EVIDENCE, name), data
        name, data = evidence_file(task, True, commit, at - timedelta(seconds=30))
        evidence = name  # a completion names its evidence file as `complete` does: by name
        yield repo.task_rel(task.id, EVIDENCE, name), data
    if state == "working" and task.messages and task.holder is None:
        for k in range(task.messages):
            status = "update" if k else None
            name, data = message_file(task, status, f"progress note {k + 1}", at + timedelta(0, k))
            yield repo.task_rel(task.id, MESSAGES, name), data
    if state == "input_required":
        name, data = message_file(task, "needs_input", reason or "", at)
        yield repo.task_rel(task.id, MESSAGES, name), data
    seq = int(task.head.split("-", 1)[0]) + 1
    record = StatusRecord(
        task=task.id,
        state=state,  # type: ignore[arg-type]
        by=agent,
        at=format_time(at),
        prev=task.head,
        reason=reason,
        evidence=evidence,
    )
    name = status_name(seq, state)
    yield repo.task_rel(task.id, STATUS, name), submit.record_bytes(record.to_document())
    task.head = name
    if state == "working" and task.holder is None:
        task.holder = agent


def _state_of(task: Planned) -> str:
    return task.head.split("-", 1)[1].rsplit("-", 1)[0]


def _chunks(items: Sequence[Planned], n: int) -> Iterator[Sequence[Planned]]:
    for start in range(0, len(items), n):
        yield items[start : start + n]


def _check(repo: Repository, the_plan: Plan) -> None:
    shown = {t.id: t.state for t in listing.ls(repo)}
    wrong = [t.id for t in the_plan.tasks if shown.get(t.id) != t.final]
    if wrong:
        raise RuntimeError(f"{len(wrong)} tasks are not in their planned state: {wrong[:5]}")
    report = queries.validate_ledger(repo)
    if not report.ok:
        bad = [f.path for f in report.files if not f.ok][:5]
        raise RuntimeError(f"the generated ledger does not validate: {bad} {report.problems[:3]}")


@contextlib.contextmanager
def _without_fsync() -> Iterator[None]:
    """The writer flushes every ledger file to disk; a cache being built needs no such care
    (an interrupted build is thrown away) and 60,000 flushes take minutes. Same files."""
    saved = os.fsync
    os.fsync = lambda fd: None
    try:
        yield
    finally:
        os.fsync = saved


# -- the cache ---------------------------------------------------------------------------


def cache_key(size: int) -> str:
    return f"taskfs-{taskfs.__version__}-gen{GENERATOR_VERSION}-n{size}"


def cached_repo(cache: Path, size: int, log: Any = print) -> tuple[Path, dict[str, Any]]:
    """The repository of `size` tasks, built once per taskfs version and generator version."""

    def through_the_writer(repo: Path) -> dict[str, Any]:
        with _without_fsync():
            return build(repo, size)

    return cached(cache, cache_key(size), through_the_writer, f"{size} tasks", log)


def cached(
    cache: Path,
    key: str,
    build_into: Callable[[Path], dict[str, Any]],
    what: str,
    log: Any = print,
) -> tuple[Path, dict[str, Any]]:
    """The repository `build_into` writes (returning its manifest), built once under `key`:
    built beside its place and renamed into it, so that a killed build leaves no half."""
    home = cache / "repos" / key
    manifest_path = home / "manifest.json"
    if manifest_path.is_file():
        return home / "repo", json.loads(manifest_path.read_text())
    building = cache / "repos" / f"{key}.building-{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    log(f"building a repository of {what} (cached under {home}) ...")
    started = datetime.now(timezone.utc)
    manifest = build_into(building / "repo")
    manifest["buildSeconds"] = round((datetime.now(timezone.utc) - started).total_seconds(), 1)
    (building / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    shutil.rmtree(home, ignore_errors=True)
    os.rename(building, home)
    log(f"  built in {manifest['buildSeconds']} s")
    return home / "repo", manifest
