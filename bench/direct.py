"""The benchmark's repositories written directly: the same plan and the same files as
generate.py, committed in ONE `git add -A` + `git commit` instead of through taskfs's writer.

generate.py submits envelopes through `submit.submit` and commits a thousand transitions at a
time; at 50,000 tasks that took over half an hour on a loaded machine (it flushes and commits
about 200,000 files in batches and re-checks the ledger as it goes). A ledger is only its
files and the commits that hold them, so this writes exactly the files generate.py writes:

- each envelope as `new` writes it (`submit.envelope_bytes`: the schema comment, then the
  envelope's document) and its `0001-submitted-*` status (`StatusRecord`, by the sender);
- every later transition, with its evidence and messages, through generate.py's own
  `_step_files` (each edge checked by `check_transition`);

and commits them after one `taskfs init` commit. What differs from generate.py's ledger: the
history (two commits instead of one per thousand files, so `log`-based views have less to
read), the four tasks generate.py moves through `transitions.transition` are written like the
others, and the submitted timestamps come from the plan's clock instead of the wall clock.
`build()` checks the result as generate.py does (`ls` shows every planned state; `validate`
is clean), up to `CHECK_UP_TO` tasks; `bench/paired.py --builder direct` (the default) uses it.
"""

from __future__ import annotations

import os
import subprocess
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import generate
from generate import BASE_TIME, IDENTITY, Planned

from taskfs.api.tasks import submit
from taskfs.core.envelope import validate_envelope
from taskfs.core.layout import ENVELOPE, STATUS, format_time, status_name
from taskfs.core.records import StatusRecord
from taskfs.store.repository import Repository

DIRECT_VERSION = 1
# Past this size the cached build skips the check (`ls` and `validate` of every file: most of
# a 50,000-task build's time); the same code is checked at every smaller size.
CHECK_UP_TO = 10_000


def build(target: Path, size: int, *, check: bool = True) -> dict[str, Any]:
    """Write the planned repository of `size` tasks at `target`; returns its manifest."""
    the_plan = generate.plan(size)
    env, repo, commit = _start(target)
    _write_tasks(target, repo, the_plan.tasks, commit, BASE_TIME)
    _git(target, env, "-c", "gc.auto=0", "add", "-A", "--", repo.tasks_rel)
    _git(target, env, "-c", "gc.auto=0", "commit", "-q", "-m", f"bench: {size} tasks written")
    # Packed now, not by a `gc --auto` git would start in the background after this commit
    # (it would repack the cached repository while the harness copies it).
    _git(target, env, "gc", "-q")
    manifest = the_plan.manifest()
    manifest["builder"] = "direct"
    if check:
        generate._check(repo, the_plan)
    return manifest


# The archived part of `build_archived`'s repository lives a year and more before the plan's
# clock, so that `taskfs archive --older-than ARCHIVED_AGE` takes it and nothing else.
OLD_TIME = BASE_TIME - timedelta(days=500)
ARCHIVED_AGE = "400d"
# Terminal paths of the archived part, in roughly the plan's proportions of finished work.
FINISHED = (
    (12, ("working", "completed")),
    (6, ("working", "input_required", "working", "completed")),
    (3, ("rejected",)),
    (2, ("working", "failed")),
    (2, ("canceled",)),
)


