"""The read model's store answers what the files HEAD holds say, whatever happened to them in
between (issue 31).

Each test changes a real repository the way users and agents do (taskfs commands, git, hands)
and compares the stored answer with one computed from nothing (the store deleted).
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest

from taskfs.core.readiness import claimable
from taskfs.readmodel import db, listing
from taskfs.readmodel.db import FLAGS, ID, READY
from taskfs.readmodel.projection import Summary
from taskfs.store import index, readmodel_store
from taskfs.store.repository import Repository
from tests.helpers import check, git, submit, taskfs, write_envelope


def fresh(repo: Path) -> dict[str, Summary]:
    store = Repository.open(repo)
    readmodel_store.close()
    Path(readmodel_store.store_path(store)).unlink(missing_ok=True)
    return dict(index.summaries(store).items())


def cached(repo: Path) -> dict[str, Summary]:
    return dict(index.summaries(Repository.open(repo)).items())


def listed(repo: Path) -> str:
    assert taskfs("ls", "--json").code == 0
    return taskfs("ls", "--json").stdout


def keys(repo: Path) -> list[tuple[str, bytes | None]]:
    """Each row's key of the git objects it was read from, as the store holds it."""
    view = index.summaries(Repository.open(repo)).view
    return [(e[ID], e[5]) for e in view.entries()]


def stored_ready(repo: Path) -> list[str]:
    view = index.summaries(Repository.open(repo)).view
    return [e[ID] for e in view.entries() if e[FLAGS] & READY]


FIELDS = {"state": "state", "to": "to", "context": "contextID"}


def answer(command: str, options: dict[str, str], agent: str | None) -> str | None:
    """The fast path's answer of the question, from the store alone."""
    filters = tuple((FIELDS[name], value) for name, value in options.items())
    if command == "ls":
        filters += (("archived", False),)
    return listing.answer(command, filters, agent)


def test_the_store_follows_transitions_new_tasks_and_git(repo: Path) -> None:
    first = submit(repo, id="first", filesAndInterfaces=["src/a/**"])
    second = submit(repo, id="second", filesAndInterfaces=["src/a/x.py"], dependsOn=[first])
    cached(repo)
    assert taskfs("claim", first, "--agent", "builder").code == 0
    assert cached(repo) == fresh(repo)
    assert cached(repo)[second].overlaps == (first,)
    git(repo, "reset", "-q", "--hard", "HEAD~1")  # the claim's commit and file go away
    assert cached(repo) == fresh(repo)
    assert cached(repo)[first].state == "submitted"


