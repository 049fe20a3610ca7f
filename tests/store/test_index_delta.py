"""A write stores a small delta, not every row again (issue 19), and the listings read after
it say exactly what the full reader says.

The truth is always the listing computed with no cache at all.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from taskfs.readmodel import prepared
from taskfs.store import index
from taskfs.store.repository import Repository
from tests.cli.test_evidence import check, make_task
from tests.helpers import submit, taskfs


@pytest.fixture(autouse=True)
def _no_racy_margin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TASKFS_RACY_MARGIN_MS", "0")


LISTINGS = (
    ("ls", {}, None),
    ("ls", {"--state": "working"}, None),
    ("ready", {}, None),
    ("ready", {}, "builder"),
)


def _truth(repo: Path, command: str, options: dict[str, str], agent: str | None) -> str:
    args = [command, "--json", *(x for kv in options.items() for x in kv)]
    if agent:
        args += ["--agent", agent]
    cache = repo / ".git" / "taskfs" / "cache"
    cache.rename(repo.parent / "kept")  # the same files come back: their identities hold
    try:
        return taskfs(*args).stdout.rstrip("\n")
    finally:
        shutil.rmtree(cache)
        (repo.parent / "kept").rename(cache)


def _all_agree(repo: Path) -> None:
    for command, options, agent in LISTINGS:
        ready_made = prepared.answer(command, dict(options), agent)
        assert ready_made is not None, (command, options, agent)
        assert ready_made == _truth(repo, command, options, agent), (command, options, agent)


def _identity(path: str) -> tuple[int, int]:
    st = Path(path).stat()
    return st.st_ino, st.st_mtime_ns


def test_a_claim_writes_a_delta_and_the_listings_agree(repo: Path) -> None:
    first = make_task(repo, "true", claim=False, filesAndInterfaces=["src/a/**"])
    second = submit(repo, id="second", filesAndInterfaces=["src/b/**"], dependsOn=[first])
    third = submit(repo, id="third", filesAndInterfaces=["src/c/**"])
    assert taskfs("ls", "--json").code == 0  # settled: the whole files are stored
    store = Repository.open(repo)
    whole = (_identity(index.cache_path(store)), _identity(index.prepared_path(store)))
    assert taskfs("claim", first, "--agent", "builder").code == 0
    # The rows and the prepared answers were not stored again: a delta beside them says it.
    assert (_identity(index.cache_path(store)), _identity(index.prepared_path(store))) == whole
    assert Path(prepared.delta_path(index.prepared_path(store))).is_file()
    _all_agree(repo)
    assert index.summaries(store)[first].state == "working"
    whole = (_identity(index.cache_path(store)), _identity(index.prepared_path(store)))
    # Two writes in a row gather in one delta; a completion makes the dependent ready.
    assert taskfs("claim", third, "--agent", "builder").code == 0
    assert check(first).code == 0
    assert taskfs("complete", first, "--agent", "builder").code == 0
    assert (_identity(index.cache_path(store)), _identity(index.prepared_path(store))) == whole
    _all_agree(repo)
    ready = prepared.answer("ready", {}, None)
    assert ready is not None
    assert second in ready
    assert third not in ready


def test_a_delta_of_other_rows_is_ignored(repo: Path) -> None:
    task = submit(repo, id="first", filesAndInterfaces=["src/a/**"])
    assert taskfs("ls", "--json").code == 0
    assert taskfs("claim", task, "--agent", "builder").code == 0
    store = Repository.open(repo)
    delta = Path(prepared.delta_path(index.prepared_path(store)))
    kept = delta.read_bytes()
    # A listing that finds a file changed stores everything again under a new token (here a
    # task that came with no delta: `new` writes one, so it is taken away) ...
    submit(repo, id="second", filesAndInterfaces=["src/b/**"])
    Path(index.cache_path(store) + ".delta").unlink()
    delta.unlink()
    assert taskfs("ls", "--json").code == 0
    # ... and the old delta, put back, belongs to nothing: it changes no answer.
    delta.write_bytes(kept)
    _all_agree(repo)
    assert index.summaries(store) == index.summaries(store)


def test_a_young_task_of_a_delta_settles_in_the_delta(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import marshal
    import time

    task = submit(repo, id="first", filesAndInterfaces=["src/a/**"])
    monkeypatch.setenv("TASKFS_RACY_MARGIN_MS", "300")
    time.sleep(0.4)  # the envelope and the settings grow old enough to be trusted by key
    assert taskfs("ls", "--json").code == 0
    assert taskfs("ls", "--json").code == 0
    assert taskfs("claim", task, "--agent", "builder").code == 0
    store = Repository.open(repo)
    whole = _identity(index.prepared_path(store))
    delta = Path(prepared.delta_path(index.prepared_path(store)))
    assert prepared.answer("ls", {}, None) is not None  # young: checked by its bytes
    time.sleep(0.4)
    assert prepared.answer("ls", {}, None) is not None  # old enough: its age is stored ...
    stored = prepared.Delta(*marshal.loads(delta.read_bytes()))
    _key, age, _fingerprint, _shown = stored.changed[task]
    assert age > 300_000_000
    assert _identity(index.prepared_path(store)) == whole  # ... in the delta alone
    monkeypatch.setenv("TASKFS_RACY_MARGIN_MS", "0")
    _all_agree(repo)


def test_new_adds_its_rows_to_the_rows_it_read(repo: Path) -> None:
    first = submit(repo, id="first", filesAndInterfaces=["src/a/**"])
    assert taskfs("claim", first, "--agent", "builder").code == 0
    second = submit(
        repo, id="second", filesAndInterfaces=["src/b/**", "src/a/x.py"], dependsOn=[first]
    )
    store = Repository.open(repo)
    kept = index.summaries(store)  # what `new` stored, without reading any file again
    assert kept[second].overlaps == (first,)
    assert kept[first].overlaps == (second,)
    shutil.rmtree(repo / ".git" / "taskfs" / "cache")
    assert index.summaries(store) == kept
    _all_agree(repo)


def test_new_stores_its_tasks_as_a_delta_and_the_listings_agree(repo: Path) -> None:
    first = submit(repo, id="first", filesAndInterfaces=["src/a/**"])
    assert taskfs("ls", "--json").code == 0  # settled: the whole files are stored
    store = Repository.open(repo)
    whole = (_identity(index.cache_path(store)), _identity(index.prepared_path(store)))
    # A new task that overlaps the first changes both rows; one that depends on it is not
    # ready; one inserted before the others in the ids' order lands in its place.
    second = submit(repo, id="second", filesAndInterfaces=["src/a/x.py"], dependsOn=[first])
    assert (_identity(index.cache_path(store)), _identity(index.prepared_path(store))) == whole
    _all_agree(repo)
    assert taskfs("claim", first, "--agent", "builder").code == 0
    early = submit(repo, id="aaa-early", filesAndInterfaces=["src/z/**"])
    assert (_identity(index.cache_path(store)), _identity(index.prepared_path(store))) == whole
    _all_agree(repo)
    ls = prepared.answer("ls", {}, None)
    assert ls is not None
    assert ls.index(f'"{early}"') < ls.index(f'"{first}"') < ls.index(f'"{second}"')
    ready = prepared.answer("ready", {}, None)
    assert ready is not None
    assert early in ready
    assert second not in ready
    kept = index.summaries(store)
    assert kept[first].overlaps == (second,)
    assert kept[second].overlaps == (first,)
    shutil.rmtree(repo / ".git" / "taskfs" / "cache")
    assert index.summaries(store) == kept


def test_a_task_folder_dropped_beside_a_new_one_is_listed(repo: Path) -> None:
    """The tasks folder's identity stored with an insertion is the one taken after the new
    folders were made: a folder someone else made meanwhile must not be hidden by it."""
    submit(repo, id="first", filesAndInterfaces=["src/a/**"])
    assert taskfs("ls", "--json").code == 0
    submit(repo, id="second", filesAndInterfaces=["src/b/**"])
    dropped = repo / "tasks" / "dropped"
    (dropped / "status").mkdir(parents=True)
    shutil.copy(repo / "tasks" / "first" / "envelope.yaml", dropped / "envelope.yaml")
    listing = taskfs("ls", "--json")
    assert listing.code == 0
    assert listing.stdout.rstrip("\n") == _truth(repo, "ls", {}, None)