def build_archived(target: Path, live: int, archived: int) -> dict[str, Any]:
    """The repository of `live` tasks `build` writes (the same plan, the same ids), with
    `archived` finished tasks more: written with them, then taken out of the working tree by
    `taskfs archive` (one commit, as a user would run it). Its manifest is the live plan's."""
    import random

    from taskfs.api.tasks import archive

    the_plan = generate.plan(live)
    rng = random.Random(31 * archived + live)
    old = generate.plan(archived, seed=77).tasks
    taken = {t.id for t in the_plan.tasks}
    weights = [w for w, _ in FINISHED]
    for n, task in enumerate(old):
        task.id = task.id if task.id not in taken else f"{task.id}-a"
        task.index = 1_000_000 + n  # its files and entries: none of the live tasks'
        task.steps = rng.choices([p for _, p in FINISHED], weights)[0]
        task.depends_on = ()
    env, repo, commit = _start(target)
    _write_tasks(target, repo, old, commit, OLD_TIME)
    _write_tasks(target, repo, the_plan.tasks, commit, BASE_TIME)
    _git(target, env, "-c", "gc.auto=0", "add", "-A", "--", repo.tasks_rel)
    _git(target, env, "-c", "gc.auto=0", "commit", "-q", "-m", f"bench: {live + archived} tasks")
    done = archive.archive(Repository.open(target), None, ARCHIVED_AGE)
    assert len(done.ids) == archived, (len(done.ids), archived)
    _git(target, env, "gc", "-q")
    manifest = the_plan.manifest()
    manifest["builder"] = "direct, archived"
    manifest["archived"] = archived
    return manifest


def _start(target: Path) -> tuple[dict[str, str], Repository, str]:
    """A new repository at `target` with one commit and taskfs initialised."""
    env = {**os.environ, **IDENTITY}
    target.mkdir(parents=True)
    _git(target, env, "init", "-q", "-b", "main")
    (target / "README.md").write_text("A synthetic project for the taskfs benchmark.\n")
    _git(target, env, "add", "README.md")
    _git(target, env, "commit", "-q", "-m", "initial")
    submit.init(target, "bench")
    repo = Repository.open(target)
    return env, repo, repo.git.head() or ""


def _write_tasks(
    target: Path, repo: Repository, tasks: list[Planned], commit: str, base: datetime
) -> None:
    made: set[Path] = set()
    for task in tasks:
        offset = task.index % 1_000_000
        for state in ("submitted", *task.steps):
            clock = base + timedelta(minutes=offset)
            files = _submitted(repo, task, clock) if state == "submitted" else None
            if files is None:
                clock += timedelta(seconds=len(task.head))
                files = list(generate._step_files(repo, task, state, commit, _later(task, clock)))
            for rel, data in files:
                path = target / rel
                if path.parent not in made:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    made.add(path.parent)
                path.write_bytes(data)


def cached_archived(
    cache: Path, live: int, archived: int, log: Any = print
) -> tuple[Path, dict[str, Any]]:
    """`build_archived`'s repository, built once per version."""
    return generate.cached(
        cache,
        f"{cache_key(live)}-archived{archived}",
        lambda repo: build_archived(repo, live, archived),
        f"{live} tasks and {archived} archived ones",
        log,
    )


def _later(task: Planned, clock: datetime) -> datetime:
    """Each transition of a task a few minutes after the one before (the head's sequence)."""
    seq = int(task.head.split("-", 1)[0])
    return clock + timedelta(minutes=5 * seq)


def _submitted(repo: Repository, task: Planned, at: datetime) -> list[tuple[str, bytes]]:
    envelope, problems = validate_envelope(task.envelope())
    assert envelope is not None, problems
    record = StatusRecord(task=task.id, state="submitted", by=task.sender, at=format_time(at))
    name = status_name(1, "submitted")
    task.head = name
    return [
        (repo.task_rel(task.id, ENVELOPE), submit.envelope_bytes(repo, envelope)),
        (repo.task_rel(task.id, STATUS, name), submit.record_bytes(record.to_document())),
    ]


def _git(root: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def cache_key(size: int) -> str:
    return f"{generate.cache_key(size)}-direct{DIRECT_VERSION}"


def cached_repo(cache: Path, size: int, log: Any = print) -> tuple[Path, dict[str, Any]]:
    """The directly written repository of `size` tasks, built once per version."""
    return generate.cached(
        cache,
        cache_key(size),
        lambda repo: build(repo, size, check=size <= CHECK_UP_TO),
        f"{size} tasks, written directly",
        log,
    )