def test_a_status_file_edited_in_place_is_seen_by_writers(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    cached(repo)
    newest = sorted((repo / "tasks" / task / "status").iterdir())[-1]
    stat = newest.stat()
    # Same size, same times: nothing but the bytes tell.
    newest.write_text(newest.read_text().replace("state: working", "state: wurking"))
    os.utime(newest, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    result = taskfs("move", task, "input_required", "--agent", "builder", "--json")
    assert result.code == 1
    # No commit holds those bytes: nothing is built on them (issue 16).
    assert result.codes == ["ledger_file_uncommitted"]


def test_a_hand_edited_envelope_is_seen_once_committed(repo: Path) -> None:
    task = submit(repo)
    before = listed(repo)
    envelope = repo / "tasks" / task / "envelope.yaml"
    envelope.write_text(envelope.read_text().replace("auth-hardening", "other-context"))
    # Listings say what HEAD holds (issue 16: decisions rest on committed files only) ...
    assert listed(repo) == before
    assert cached(repo) == fresh(repo)
    # ... and follow HEAD when the edit is committed.
    git(repo, "commit", "-q", "-am", "edited by hand")
    assert listed(repo) != before
    assert cached(repo) == fresh(repo)


QUESTIONS = [
    ("ls", {}, None),
    ("ls", {"state": "working"}, None),
    ("ls", {"to": "agent0"}, None),
    ("ls", {"context": "auth-hardening", "state": "submitted"}, None),
    ("ready", {}, None),
    ("ready", {}, "agent0"),
    ("ready", {}, "nobody"),
]


def as_args(command: str, options: dict[str, str], agent: str | None) -> list[str]:
    extra = [part for name, value in options.items() for part in (f"--{name}", value)]
    return [command, "--json", *extra, *(["--agent", agent] if agent else [])]


def plan(repo: Path) -> None:
    for n in range(4):
        submit(repo, id=f"t{n}", filesAndInterfaces=[f"src/{n}.py"], to=f"agent{n % 2}")
    submit(repo, id="later", dependsOn=["t1"], to=None)
    assert taskfs("claim", "t1", "--agent", "agent1").code == 0


@pytest.mark.parametrize(("command", "options", "agent"), QUESTIONS)
def test_the_stored_answers_are_exactly_what_the_full_path_answers(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    options: dict[str, str],
    agent: str | None,
) -> None:
    plan(repo)
    monkeypatch.chdir(repo)
    cached(repo)
    ready_made = answer(command, dict(options), agent)
    assert ready_made is not None  # the store's answer is in use
    fresh(repo)  # no store: the full path answers (through click), and builds it again
    answered = taskfs("--lang", "en", *as_args(command, options, agent)).stdout
    assert answered == ready_made + "\n"


def test_a_moved_tasks_folder_is_never_answered_from_the_old_one(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan(repo)
    monkeypatch.chdir(repo)
    listed(repo)
    settings = repo / ".taskfs" / "config.yaml"
    settings.write_text(settings.read_text().replace("tasksDir: tasks", "tasksDir: elsewhere"))
    assert answer("ls", {}, None) is None
    result = taskfs("ls", "--json")
    assert result.json["tasks"] == [], result.stdout


@pytest.mark.parametrize("damage", [b"", b"\x00garbage", b"SQLite format 3\x00" + b"\xff" * 200])
def test_a_damaged_store_is_rebuilt(repo: Path, damage: bytes) -> None:
    submit(repo, id="one")
    answer = listed(repo)
    readmodel_store.close()
    Path(readmodel_store.store_path(Repository.open(repo))).write_bytes(damage)
    assert listed(repo) == answer
    assert cached(repo) == fresh(repo)


def test_a_commit_of_code_moves_head_without_reading_a_task(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan(repo)
    before = listed(repo)
    (repo / "code.py").write_text("x = 1\n")
    git(repo, "add", "code.py")
    git(repo, "commit", "-q", "-m", "code")
    read: list[str] = []
    real = index.key
    monkeypatch.setattr(index, "key", lambda r, t: read.append(t) or real(r, t))
    assert listed(repo) == before
    assert read == []
    monkeypatch.chdir(repo)
    assert answer("ls", {}, None) == before.rstrip("\n")


def test_a_write_reads_the_rows_it_needs(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A claim reads its task and what its gates ask (its dependencies, its rivals), not the
    ledger: the rows it loads do not grow with the ledger."""
    for n in range(40):
        submit(repo, id=f"t{n}", filesAndInterfaces=[f"src/{n}/**"])
    submit(repo, id="rival", filesAndInterfaces=["src/0/x.py"], dependsOn=["t0"])
    listed(repo)
    loaded: list[str] = []
    real = db.read_rows

    def counted(conn: object, ids: list[str]) -> dict[str, bytes]:
        loaded.extend(ids)
        return real(conn, ids)  # type: ignore[arg-type]

    monkeypatch.setattr(db, "read_rows", counted)
    assert taskfs("claim", "t0", "--agent", "builder").code == 0
    assert 0 < len(set(loaded)) <= 10, sorted(set(loaded))


def _scenario(repo: Path, seed: int) -> None:
    """A random run of what agents do: new tasks (some depending on others, some owning what
    others own), claims, moves, checks and completions, refusals."""
    rng = random.Random(seed)
    made: list[str] = []
    for step in range(28):
        choice = rng.random()
        if choice < 0.45 or not made:
            task_id = f"s{step}"
            deps = rng.sample(made, min(len(made), rng.choice((0, 0, 1, 2))))
            if rng.random() < 0.15:
                deps.append(f"later{step}")  # a task that does not exist yet
            entry = f"src/{rng.randrange(6)}/{rng.choice(('**', 'a.py', '*.py'))}"
            path = write_envelope(
                repo.parent / f"{task_id}.yaml",
                id=task_id,
                filesAndInterfaces=[entry],
                dependsOn=deps,
                acceptanceCheck={"passFailCommand": "true", "endToEndVerification": "x"},
                to=rng.choice(("builder", "other")),
            )
            if taskfs("new", str(path), "--agent", "planner").code == 0:
                made.append(task_id)
            continue
        task_id = rng.choice(made)
        agent = "builder" if rng.random() < 0.8 else "other"
        action = rng.random()
        if action < 0.4:
            taskfs("claim", task_id, "--agent", agent)
        elif action < 0.6:
            check(task_id)
            taskfs("complete", task_id, "--agent", agent)
        elif action < 0.75:
            taskfs("refuse", task_id, "--agent", agent, "--reason", "no")
        else:
            taskfs("move", task_id, "failed", "--agent", agent, "--reason", "broke")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_what_writers_stored_agrees_with_a_store_built_from_nothing(repo: Path, seed: int) -> None:
    """Rows, overlaps and `ready` kept row by row by every writer equal what a rebuild says,
    and `ready` equals the claim's rules asked of every task."""
    _scenario(repo, seed)
    kept = cached(repo)
    kept_keys = keys(repo)
    kept_ready = stored_ready(repo)
    kept_answers = [taskfs(*as_args(c, o, a)).stdout for c, o, a in QUESTIONS]
    every = fresh(repo)
    assert kept == every
    assert kept_keys == keys(repo)  # a writer's key is the one HEAD's objects give
    assert kept_ready == stored_ready(repo)
    assert kept_ready == sorted(t.id for t in claimable(every))
    assert kept_answers == [taskfs(*as_args(c, o, a)).stdout for c, o, a in QUESTIONS]


def test_a_task_folder_taken_away_by_hand_is_not_listed(repo: Path) -> None:
    plan(repo)
    before = listed(repo)
    shutil.rmtree(repo / "tasks" / "t1")
    after = taskfs("ls", "--json").json["tasks"]
    assert "t1" not in [t["id"] for t in after]
    assert "later" not in [t["id"] for t in taskfs("ready", "--json").json["tasks"]]
    git(repo, "checkout", "-q", "--", "tasks/t1")
    assert listed(repo) == before
