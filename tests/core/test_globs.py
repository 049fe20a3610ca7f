"""Ownership globs: parsing, matching, overlap, containment and the conflict index.

The property tests compare against a reference matcher written here from a regex translation
of the contract's rules, and against every short path over a small alphabet.
"""

from __future__ import annotations

import itertools
import re
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taskfs.core.globs import (
    Entry,
    EntryError,
    OwnershipIndex,
    covers,
    matches,
    overlap,
    parse_entry,
)
from taskfs.core.globs.relations import _uncovered

# ---------------------------------------------------------------------------------------------
# The reference: a whole-path regex per glob, plus the rule that a path's segments are
# non-empty, not '.' or '..', and that `interface:...` is not a path.


def _ref_segment(seg: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(seg):
        ch = seg[i]
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            negated = seg[i + 1] == "!"
            body_start = i + 2 if negated else i + 1
            close = seg.index("]", body_start + 1)
            body = seg[body_start:close]
            out.append(f"[^{body}/]" if negated else f"(?!/)[{body}]")
            i = close
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


@cache
def ref_regex(text: str) -> re.Pattern[str]:
    segs = text.split("/")
    out = []
    for k, seg in enumerate(segs):
        last = k == len(segs) - 1
        if seg == "**":
            out.append("[^/]+(?:/[^/]+)*" if last else "(?:[^/]+/)*")
        else:
            out.append(_ref_segment(seg) + ("" if last else "/"))
    return re.compile("".join(out))


def ref_valid(path: str) -> bool:
    if path.startswith("interface:"):
        return False
    return all(name not in ("", ".", "..") for name in path.split("/"))


def ref_matches(entry: Entry, path: str) -> bool:
    if entry.kind == "interface":
        return path == f"interface:{entry.text}"
    return ref_valid(path) and ref_regex(entry.text).fullmatch(path) is not None


def _names(max_len: int) -> list[str]:
    out = ["".join(p) for n in range(1, max_len + 1) for p in itertools.product("ab.", repeat=n)]
    return [n for n in out if n not in (".", "..")]


def _universe() -> tuple[str, ...]:
    short, longer = _names(2), _names(3)
    paths = list(longer)
    paths += ["/".join(p) for p in itertools.product(longer, repeat=2)]
    paths += ["/".join(p) for p in itertools.product(short, repeat=3)]
    paths += ["/".join(p) for p in itertools.product(["a", "b", ".a"], repeat=4)]
    return tuple(paths)


UNIVERSE = _universe()


@cache
def universe_matches(text: str) -> frozenset[str]:
    regex = ref_regex(text)
    return frozenset(p for p in UNIVERSE if regex.fullmatch(p))


def P(raw: str) -> Entry:
    return parse_entry(raw)


def test_reference_sanity() -> None:
    # the reference itself must say what the contract says, or the properties prove nothing
    assert ref_matches(P("a/**/b"), "a/b")
    assert ref_matches(P("a/**/b"), "a/x/y/b")
    assert not ref_matches(P("a/**"), "a")
    assert ref_matches(P("a/**"), "a/x/y")
    assert not ref_matches(P("*"), "a/b")
    assert ref_matches(P("[!a]"), "b")
    assert not ref_matches(P("[!a]"), "a")
    assert "a/b/.a" in UNIVERSE
    assert "." not in UNIVERSE
    assert len(UNIVERSE) > 2000


# ---------------------------------------------------------------------------------------------
# Tables

OVERLAPS = [
    ("src/**", "src/auth/*.py", True),
    ("src/[ab]*.py", "src/b?.py", True),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/y/b", True),
    ("interface:auth", "interface:auth", True),
    ("**", "*.py", True),
    ("**", "a/b/c", True),
    ("**/b", "a/**", True),
    ("*", "*", True),
    ("a*", "*b", True),
    ("*a*", "*b*", True),
    ("src/x.py", "src/x.py", True),
    ("src/x.py", "src/*.py", True),
    ("src/x.py", "**/x.py", True),
    ("src/", "src/a/b.py", True),
    ("[a-c]x", "b?", True),
    ("[!a]x", "?x", True),
    ("docs/**/*.md", "docs/api/x.md", True),
    ("**/test_*.py", "tests/test_a.py", True),
    ("a/*/c", "a/b/*", True),
    ("**/a/**", "x/a/y", True),
    ("a?c", "ab?", True),
    ("*.tar.gz", "x.*", True),
    (".github/**", ".github/workflows/ci.yml", True),
    ("[.]*", "*.py", True),
    ("my file*", "*file.txt", True),
    ("??", "[.]?", True),
    ("*/**", "**/*", True),
    ("docs/*.md", "docs/api/x.md", False),
    ("*.py", "*.md", False),
    ("[!a]", "a", False),
    ("interface:auth", "interface:Auth", False),
    ("interface:auth", "**", False),
    ("interface:auth", "auth", False),
    ("a/**", "a", False),
    ("src/a.py", "src/b.py", False),
    ("src/*.py", "tests/*.py", False),
    ("**/x", "**/y", False),
    ("a/*/c", "a/c", False),
    ("??", "???", False),
    ("a/**/b", "a/**/c", False),
    ("[ab]", "[!ab]", False),
    ("Src/**", "src/x", False),
    ("a*", "b*", False),
    ("*a", "*b", False),
    ("src/*", "src/a/b", False),
    ("[a-c]", "[d-f]", False),
    ("a/b", "a/b/c", False),
    (".*", "[!.]*", False),
    ("*.py", "**/*.md", False),
    ("test_p1_*.py", "test_p12_*.py", False),
    ("[!a-zA-Z0-9_.-]x", "?x", True),
    ("[i]nterface*", "*:*", True),
    ("[i]nterface?", "*:", False),
]


@pytest.mark.parametrize(("a", "b", "expected"), OVERLAPS)
def test_overlap_table(a: str, b: str, expected: bool) -> None:
    ea, eb = P(a), P(b)
    witness = overlap(ea, eb)
    assert (witness is not None) == expected
    assert overlap(eb, ea) == witness
    if witness is not None:
        assert matches(ea, witness)
        assert matches(eb, witness)
        assert ref_matches(ea, witness)
        assert ref_matches(eb, witness)
        if not witness.startswith("interface:"):
            assert not set(witness) & set("*?[]")


@pytest.mark.parametrize(
    ("a", "b", "witness"),
    [
        ("src/[ab]*.py", "src/b?.py", "src/ba.py"),
        ("src/**", "src/auth/*.py", "src/auth/a.py"),
        ("a/**/b", "a/b", "a/b"),
        ("**", "*.py", "a.py"),
        ("**/b", "a/**", "a/b"),
        ("interface:auth", "interface:auth", "interface:auth"),
        ("src/x.py", "src/x.py", "src/x.py"),
        ("*", "*", "a"),
        ("[!a]*", "*", "b"),
        ("[.]*", "*.py", ".py"),
        ("src/**", "src/**", "src/a"),
        ("a*", "*b", "ab"),
        ("my file*", "*file.txt", "my file.txt"),
        ("[!a-zA-Z0-9_.-]x", "?x", "+x"),
        ("[i]nterface*", "*:*", "interfacea:"),
    ],
)
def test_overlap_exact_witness(a: str, b: str, witness: str) -> None:
    assert overlap(P(a), P(b)) == witness
    assert overlap(P(b), P(a)) == witness


COVERS = [
    ("src/**", "src/a/*.py", True),
    ("src/[ab].py", "src/a.py", True),
    ("*", "[!x]", True),
    ("a*", "a?*", True),
    ("**", "a/**", True),
    ("**/*.py", "src/*.py", True),
    ("src/**", "src/**/x", True),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/*/b", True),
    ("[a-z]*", "[b-c]x", True),
    ("interface:x", "interface:x", True),
    ("x", "x", True),
    ("**/x", "x", True),
    ("*.py", "[!.]*.py", True),
    ("?", "[ab]", True),
    ("a/**", "a/*/b/**", True),
    ("src/", "src/**", True),
    ("src/*.py", "src/**", False),
    ("a/**", "a", False),
    ("a?*", "a*", False),
    ("*.py", "**/*.py", False),
    ("interface:x", "interface:y", False),
    ("interface:x", "x", False),
    ("x", "interface:x", False),
    ("[ab]", "?", False),
    ("a/*/b", "a/**/b", False),
    ("src/x.py", "src/*.py", False),
    ("*a", "a*", False),
    ("[!a]", "[!b]", False),
    ("**/*.py", "**", False),
    ("interface[!:]*", "interface?*", True),
    ("interface[!:]*", "interface*", False),
]


@pytest.mark.parametrize(("outer", "inner", "expected"), COVERS)
def test_covers_table(outer: str, inner: str, expected: bool) -> None:
    eo, ei = P(outer), P(inner)
    assert covers(eo, ei) == expected
    if not expected and eo.kind == ei.kind == "path":
        path = _uncovered(eo, ei)
        assert path is not None
        assert ref_matches(ei, path)
        assert not ref_matches(eo, path)


REFUSALS = [
    (3, "string"),
    (None, "string"),
    (["src/**"], "string"),
    ("", "empty"),
    ("   ", "empty"),
    (" src/x.py", "white space"),
    ("src/x.py\n", "white space"),
    ("/etc/passwd", "absolute"),
    ("a/../b", "'..'"),
    ("..", "'..'"),
    ("src\\x.py", "use /"),
    ("src/[ab.py", "no closing ']'"),
    ("a/[", "no closing ']'"),
    ("[]", "no closing ']'"),
    ("[!]", "no closing ']'"),
    ("a[/]b", "no closing ']'"),
    ("a**b", "** alone as a whole segment"),
    ("**.py", "use * within a segment"),
    ("src/***", "**"),
    ("interface:", "no name"),
    ("interface:   ", "no name"),
    ("interface: auth", "white space"),
    (".", "write ** to own everything"),
    ("[.]", "never match"),
    ("a/[.][.]/b", "never match"),
    ("./interface:x", "interface:<name>"),
    ("[i]nterface:*", "interface:<name>"),
    ("[z-a]", "backwards"),
]


@pytest.mark.parametrize(("raw", "reason"), REFUSALS)
def test_parse_refusals(raw: object, reason: str) -> None:
    with pytest.raises(EntryError) as caught:
        parse_entry(raw)
    assert reason in caught.value.reason
    assert str(caught.value) == caught.value.reason


def test_backslash_reason_says_to_use_slash() -> None:
    with pytest.raises(EntryError, match="use / to separate directories"):
        parse_entry("src\\x.py")


NORMALISED = [
    ("./src/x.py", "path", "src/x.py"),
    ("a/./b", "path", "a/b"),
    ("a//b", "path", "a/b"),
    ("src/", "path", "src/**"),
    ("a/**/**/b", "path", "a/**/b"),
    ("**/**", "path", "**"),
    ("a/**/", "path", "a/**"),
    ("./", "path", "**"),
    ("src/my file.py", "path", "src/my file.py"),
    ("src/.hidden", "path", "src/.hidden"),
    ("src/[]]x", "path", "src/[]]x"),
    ("interface:auth", "interface", "auth"),
    ("interface:Auth v2", "interface", "Auth v2"),
    ("interface:a/b*", "interface", "a/b*"),
    ("Interface:x", "path", "Interface:x"),
]


@pytest.mark.parametrize(("raw", "kind", "text"), NORMALISED)
def test_parse_normalises(raw: str, kind: str, text: str) -> None:
    entry = parse_entry(raw)
    assert (entry.raw, entry.kind, entry.text) == (raw, kind, text)


MATCHES = [
    ("a/**", "a", False),
    ("a/**", "a/b/c", True),
    ("**", "x", True),
    ("**", "x/y/z", True),
    ("*", "a/b", False),
    ("src/*.py", "src/.py", True),
    ("*", "interface:x", False),
    ("**", "interface:x", False),
    ("interface:x", "interface:x", True),
    ("interface:x", "interface:X", False),
    ("interface:x", "x", False),
    ("src/*", "src/", False),
    ("**", "a/./b", False),
    ("**", "a/../b", False),
    ("**", "a//b", False),
    ("[]]", "]", True),
    ("[!]]", "a", True),
    ("[!]]", "]", False),
    ("[a-]", "-", True),
    ("[-a]", "-", True),
    ("a[+-0]b", "a,b", True),
    ("[^a]", "^", True),
    ("[^a]", "b", False),
    ("SRC/x", "src/x", False),
    ("src/x", "src/x", True),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/y/b", True),
    ("a/**/b", "a/x/y/c", False),
    ("**/b", "b", True),
    ("[a-c]*.py", "b_test.py", True),
    ("[a-c]*.py", "d_test.py", False),
    ("?", "é", True),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), MATCHES)
