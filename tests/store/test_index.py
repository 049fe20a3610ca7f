"""The ledger cache answers what the files say, whatever happened to them in between.

Each test changes a real repository the way users and agents do (taskfs commands, git, hands)
and compares the cached answer with a fresh one computed without the cache.
"""

from __future__ import annotations

import marshal
import os
import time
from pathlib import Path

import pytest

from taskfs.readmodel import prepared
from taskfs.readmodel.projection import Summary
from taskfs.store import index
from taskfs.store.repository import Repository
from tests.helpers import git, submit, taskfs


@pytest.fixture(autouse=True)
def _no_racy_margin(monkeypatch: pytest.MonkeyPatch) -> None:
    # Everything in a test is younger than the default two-second margin: without this, every
    # row would be re-checked and the cached path never taken.
    monkeypatch.setenv("TASKFS_RACY_MARGIN_MS", "0")


def fresh(repo: Path) -> dict[str, Summary]:
    store = Repository.open(repo)
    for path in (index.cache_path(store), index.prepared_path(store)):
        Path(path).unlink(missing_ok=True)
    return index.summaries(store)


def cached(repo: Path) -> dict[str, Summary]:
    return index.summaries(Repository.open(repo))


def _stored(path: Path) -> prepared.Answers:
    return prepared.Answers(*marshal.loads(path.read_bytes()))


def listed(repo: Path) -> str:
    assert taskfs("ls", "--json").code == 0
    return taskfs("ls", "--json").stdout


def test_the_cache_follows_transitions_new_tasks_and_git(repo: Path) -> None:
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
    # Same size, same times: no key changes. Only the bytes tell.
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
    # ... and follow HEAD when the edit is committed, though the file did not change.
    git(repo, "commit", "-q", "-am", "edited by hand")
    assert listed(repo) != before
    assert cached(repo) == fresh(repo)


QUESTIONS = [
    ("ls", {}, None),
    ("ls", {"--state": "working"}, None),
    ("ls", {"--to": "agent0"}, None),
    ("ls", {"--context": "auth-hardening", "--state": "submitted"}, None),
    ("ready", {}, None),
    ("ready", {}, "agent0"),
    ("ready", {}, "nobody"),
]


def as_args(command: str, options: dict[str, str], agent: str | None) -> list[str]:
    extra = [part for option in options.items() for part in option]
    return [command, "--json", *extra, *(["--agent", agent] if agent else [])]


def plan(repo: Path) -> None:
    for n in range(4):
        submit(repo, id=f"t{n}", filesAndInterfaces=[f"src/{n}.py"], to=f"agent{n % 2}")
    submit(repo, id="later", dependsOn=["t1"], to=None)
    assert taskfs("claim", "t1", "--agent", "agent1").code == 0


@pytest.mark.parametrize(("command", "options", "agent"), QUESTIONS)
def test_the_prepared_answers_are_exactly_what_the_full_path_answers(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    options: dict[str, str],
    agent: str | None,
) -> None:
    plan(repo)
    monkeypatch.chdir(repo)
    cached(repo)
    ready_made = prepared.answer(command, dict(options), agent)
    assert ready_made is not None  # the prepared answer is in use
    fresh(repo)  # no cache, no prepared answers: the full path answers, and writes them again
    Path(index.prepared_path(Repository.open(repo))).unlink()
    assert taskfs(*as_args(command, options, agent)).stdout == ready_made + "\n"


def test_young_files_are_checked_by_their_bytes_until_they_are_old_enough(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan(repo)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("TASKFS_RACY_MARGIN_MS", "60000")  # every file is young
    before = listed(repo)
    assert prepared.answer("ls", {}, None) == before.rstrip("\n")
    status = sorted((repo / "tasks" / "t1" / "status").iterdir())[-1]
    stat = status.stat()
    # Same size, same times, same folder: no key changes (the same clock tick). Only bytes tell.
    status.write_text(status.read_text().replace("state: working", "state: wurking"))
    os.utime(status, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert prepared.answer("ls", {}, None) is None
    assert listed(repo) == before  # the bytes no commit holds are not the ledger (issue 16)
    assert cached(repo) == fresh(repo)


def test_young_files_settle_and_are_then_trusted_by_their_keys(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan(repo)
    for name in ("settings", "folder"):  # task ids that look like the other identities' names
        submit(repo, id=name, filesAndInterfaces=[f"src/{name}.py"])
    monkeypatch.chdir(repo)
    monkeypatch.setenv("TASKFS_RACY_MARGIN_MS", "300")
    answer = listed(repo).rstrip("\n")
    path = Path(index.prepared_path(Repository.open(repo)))
    assert _stored(path).young  # just written: young, checked by their bytes
    time.sleep(0.4)
    assert prepared.answer("ls", {}, None) == answer
    assert _stored(path).young == {}  # old enough now: their keys are trusted
    assert prepared.answer("ls", {}, None) == answer


def test_a_moved_tasks_folder_is_never_answered_from_the_old_one(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan(repo)
    monkeypatch.chdir(repo)
    listed(repo)
    settings = repo / ".taskfs" / "config.yaml"
    settings.write_text(settings.read_text().replace("tasksDir: tasks", "tasksDir: elsewhere"))
    assert prepared.answer("ls", {}, None) is None
    result = taskfs("ls", "--json")
    assert result.json["tasks"] == [], result.stdout


@pytest.mark.parametrize("damage", [b"", b"\x00garbage", b"\xe3\x03\x00\x00"])
def test_a_damaged_cache_or_listing_is_rebuilt(repo: Path, damage: bytes) -> None:
    submit(repo, id="one")
    answer = listed(repo)
    store = Repository.open(repo)
    for path in (index.cache_path(store), index.prepared_path(store)):
        Path(path).write_bytes(damage)
    assert listed(repo) == answer
    assert cached(repo) == fresh(repo)
