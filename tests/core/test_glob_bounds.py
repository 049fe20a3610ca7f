"""The glob algorithms are bounded: documented limits on entries, work counters that stay under
the stated bounds on generated worst cases, and agreement with a brute-force matcher.

The bounds are asserted on `globs.WORK` (states the searches take), never on wall-clock time.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taskfs.core.globs import (
    COVER_BUDGET,
    MAX_ENTRY_LENGTH,
    MAX_PATTERN_LENGTH,
    MAX_SEGMENTS,
    MAX_WILDCARDS,
    WORK,
    CoverUndecided,
    Entry,
    EntryError,
    automata,
    covers,
    matches,
    overlap,
    parse_entry,
    relations,
    syntax,
)
from taskfs.core.globs.relations import _uncovered
from tests.core.test_globs import ref_matches, ref_regex, universe_matches

# ---------------------------------------------------------------------------------------------
# The limits, at and just past each


def _refused(raw: str) -> str:
    with pytest.raises(EntryError) as caught:
        parse_entry(raw)
    return caught.value.reason


def test_length_limit() -> None:
    at = "/".join(["d" * 15] * 31 + ["d" * 16])
    assert len(at) == MAX_ENTRY_LENGTH
    parse_entry(at)
    past = "x" * (MAX_ENTRY_LENGTH + 1)
    assert str(MAX_ENTRY_LENGTH) in _refused(past)
    assert str(MAX_ENTRY_LENGTH) in _refused("a*" * 1500 + "b")  # the 3 KB entry of issue 16
    assert str(MAX_ENTRY_LENGTH) in _refused("interface:" + "x" * MAX_ENTRY_LENGTH)


def test_segment_limit() -> None:
    parse_entry("/".join(["s"] * MAX_SEGMENTS))
    assert str(MAX_SEGMENTS) in _refused("/".join(["s"] * (MAX_SEGMENTS + 1)))
    # `dir/` is `dir/**`: the added segment counts
    parse_entry("/".join(["s"] * (MAX_SEGMENTS - 1)) + "/")
    assert str(MAX_SEGMENTS) in _refused("/".join(["s"] * MAX_SEGMENTS) + "/")


@pytest.mark.parametrize(
    "unit",
    ["*a", "?", "[ab]", "[!a]", "[]x]", "**/*"],
)
def test_wildcard_limit(unit: str) -> None:
    def build(count: int) -> str:
        if unit == "**/*":
            return "/".join(["**", "*"] * (count // 2)) + ("/?" if count % 2 else "")
        return unit * count

    parse_entry(build(MAX_WILDCARDS))
    reason = _refused(build(MAX_WILDCARDS + 1))
    assert str(MAX_WILDCARDS) in reason or str(MAX_PATTERN_LENGTH) in reason


def test_wildcard_limit_counts_every_kind() -> None:
    mixed = "**/*a?/[ab]*/x?[!c]/**/?*?/[a-z]?*"
    # ** | * ? | [ab] * | ? [!c] | ** | ? * ? | [a-z] ? *: 14 wildcards
    parse_entry(mixed + "/??")  # 16
    assert str(MAX_WILDCARDS) in _refused(mixed + "/???")


def test_pattern_length_limit() -> None:
    parse_entry("src/*" + "a" * (MAX_PATTERN_LENGTH - 1))
    assert str(MAX_PATTERN_LENGTH) in _refused("src/*" + "a" * MAX_PATTERN_LENGTH)
    # literal segments do not count: a long literal path with one glob segment is fine
    parse_entry("/".join(["literal-name-" + str(k) for k in range(20)]) + "/*.py")


@pytest.mark.parametrize(
    "char", ["\x00", "\n", "\r", "\t", "\x1b", "\x7f", "\x85", "\u2028", "\u2029"]
)
def test_control_characters_are_refused(char: str) -> None:
    for raw in (f"src/a{char}b.py", f"src/{char}*", f"interface:a{char}b"):
        assert "control character" in _refused(raw), raw


# ---------------------------------------------------------------------------------------------
# Generated worst cases at the limits


def _star_runs(k: int) -> str:
    return "a*" * k + "a" * (MAX_PATTERN_LENGTH - 2 * k)


def _at_limit() -> Iterator[str]:
    """Entries at (or near) every limit at once, in the shapes that hurt most."""
    n = MAX_PATTERN_LENGTH
    yield "*" + "a" * (n - 2) + "*"  # long literal run between stars
    yield "*" + "a" * (n - 2) + "b"
    yield _star_runs(MAX_WILDCARDS)[:n]  # many stars
    yield "*a" * 8 + "?" * 8  # a run of ? after stars
    yield "*" + "?" * (MAX_WILDCARDS - 1) + "a" * (n - MAX_WILDCARDS)
    yield "*a" + "?" * (MAX_WILDCARDS - 1)  # the covers blow-up shape
    yield "*a" + "?" * (MAX_WILDCARDS - 2) + "*"
    yield "*" + "[ab]" * 14 + "*"  # many classes
    yield "[!a][!b][!c][!d][!e][!f][!g][!h][!i][!j][!k][!l][!m][!n][!o][!p]"
    yield "/".join(["**", "*a*"] * 5) + "/*"  # ** mixes
    yield "/".join(["*"] * MAX_WILDCARDS)
    yield "**/" + "/".join(["?"] * (MAX_WILDCARDS - 2)) + "/x"
    yield "src/" + "/".join(["lit"] * 20) + "/**/*" + "b" * 40 + "*"
    yield "*abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXY*"  # wide alphabet
    yield "*ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210zyxwvutsrqponmlkjihgfedcb*"
    yield "[a-z]*" * 8


AT_LIMIT = [parse_entry(raw) for raw in _at_limit()]


def _size(entry: Entry) -> int:
    """(characters of wildcard segments) + (segments): the n of the documented bound."""
    segments = entry.text.split("/")
    return sum(len(s) for s in segments if syntax._WILDCARD.search(s)) + len(segments) + 1


def _clear() -> None:
    relations._meet_patterns.cache_clear()
    automata._nfa.cache_clear()
    WORK.meet_states = WORK.cover_states = 0


def test_generated_entries_are_at_the_limits() -> None:
    for entry in AT_LIMIT:
        assert len(entry.raw) <= MAX_ENTRY_LENGTH
        # each is one step from refusal: add 65 literal chars to a wildcard segment, or
        # a wildcard, and it is refused
        with pytest.raises(EntryError):
            parse_entry(entry.raw + "?" * (MAX_WILDCARDS + 1))


@pytest.mark.parametrize(("a", "b"), list(itertools.product(AT_LIMIT, repeat=2)))
def test_overlap_work_is_within_the_stated_bound(a: Entry, b: Entry) -> None:
    _clear()
    witness = overlap(a, b)
    # 48 validity states times the positions of both: O(n * m), as the docstring says
    assert WORK.meet_states <= 48 * _size(a) * _size(b)
    if witness is not None:  # (the reference regex backtracks for ever on these: not used)
        assert matches(a, witness)
        assert matches(b, witness)


@pytest.mark.parametrize(("a", "b"), list(itertools.product(AT_LIMIT, repeat=2)))
def test_covers_work_is_within_its_budget(a: Entry, b: Entry) -> None:
    _clear()
    inside = covers(a, b)
    # the budget is checked before each step: it is overrun by one node's outer moves at most
    assert WORK.cover_states <= COVER_BUDGET + 1000
    if inside:
        # never a wrong "inside": a delegation could own what its parent does not
        assert overlap(a, b) is not None


@pytest.mark.parametrize("k", range(1, MAX_WILDCARDS - 1))
def test_the_question_mark_runs_after_a_star_decide_exactly(k: int) -> None:
    # the parent/child of issue 16 (101 s before), at every length up to the limit
    outer, inner = parse_entry("*a" + "?" * k + "*"), parse_entry("*a" + "?" * k)
    _clear()
    assert covers(outer, inner)
    assert WORK.cover_states <= 8 * (k + 3) ** 2  # antichains keep it polynomial
    _clear()
    assert not covers(inner, outer)
    assert WORK.cover_states <= 8 * (k + 3) ** 2
    if k > MAX_WILDCARDS - 3:
        return
    nested_outer = parse_entry("src/**/*a" + "?" * k + "*")
    nested_inner = parse_entry("src/x/*a" + "?" * k)
    _clear()
    assert covers(nested_outer, nested_inner)
    assert WORK.cover_states <= 16 * (k + 5) ** 2


def test_past_the_budget_covers_answers_not_inside() -> None:
    outer, inner = parse_entry("*a???*b??*"), parse_entry("*a???b??")
    assert covers(outer, inner)  # within the budget it decides
    with pytest.raises(CoverUndecided):
        _uncovered(outer, inner, budget=2)
    saved = relations.COVER_BUDGET
    try:
        relations.COVER_BUDGET = 2
        assert not covers(outer, inner)  # the cautious answer
    finally:
        relations.COVER_BUDGET = saved


def test_matching_a_long_name_is_linear() -> None:
    # a backtracking regex took 51 s on 40 characters here
    entry = parse_entry("*a" * 10 + "*b")
    for n in (40, 400, 4000):
        assert not matches(entry, "a" * n + "c")
        assert matches(entry, "a" * n + "b")


# ---------------------------------------------------------------------------------------------
# Agreement with the brute-force matcher on small random globs

ATOMS = ["a", "b", "*", "?", "[ab]", "[!a]", "[a-b]", "."]


def _segment(atoms: list[str]) -> str:
    text = "".join(atoms)
    while "**" in text:
        text = text.replace("**", "*")
    return text


segments = st.lists(st.sampled_from(ATOMS), min_size=1, max_size=7).map(_segment)
items = st.one_of(segments, segments, segments, st.just("**"))
globs_text = st.lists(items, min_size=1, max_size=3).map("/".join)


def _parsed(text: str) -> Entry | None:
    try:
        return parse_entry(text)
    except EntryError:
        return None


entries = globs_text.map(_parsed).filter(lambda e: e is not None)
single = segments.map(_parsed).filter(lambda e: e is not None)
NAMES = ["".join(p) for n in range(1, 8) for p in itertools.product("ab", repeat=n)]
NAMES += [".a", ".b", "a.b", "ab.", ".ab", "..a", "a.b.a"]
paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=4).map("/".join)

PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _names_matching(entry: Entry) -> frozenset[str]:
    regex = ref_regex(entry.text)
    return frozenset(n for n in NAMES if regex.fullmatch(n))


@PROPERTY
@given(entries, st.lists(paths, min_size=1, max_size=10))
def test_property_fast_matching_agrees_with_brute_force(entry: Entry, some: list[str]) -> None:
    for path in some:
        assert matches(entry, path) == ref_matches(entry, path), path


@PROPERTY
@given(single, single)
def test_property_segment_overlap_agrees_with_brute_force(a: Entry, b: Entry) -> None:
    shared = _names_matching(a) & _names_matching(b)
    witness = overlap(a, b)
    if shared:
        assert witness is not None, sorted(shared)[:3]
    if witness is not None:
        assert ref_matches(a, witness)
        assert ref_matches(b, witness)
    assert overlap(b, a) == witness


@PROPERTY
@given(single, single)
def test_property_segment_covers_agrees_with_brute_force(outer: Entry, inner: Entry) -> None:
    outside = _names_matching(inner) - _names_matching(outer)
    if covers(outer, inner):
        assert not outside, sorted(outside)[:3]
    else:
        counter = _uncovered(outer, inner)
        assert counter is not None
        assert ref_matches(inner, counter)
        assert not ref_matches(outer, counter)


@PROPERTY
@given(entries, entries)
def test_property_path_overlap_and_covers_agree_with_brute_force(a: Entry, b: Entry) -> None:
    shared = universe_matches(a.text) & universe_matches(b.text)
    witness = overlap(a, b)
    if shared:
        assert witness is not None
    if witness is not None:
        assert ref_matches(a, witness)
        assert ref_matches(b, witness)
    if covers(a, b):
        assert not universe_matches(b.text) - universe_matches(a.text)
    else:
        counter = _uncovered(a, b)
        assert counter is not None
        assert ref_matches(b, counter)
        assert not ref_matches(a, counter)