def test_matches_table(pattern: str, path: str, expected: bool) -> None:
    assert matches(P(pattern), path) == expected


# ---------------------------------------------------------------------------------------------
# Generated patterns

ATOMS = ["a", "b", ".", "*", "?", "[ab]", "[!a]", "[a-b]"]
segment_texts = st.lists(st.sampled_from(ATOMS), min_size=1, max_size=3).map("".join)
item_texts = st.one_of(segment_texts, segment_texts, segment_texts, st.just("**"))
pattern_texts = st.lists(item_texts, min_size=1, max_size=4).map("/".join)


def _try_parse(text: str) -> Entry | None:
    try:
        return parse_entry(text)
    except EntryError:
        return None


path_entries = pattern_texts.map(_try_parse).filter(lambda e: e is not None)
interface_entries = st.sampled_from(["interface:a", "interface:b"]).map(parse_entry)
entries = st.one_of(path_entries, path_entries, path_entries, interface_entries)
names = st.text(alphabet="ab.", min_size=0, max_size=4)
paths = st.lists(names, min_size=1, max_size=5).map("/".join)

MANY = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SOME = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _both(a: Entry, b: Entry) -> frozenset[str]:
    if a.kind == "interface" or b.kind == "interface":
        return frozenset()
    return universe_matches(a.text) & universe_matches(b.text)


