"""Ownership entries filed in the read model's store by the first segments of their places
(`taskfs.readmodel.ledger.Ledger.near`): a new task is checked only against the entries near
its own, and that must never lose an overlap."""

from __future__ import annotations

import itertools
from pathlib import Path

from taskfs.core import globs
from taskfs.store import index
from taskfs.store.repository import Repository
from tests.helpers import submit, taskfs, write_envelope

ENTRIES = [
    "src/**",
    "src/auth/login.py",
    "src/auth/*.py",
    "src/auth/",
    "src/billing/**",
    "src/*/models.py",
    "**/login.py",
    "*.md",
    "docs/guide.md",
    "docs/**/*.md",
    "tests/auth/test_*.py",
    "tests/**",
    "./src/auth/session.py",
    "src/a[u]th/token.py",
    "interface:auth.login",
    "interface:billing",
    "README.md",
]


def test_near_keeps_every_entry_that_overlaps_a_query(repo: Path) -> None:
    """Against the exact rule (`globs.overlap`) on every pair of a varied set of entries, each
    owned by a task of its own."""
    for n, raw in enumerate(ENTRIES):
        submit(repo, id=f"e{n}", filesAndInterfaces=[raw], dependsOn=[f"e{n - 1}"] if n else [])
    ledger = index.summaries(Repository.open(repo))
    records = {(f"e{n}", raw) for n, raw in enumerate(ENTRIES)}
    kept_some_out = False
    for query in ENTRIES:
        near = set(ledger.near([query]))
        assert near <= records
        kept_some_out |= len(near) < len(records)
        parsed = globs.parse_entry(query)
        for key, raw in records:
            if globs.overlap(parsed, globs.parse_entry(raw)) is not None:
                assert (key, raw) in near, (query, raw)
    assert kept_some_out  # the filter does filter
    for a, b in itertools.combinations(ENTRIES, 2):  # several queries at once: the union
        assert set(ledger.near([a, b])) >= set(ledger.near([a])) | set(ledger.near([b]))


def test_new_refuses_every_overlap_with_an_open_task_through_the_stored_entries(
    repo: Path,
) -> None:
    submit(repo, id="login", filesAndInterfaces=["src/auth/login.py"])
    submit(repo, id="docs", filesAndInterfaces=["docs/**"])
    for n in range(20):  # entries far from the queries, which the filter leaves out
        submit(repo, id=f"far-{n}", filesAndInterfaces=[f"lib/m{n}/**"])
    for entries, other in (
        (["src/**"], "login"),  # the open entry lies below the new one
        (["src/auth/login.py"], "login"),  # the same path
        (["**/login.py"], "login"),  # no literal prefix: meets every entry
        (["docs/guide.md"], "docs"),  # the open entry lies above the new one
        (["src/*/login.py"], "login"),  # a place of one segment meets those of two
    ):
        path = write_envelope(repo / "new.yaml", id="candidate", filesAndInterfaces=entries)
        refused = taskfs("new", str(path), "--json")
        assert set(refused.codes) == {"ownership_conflict"}, (entries, refused.stdout)
        assert other in [e["other"] for e in refused.json["errors"]]
    path = write_envelope(repo / "new.yaml", id="candidate", filesAndInterfaces=["src/other/**"])
    assert taskfs("new", str(path), "--json").code == 0


def test_a_batch_is_checked_against_itself_and_the_ledger(repo: Path) -> None:
    """A thousand envelopes are checked against one index that grows with the batch: the
    last one still meets the first."""
    submit(repo, id="open", filesAndInterfaces=["lib/open/**"])
    paths = [
        write_envelope(repo.parent / f"b{n}.yaml", id=f"b{n}", filesAndInterfaces=[f"src/b{n}/**"])
        for n in range(30)
    ]
    paths.append(
        write_envelope(repo.parent / "late.yaml", id="late", filesAndInterfaces=["src/b0/x"])
    )
    paths.append(write_envelope(repo.parent / "old.yaml", id="old", filesAndInterfaces=["lib/**"]))
    refused = taskfs("new", *map(str, paths), "--json")
    pairs = {(e["id"], e["other"]) for e in refused.json["errors"]}
    assert pairs == {("late", "b0"), ("old", "open")}, refused.stdout
    assert taskfs("new", *map(str, paths[:30]), "--json").code == 0
