"""The stored places of ownership entries (`taskfs.store.entry_places`): a new task is checked
only against the entries near its own, and that must never lose an overlap."""

from __future__ import annotations

import itertools
import marshal
from pathlib import Path

from taskfs.core import globs
from taskfs.store.entry_places import FORMAT, SUFFIX, Places
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
    assert places.place("src/auth/*.py") == ("src", "auth")
    assert places.place("docs/guide.md") == ("docs", "guide.md")
    assert places.place("**/*.md") == ()
    places.save()
    stored = Path(cache + SUFFIX)
    assert stored.is_file()
    fmt, filing, files = marshal.loads(stored.read_bytes())
    assert filing == {"src/auth/*.py": "src/auth", "docs/guide.md": "docs/guide.md", "**/*.md": ""}
    assert files == {"src/auth": "src/auth/*.py", "docs/guide.md": "docs/guide.md", "": "**/*.md"}
    records = [("login", "src/auth/*.py"), ("guide", "docs/guide.md"), ("md", "**/*.md")]
    for damage in (
        b"\x00not marshal",
        marshal.dumps((FORMAT, {"src/auth/*.py": 1}, {})),  # not a file's name
        # Filed where no query of its place looks, or not held by the file it names:
        marshal.dumps((FORMAT, {"src/auth/*.py": "elsewhere"}, {"src/auth": "src/auth/*.py"})),
        marshal.dumps((FORMAT, {"src/auth/*.py": "src/auth"}, {"src/auth": ""})),
        marshal.dumps((fmt, {}, {})),  # nothing filed: read, then every entry filed again
    ):
        stored.write_bytes(damage)
        near = Places(cache).nearby(records, ["src/auth/login.py"])
        assert ("login", "src/auth/*.py") in near
        assert ("guide", "docs/guide.md") not in near


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