@MANY
@given(entries, entries)
def test_property_witness_matches_both(a: Entry, b: Entry) -> None:
    witness = overlap(a, b)
    if witness is not None:
        assert matches(a, witness)
        assert matches(b, witness)
        assert ref_matches(a, witness)
        assert ref_matches(b, witness)


@MANY
@given(path_entries, path_entries)
def test_property_shared_path_means_overlap(a: Entry, b: Entry) -> None:
    shared = _both(a, b)
    if shared:
        assert overlap(a, b) is not None, sorted(shared)[:3]


@MANY
@given(entries, entries)
def test_property_overlap_is_symmetric(a: Entry, b: Entry) -> None:
    assert overlap(a, b) == overlap(b, a)


@MANY
@given(path_entries, path_entries)
def test_property_covers_is_sound(outer: Entry, inner: Entry) -> None:
    inside = universe_matches(inner.text)
    outside = inside - universe_matches(outer.text)
    if covers(outer, inner):
        assert not outside, sorted(outside)[:3]
        assert overlap(outer, inner) is not None
    else:
        counter = _uncovered(outer, inner)
        assert counter is not None
        assert ref_matches(inner, counter)
        assert not ref_matches(outer, counter)
    if outside:
        assert not covers(outer, inner)


@SOME
@given(path_entries)
def test_property_covers_itself_and_everything_covers_less(entry: Entry) -> None:
    assert covers(entry, entry)
    assert covers(P("**"), entry)
    assert overlap(entry, entry) is not None


