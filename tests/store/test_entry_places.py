"""The stored places of ownership entries (`taskfs.store.entry_places`): a new task is checked
only against the entries near its own, and that must never lose an overlap."""

from __future__ import annotations

import itertools
import marshal
from pathlib import Path

from taskfs.core import globs
from taskfs.store.entry_places import SUFFIX, Places
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


def test_nearby_keeps_every_entry_that_overlaps_a_query(tmp_path: Path) -> None:
    """Against the exact rule (`globs.overlap`) on every pair of a varied set of entries."""
    places = Places(str(tmp_path / "ledger"))
    records = [(i, raw) for i, raw in enumerate(ENTRIES)]
    kept_some_out = False
    for query in ENTRIES:
        near = places.nearby(records, [query])
        kept_some_out |= len(near) < len(records)
        parsed = globs.parse_entry(query)
        for key, raw in records:
            if globs.overlap(parsed, globs.parse_entry(raw)) is not None:
                assert (key, raw) in near, (query, raw)
    assert kept_some_out  # the filter does filter
    for a, b in itertools.combinations(ENTRIES, 2):  # several queries at once: the union
        near = places.nearby(records, [a, b])
        assert set(near) >= set(places.nearby(records, [a])) | set(places.nearby(records, [b]))


def test_nearby_answers_the_same_from_stored_places_as_from_fresh_ones(tmp_path: Path) -> None:
    """The places filed by first segment are the stored ones and those learnt since, in any
    order: a process that read the file answers as one that placed everything itself."""
    cache = str(tmp_path / "ledger")
    records = [(i, raw) for i, raw in enumerate(ENTRIES)]
    learnt = Places(cache)
    learnt.nearby(records[: len(records) // 2], ENTRIES[:3])  # half placed, then filed
    for query in ENTRIES:
        learnt.nearby(records, [query])
    learnt.save()
    assert Path(cache + SUFFIX).is_file()
    for query in ENTRIES:
        fresh = Places(str(tmp_path / "elsewhere")).nearby(records, [query])
        assert Places(cache).nearby(records, [query]) == fresh == learnt.nearby(records, [query])


def test_places_are_stored_and_a_damaged_file_is_rebuilt(tmp_path: Path) -> None:
    cache = str(tmp_path / "ledger")
    places = Places(cache)
    assert places.of("src/auth/*.py") == (("src", "auth"), False)
    assert places.of("docs/guide.md") == (("docs", "guide.md"), True)
    places.save()
    stored = Path(cache + SUFFIX)
    assert stored.is_file()
    assert Places(cache).of("src/auth/*.py") == (("src", "auth"), False)
    stored.write_bytes(b"\x00not marshal")
    assert Places(cache).of("src/auth/*.py") == (("src", "auth"), False)
    # Marshalled, but not places: a segment list that is not a tuple of strings.
    stored.write_bytes(marshal.dumps((1, {"src/auth/*.py": (["elsewhere"], False)})))
    assert Places(cache).of("src/auth/*.py") == (("src", "auth"), False)


def test_new_refuses_every_overlap_with_an_open_task_through_the_stored_places(
    repo: Path,
) -> None:
    submit(repo, id="login", filesAndInterfaces=["src/auth/login.py"])
    submit(repo, id="docs", filesAndInterfaces=["docs/**"])
    for n in range(20):  # entries far from the queries, which the filter leaves out
        submit(repo, id=f"far-{n}", filesAndInterfaces=[f"lib/m{n}/**"])
    places = next((repo / ".git").rglob(f"*{SUFFIX}"))
    for entries, other in (
        (["src/**"], "login"),  # the open entry lies below the new one
        (["src/auth/login.py"], "login"),  # the same path
        (["**/login.py"], "login"),  # no literal prefix: meets every entry
        (["docs/guide.md"], "docs"),  # the open entry lies above the new one
    ):
        path = write_envelope(repo / "new.yaml", id="candidate", filesAndInterfaces=entries)
        refused = taskfs("new", str(path), "--json")
        assert set(refused.codes) == {"ownership_conflict"}, (entries, refused.stdout)
        assert other in [e["other"] for e in refused.json["errors"]]
        places.write_bytes(b"garbage")  # a damaged file only costs the time to rebuild it
    path = write_envelope(repo / "new.yaml", id="candidate", filesAndInterfaces=["src/other/**"])
    assert taskfs("new", str(path), "--json").code == 0