@MANY
@given(entries, st.lists(paths, min_size=1, max_size=8))
def test_property_matches_agrees_with_reference(entry: Entry, some_paths: list[str]) -> None:
    for path in some_paths:
        assert matches(entry, path) == ref_matches(entry, path), path


@SOME
@given(path_entries)
def test_property_matches_agrees_on_universe(entry: Entry) -> None:
    expected = universe_matches(entry.text)
    for path in UNIVERSE[::7]:
        assert matches(entry, path) == (path in expected), path


@SOME
@given(st.lists(entries, min_size=0, max_size=12), entries)
def test_property_index_finds_exactly_the_overlaps(indexed: list[Entry], query: Entry) -> None:
    index: OwnershipIndex[int] = OwnershipIndex()
    for key, entry in enumerate(indexed):
        index.add(key, entry)
    found = list(index.conflicts(query))
    expected = [(k, e, overlap(query, e)) for k, e in enumerate(indexed)]
    assert found == [(k, e, w) for k, e, w in expected if w is not None]


# Entries as people write them: `./` in front, doubled or trailing slashes.
raw_texts = st.tuples(st.sampled_from(["", "./"]), pattern_texts, st.sampled_from(["", "/"])).map(
    lambda parts: "".join(parts).replace("a/", "a//", 1)
)
raw_entries = st.one_of(raw_texts, st.sampled_from(["interface:a", "interface:b"])).filter(
    lambda raw: _try_parse(raw) is not None
)


@SOME
@given(st.lists(raw_entries, min_size=0, max_size=12), entries)
def test_property_index_of_unparsed_text_finds_the_same(indexed: list[str], query: Entry) -> None:
    lazy: OwnershipIndex[int] = OwnershipIndex()
    eager: OwnershipIndex[int] = OwnershipIndex()
    for key, raw in enumerate(indexed):
        lazy.add(key, raw)
        eager.add(key, parse_entry(raw))
    assert list(lazy.conflicts(query)) == list(eager.conflicts(query))


@MANY
@given(
    st.lists(st.one_of(raw_entries, raw_entries.map(parse_entry)), min_size=0, max_size=12),
    st.one_of(paths, st.sampled_from(["interface:a", "interface:b", "a/interface:a"])),
)
def test_property_index_matching_is_exactly_matches(indexed: list[str | Entry], path: str) -> None:
    index: OwnershipIndex[int] = OwnershipIndex()
    for key, entry in enumerate(indexed):
        index.add(key, entry)
    parsed = [e if isinstance(e, Entry) else parse_entry(e) for e in indexed]
    expected = [(k, e) for k, e in enumerate(parsed) if matches(e, path)]
    assert list(index.matching(path)) == expected


# ---------------------------------------------------------------------------------------------
# The index on realistic entries


def _index(rows: list[tuple[str, str]]) -> OwnershipIndex[str]:
    index: OwnershipIndex[str] = OwnershipIndex()
    for key, raw in rows:
        index.add(key, P(raw))
    return index


ROWS = [
    ("t1", "src/auth/**"),
    ("t1", "interface:auth"),
    ("t2", "src/billing/invoice.py"),
    ("t2", "tests/test_billing_*.py"),
    ("t3", "docs/*.md"),
    ("t4", "**/conftest.py"),
    ("t5", "src/billing/invoice.py"),
    ("t6", "*.toml"),
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("src/auth/login.py", [("t1", "src/auth/**", "src/auth/login.py")]),
        ("interface:auth", [("t1", "interface:auth", "interface:auth")]),
        ("interface:Auth", []),
        ("auth", []),
        ("docs/api/x.md", []),
        ("docs/x.md", [("t3", "docs/*.md", "docs/x.md")]),
        (
            "src/billing/*.py",
            [
                ("t2", "src/billing/invoice.py", "src/billing/invoice.py"),
                ("t4", "**/conftest.py", "src/billing/conftest.py"),
                ("t5", "src/billing/invoice.py", "src/billing/invoice.py"),
            ],
        ),
        (
            "tests/test_billing_refunds.py",
            [("t2", "tests/test_billing_*.py", "tests/test_billing_refunds.py")],
        ),
        ("tests/test_auth.py", []),
        (
            "src/auth/conftest.py",
            [
                ("t1", "src/auth/**", "src/auth/conftest.py"),
                ("t4", "**/conftest.py", "src/auth/conftest.py"),
            ],
        ),
        ("pyproject.toml", [("t6", "*.toml", "pyproject.toml")]),
        (
            "src/*/conftest.py",
            [
                ("t1", "src/auth/**", "src/auth/conftest.py"),
                ("t4", "**/conftest.py", "src/a/conftest.py"),
            ],
        ),
    ],
)
def test_index_conflicts(query: str, expected: list[tuple[str, str, str]]) -> None:
    found = [(k, e.raw, w) for k, e, w in _index(ROWS).conflicts(P(query))]
    assert found == expected


def test_index_everything_query_meets_every_path_entry() -> None:
    found = list(_index(ROWS).conflicts(P("**")))
    assert [k for k, _, _ in found] == ["t1", "t2", "t2", "t3", "t4", "t5", "t6"]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/auth/login.py", ["t1"]),
        ("src/auth", []),  # src/auth/** owns what is below the folder, not the folder
        ("src/billing/invoice.py", ["t2", "t5"]),
        ("src/billing/conftest.py", ["t4"]),
        ("conftest.py", ["t4"]),
        ("pyproject.toml", ["t6"]),
        ("docs/api/x.md", []),
        ("interface:auth", ["t1"]),
        ("interface:billing", []),
        ("Src/auth/login.py", []),
    ],
)
def test_index_matching(path: str, expected: list[str]) -> None:
    assert [k for k, _ in _index(ROWS).matching(path)] == expected


def test_parse_entry_is_memoised_and_still_refuses_each_time() -> None:
    assert parse_entry("src/memo/**") is parse_entry("src/memo/**")
    for _ in range(2):
        with pytest.raises(EntryError):
            parse_entry("src/[memo")
