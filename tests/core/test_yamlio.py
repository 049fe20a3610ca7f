from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taskfs.core import yamlio
from taskfs.core.yamlio import MAX_BYTES, MAX_DEPTH, YamlError, dump, load

ENVELOPE = b"""\
id: refactor-ledger-io
contextID: ctx-2024-ledger
from: planner
to: worker-3
objective: >-
  Replace the ad-hoc YAML reading in the store with the strict loader so that every
  ledger file is parsed the same way and refusals name the file and line.
outputFormat: |
  A single commit touching only the files listed below, plus a short note in the
  task's messages folder describing what changed and why.
toolAndSourceGuidance: "Use the repository's venv; read docs/ledger.md first."
boundaries: Do not change the on-disk format; do not touch the CLI.
filesAndInterfaces:
  - taskfs/store/*.py
  - tests/store/**
  - "interface:ledger-reader"
acceptanceCheck:
  passFailCommand: .venv/bin/pytest -q tests/store
  endToEndVerification: run `taskfs audit` on the sample repository and see no findings
  timeoutSeconds: 600
toolsAllowed:
  - bash
  - git
  - pytest
dependsOn:
  - schema-v2
  - ids-stable
parent: ledger-epic
x-priority: 3
x-estimate: 1.5
x-labels:
  - io
  - strictness
x-reviewed: false
x-notes: ~
x-links:
  design: https://example.org/design/ledger
  issue: https://example.org/issues/42
x-history:
  - {at: "2024-05-01T10:00:00Z", by: planner}
  - {at: "2024-05-02T11:30:00Z", by: reviewer}
"""


@pytest.fixture(params=["libyaml", "python"], autouse=True)
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run every test against libyaml's parser and against PyYAML's pure-Python one."""
    if request.param == "python":
        monkeypatch.setattr(yamlio, "_new_parser", yamlio._PyParser)
    return str(request.param)


def refused(data: bytes) -> str:
    with pytest.raises(YamlError) as info:
        load(data)
    assert info.value.reason == str(info.value)
    return info.value.reason


def same(a: Any, b: Any) -> bool:
    """Equal with equal types all the way down (1 == 1.0 == True would hide mistakes)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


# --- loading: what is accepted ------------------------------------------------------------


def test_loads_a_typical_envelope() -> None:
    value = load(ENVELOPE)
    assert value["acceptanceCheck"] == {
        "passFailCommand": ".venv/bin/pytest -q tests/store",
        "endToEndVerification": "run `taskfs audit` on the sample repository and see no findings",
        "timeoutSeconds": 600,
    }
    assert value["outputFormat"].endswith("why.\n")
    assert value["x-notes"] is None
    assert value["x-history"][1] == {"at": "2024-05-02T11:30:00Z", "by": "reviewer"}
    assert list(value)[:4] == ["id", "contextID", "from", "to"]


def test_utf8_bom_is_stripped() -> None:
    assert load(b"\xef\xbb\xbfname: caf\xc3\xa9\n") == {"name": "café"}


def test_a_file_of_exactly_max_bytes_is_read() -> None:
    data = b"a: " + b"x" * (MAX_BYTES - 4) + b"\n"
    assert len(data) == MAX_BYTES
    assert len(load(data)["a"]) == MAX_BYTES - 4


def test_nesting_up_to_max_depth_is_read() -> None:
    data = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    value = load(data)
    for _ in range(MAX_DEPTH - 1):
        value = value[0]
    assert value == []


def test_explicit_document_markers_and_directives() -> None:
    assert load(b"%YAML 1.2\n---\na: 1\n...\n") == {"a": 1}
    assert load(b"---\n") is None
    assert load(b"%TAG !e! tag:yaml.org,2002:\n---\n!e!str 12\n") == "12"


def test_merge_key_is_an_ordinary_key() -> None:
    assert load(b"<<: {a: 1}\nb: 2\n") == {"<<": {"a": 1}, "b": 2}


def test_long_keys_and_multiline_keys() -> None:
    assert load(b'? "a\\nb"\n: 1\n? |\n  x\n  y\n: 2\n') == {"a\nb": 1, "x\ny\n": 2}


# --- loading: what is refused -------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "words"),
    [
        pytest.param(b"name: caf\xe9\n", ["UTF-8", "0xe9", "offset 9"], id="latin-1"),
        pytest.param("a: 1\n".encode("utf-16"), ["UTF-16"], id="utf-16-bom"),
        pytest.param("a: 1\n".encode("utf-16-le"), ["U+0000"], id="utf-16-no-bom"),
        pytest.param(b"a: 1\nb: \xed\xa0\x80\n", ["UTF-8", "line 2"], id="utf-8-surrogate"),
        pytest.param(b"\xef\xbb\xbfa: \xff", ["offset 6"], id="bad-byte-after-bom"),
        pytest.param(b"a: &x [1]\n", ["anchor &x", "line 1, column 4"], id="unused-anchor"),
        pytest.param(b"a: &x 1\n", ["anchor &x"], id="unused-scalar-anchor"),
        pytest.param(b"&a [*a]\n", ["anchor &a"], id="cycle"),
        pytest.param(b"a: *x\n", ["alias *x"], id="alias"),
        pytest.param(
            b'!!python/object/apply:os.system ["echo hi"]\n',
            ["!!python/object/apply:os.system", "not allowed"],
            id="python-object",
        ),
        pytest.param(b"a: !!binary aGVsbG8=\n", ["!!binary"], id="binary"),
        pytest.param(b"!!set {a, b}\n", ["!!set"], id="set"),
        pytest.param(b"a: !!timestamp 2024-05-01\n", ["!!timestamp"], id="timestamp"),
        pytest.param(b"!!omap [a: 1]\n", ["!!omap"], id="omap"),
        pytest.param(b"a: !foo x\n", ["!foo", "line 1"], id="local-tag"),
        pytest.param(b"!foo [x]\n", ["!foo"], id="local-tag-on-sequence"),
        pytest.param(b"a: !!int 0x1F\n", ["'0x1F'", "!!int"], id="int-tag-bad-value"),
        pytest.param(b"a: !!bool yes\n", ["!!bool"], id="bool-tag-bad-value"),
        pytest.param(b"a: !!null 0\n", ["!!null"], id="null-tag-bad-value"),
        pytest.param(b"a: !!float x\n", ["!!float"], id="float-tag-bad-value"),
        pytest.param(b"a: !!map x\n", ["!!map", "plain value"], id="map-tag-on-scalar"),
        pytest.param(b"a: !!str [x]\n", ["!!str", "sequence"], id="str-tag-on-sequence"),
        pytest.param(b"!!seq {a: 1}\n", ["!!seq", "mapping"], id="seq-tag-on-mapping"),
        pytest.param(b"a: 1\nb: 2\na: 3\n", ["duplicate key 'a'", "line 3"], id="dup-top"),
        pytest.param(
            b"top:\n  list:\n    - x: 1\n      y: 2\n      x: 3\n",
            ["duplicate key 'x'", "line 5, column 7"],
            id="dup-nested",
        ),
        pytest.param(b"{a: 1, b: 2, a: 3}\n", ["duplicate key 'a'"], id="dup-flow"),
        pytest.param(b"1: a\n'1': b\n1.0: c\n", ["duplicate key '1.0'", "line 3"], id="dup-num"),
        pytest.param(b"1: a\ntrue: b\n", ["duplicate key 'true'"], id="dup-true-is-1"),
        pytest.param(b".nan: a\n.NaN: b\n", ["duplicate key '.NaN'"], id="dup-nan"),
        pytest.param(b"~: a\nnull: b\n", ["duplicate key 'null'"], id="dup-null"),
        pytest.param(b"? {a: 1}\n: x\n", ["mapping used as a key", "line 1"], id="map-key"),
        pytest.param(b"[a, b]: x\n", ["sequence used as a key"], id="seq-key"),
        pytest.param(b"a: 1\n---\nb: 2\n", ["more than one document", "line 2"], id="two-docs"),
        pytest.param(b"a\n...\nb\n", ["line 3"], id="two-implicit"),
        pytest.param(b"", ["empty"], id="empty-bytes"),
        pytest.param(b"\n  \n", ["empty"], id="blank"),
        pytest.param(b"# only\n# comments\n", ["empty"], id="only-comments"),
        pytest.param(b"\xef\xbb\xbf# bom and a comment\n", ["empty"], id="bom-comment"),
        pytest.param(b"[" * 10_000, [], id="10000-brackets"),
        pytest.param(b"- " * (MAX_DEPTH + 1) + b"x\n", ["deeper than 64", "line 1"], id="deep"),
        pytest.param(b"a: b\x00c\n", ["U+0000", "line 1, column 5"], id="nul"),
        pytest.param(b"a: 1\nb: \x1b[31m\n", ["U+001B", "line 2, column 4"], id="escape"),
        pytest.param(b"a: \xc2\x85\x7f\n", ["U+007F"], id="delete"),
        pytest.param(b"a:\n\tb: 1\n", ["line 2, column 1"], id="tab-indent"),
        pytest.param(b'a: "abc\nb: 2\n', ["quoted scalar", "line 1, column 4"], id="open-quote"),
        pytest.param(b"a: 'abc\n", ["quoted scalar"], id="open-single-quote"),
        pytest.param(b"a: b\n  c: d\n", ["line 2, column 4"], id="bad-indent"),
        pytest.param(b"a: [1, 2\n", ["line 2"], id="open-bracket"),
        pytest.param(b"a: 1" + b"2" * 5000 + b"\n", ["too many digits"], id="huge-int"),
    ],
)
def test_refused(data: bytes, words: list[str]) -> None:
    reason = refused(data)
    for word in words:
        assert word in reason


def test_refusal_is_a_value_error_with_a_reason() -> None:
    with pytest.raises(ValueError, match="duplicate key") as info:
        load(b"a: 1\na: 2\n")
    assert isinstance(info.value, YamlError)
    assert info.value.reason == "duplicate key 'a' at line 2, column 1"


def test_a_20_mb_file_is_refused_before_decoding() -> None:
    data = b"a: " + b"\xff" * (20 * 1024 * 1024)  # not UTF-8 either: size must win
    reason = refused(data)
    assert "20,971,523 bytes" in reason
    assert "1 MiB" in reason


def test_one_byte_over_the_limit_is_refused() -> None:
    assert "limit" in refused(b"a" * (MAX_BYTES + 1))


def test_billion_laughs_is_refused_at_its_first_anchor() -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 9):
        refs = ",".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    # Refused at the first anchor, before anything could expand.
    reason = refused("\n".join(lines).encode())
    assert "anchor &a0" in reason


def test_deep_flow_nesting_is_refused() -> None:
    assert "nesting" in refused(b"[" * 10_000 + b"]" * 10_000)
    assert "nesting" in refused(b"{a: " * 10_000 + b"}" * 10_000)


def test_depth_limit_counts_collections() -> None:
    assert load(b"- " * MAX_DEPTH + b"x\n") is not None
    assert "deeper than" in refused(b"- " * MAX_DEPTH + b"[x]\n")


# --- scalar resolution --------------------------------------------------------------------

INF = math.inf

SCALARS: list[tuple[str, Any]] = [
    # null
    ("~", None),
    ("", None),
    ("null", None),
    ("Null", None),
    ("NULL", None),
    ("nULL", "nULL"),
    ("~foo", "~foo"),
    ("'~'", "~"),
    ('""', ""),
    # bool
    ("true", True),
    ("True", True),
    ("TRUE", True),
    ("false", False),
    ("False", False),
    ("FALSE", False),
    ("tRUE", "tRUE"),
    ("'true'", "true"),
    ('"false"', "false"),
    ("on", "on"),
    ("off", "off"),
    ("yes", "yes"),
    ("no", "no"),
    ("y", "y"),
    ("n", "n"),
    # int
    ("0", 0),
    ("7", 7),
    ("-7", -7),
    ("+1", 1),
    ("1234567890123456789012345", 1234567890123456789012345),
    ("-0", "-0"),
    ("+0", "+0"),
    ("00", "00"),
    ("0755", "0755"),
    ("0o17", "0o17"),
    ("0x10", "0x10"),
    ("0x1F", "0x1F"),
    ("0b101", "0b101"),
    ("1_000", "1_000"),
    ("1,000", "1,000"),
    ("190:20:30", "190:20:30"),
    ("12:30", "12:30"),
    ("'12'", "12"),
    # float
    ("1.5", 1.5),
    ("-2.0e3", -2000.0),
    ("1e3", 1000.0),
    ("1E-3", 0.001),
    ("+1.5e+2", 150.0),
    (".5", 0.5),
    ("-.5", -0.5),
    ("1.", 1.0),
    ("0.0", 0.0),
    ("-0.0", -0.0),
    ("007.5", 7.5),
    ("1e999", INF),
    (".inf", INF),
    (".Inf", INF),
    ("+.INF", INF),
    ("-.inf", -INF),
    (".nan", math.nan),
    (".NaN", math.nan),
    (".NAN", math.nan),
    ("inf", "inf"),
    ("nan", "nan"),
    ("-inf", "-inf"),
    (".", "."),
    ("1e", "1e"),
    ("e3", "e3"),
    ("1.5.2", "1.5.2"),
    ("1_000.5", "1_000.5"),
    ("1.0e3x", "1.0e3x"),
    ("'1.5'", "1.5"),
    # dates and other YAML 1.1 types stay strings
    ("2024-05-01", "2024-05-01"),
    ("2024-05-01T10:00:00Z", "2024-05-01T10:00:00Z"),
    ("=", "="),
    ("<<", "<<"),
    # quoted and block scalars
    ("'it''s'", "it's"),
    ('"tab\\there"', "tab\there"),
    ('"\\x00"', "\x00"),
    ("|\n  null\n", "null\n"),
    (">-\n  123\n", "123"),
]


@pytest.mark.parametrize(("text", "expected"), SCALARS, ids=[row[0] or "empty" for row in SCALARS])
def test_scalar_resolution(text: str, expected: Any) -> None:
    got = load(f"v: {text}\n".encode())["v"]
    assert same(got, expected), (got, expected)


def test_scalar_resolution_applies_to_keys_and_top_level() -> None:
    assert load(b"1: a\n'2': b\n~: c\n") == {1: "a", "2": "b", None: "c"}
    assert load(b"0755") == "0755"
    assert load(b"- 1e3\n- on\n") == [1000.0, "on"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("!!str 12", "12"),
        ("!!str true", "true"),
        ("!!str", ""),
        ("! 12", "12"),
        ("! true", "true"),
        ("!!int '12'", 12),
        ("!!int -3", -3),
        ("!!float 1", 1.0),
        ("!!float '.5'", 0.5),
        ("!!float .inf", INF),
        ("!!bool 'true'", True),
        ("!!null ''", None),
        ("!!null", None),
        ("!<tag:yaml.org,2002:str> 1", "1"),
        ("!!seq [1]", [1]),
        ("!!map {a: 1}", {"a": 1}),
        ("! [1]", [1]),
    ],
)
def test_plain_core_tags(text: str, expected: Any) -> None:
    assert same(load(f"v: {text}\n".encode())["v"], expected)


# --- dumping ------------------------------------------------------------------------------

DUMPERS = {"libyaml": yamlio._Dumper, "python": yamlio._PyDumper}


def dump_with(parser: str, value: Any) -> str:
    """`dump` on the emitter matching the parser under test, so both pairs are covered."""
    return yamlio._dump_with(DUMPERS[parser], value)


def roundtrip(parser: str, value: Any) -> Any:
    return load(dump_with(parser, value).encode())


@pytest.mark.parametrize(
    "text", ["true", "False", "0", "-7", "+1", "1e3", ".5", ".inf", "", "null", "~", "NULL"]
)
def test_strings_that_read_as_other_types_are_double_quoted(text: str) -> None:
    assert dump({"k": text}) == f'k: "{text}"\n'


@pytest.mark.parametrize("text", ["on", "yes", "0755", "2024-05-01", "1_000", "0x10", "12:30"])
def test_strings_yaml_1_1_would_misread_stay_quoted(text: str) -> None:
    written = dump({"k": text})
    assert written in (f"k: '{text}'\n", f'k: "{text}"\n')
    assert yaml.safe_load(written) == {"k": text}


def test_plain_values_are_written_plainly() -> None:
    value = {"s": "hello world", "i": 3, "f": 1.5, "t": True, "n": None, "e": 1e20}
    assert dump(value) == "s: hello world\ni: 3\nf: 1.5\nt: true\nn: null\ne: 1.0e+20\n"


def test_multiline_strings_use_literal_blocks() -> None:
    out = "line one\nline two: with colon\n  indented # not a comment\n"
    written = dump({"stdout": out})
    assert written.startswith("stdout: |\n")
    assert load(written.encode()) == {"stdout": out}
    assert dump({"x": "a\nb"}) == "x: |-\n  a\n  b\n"


@pytest.mark.parametrize(
    "text",
    [
        "trailing space \nnext",
        "tab\there\nnext",
        "cr\r\nlf",
        "nel\x85line",
        "ls\u2028ps\u2029",
        "bell\x07\n",
        "\n",
        "\n\n",
        "a\n\n",
        "\nleading",
        "  leading spaces\nx",
        "ends with space\n ",
        "bom\ufeff\nx",
    ],
)
def test_awkward_multiline_strings_round_trip(parser: str, text: str) -> None:
    assert roundtrip(parser, {"k": text, text: "v"}) == {"k": text, text: "v"}
    assert roundtrip(parser, text) == text
    assert roundtrip(parser, [text]) == [text]


def test_keys_keep_insertion_order_and_long_lines_are_not_folded() -> None:
    command = "pytest " + " ".join(f"tests/test_{i}.py" for i in range(60))
    written = dump({"zeta": 1, "alpha": {"passFailCommand": command}, "mid": 2})
    assert written.splitlines()[0] == "zeta: 1"
    assert f"  passFailCommand: {command}\n" in written
    assert list(load(written.encode())) == ["zeta", "alpha", "mid"]


def test_shared_sub_objects_are_written_out_in_full(parser: str) -> None:
    shared = ["x", {"y": [1, 2]}]
    value = {"a": shared, "b": shared, "c": [shared, shared]}
    written = dump_with(parser, value)
    assert "&" not in written
    assert "*" not in written
    assert load(written.encode()) == value


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, [math.nan, -math.inf]])
def test_non_finite_floats_round_trip(parser: str, value: Any) -> None:
    assert same(roundtrip(parser, {"v": value}), {"v": value})


def test_big_ints_and_odd_keys_round_trip(parser: str) -> None:
    value = {1: "int", None: "null", False: "bool", 2.5: "float", "1": "str"}
    assert same(roundtrip(parser, value), value)
    assert roundtrip(parser, 10**4000) == 10**4000


@pytest.mark.parametrize(
    "value", [{1, 2}, (1, 2), b"bytes", {"when": __import__("datetime").date(2024, 5, 1)}]
)
def test_dump_refuses_types_load_cannot_return(value: Any) -> None:
    with pytest.raises(TypeError, match="cannot write"):
        dump(value)


def test_dump_refuses_what_load_would_refuse() -> None:
    deep: list[Any] = []
    for _ in range(MAX_DEPTH):
        deep = [deep]
    with pytest.raises(YamlError, match="deeper than"):
        dump(deep)
    with pytest.raises(YamlError, match="limit"):
        dump({"stdout": "x" * MAX_BYTES})


# --- round trip property -------------------------------------------------------------------

TRICKY = [
    " leading",
    "trailing ",
    "key: value",
    "a #comment",
    "- item",
    "? q",
    "[x]",
    "{x}",
    "&anchor",
    "*alias",
    "!tag",
    "%directive",
    "@at",
    "`tick",
    "'single'",
    '"double"',
    "---",
    "...",
    "|",
    ">",
    "line\nbreak",
    "tab\tin",
    "crlf\r\n",
    "\x00nul",
    "émoji 🎉 ünïcödé",
    "\u2028",
    "\ufeff",
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "~",
    "null",
    "NULL",
    "true",
    "False",
    "0",
    "-0",
    "+1",
    "0755",
    "0x1F",
    "0o17",
    "1_000",
    "1e3",
    "1.5",
    ".5",
    "1.",
    ".inf",
    "-.INF",
    ".nan",
    "2024-05-01",
    "2024-05-01 10:00:00",
    "12:30",
    "=",
    "<<",
    "",
]

texts = st.one_of(
    st.sampled_from(TRICKY),
    st.text(max_size=30),
    st.text(alphabet=st.sampled_from(list(" \n\t:#-.0123456789eE+'\"ab|>~")), max_size=12),
    st.lists(st.sampled_from(TRICKY), max_size=4).map("".join),
)
scalars = st.one_of(
    texts,
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
)


def nested(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(children, max_size=4) | st.dictionaries(texts, children, max_size=4)


values = st.recursive(scalars, nested, max_leaves=20).filter(lambda v: depth(v) <= 5)


def depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    return 0


@settings(
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture],
)
@given(value=values)
def test_round_trip(parser: str, value: Any) -> None:
    written = dump_with(parser, value)
    assert same(load(written.encode()), value), written


# --- speed (printed, not asserted; run with -s) -------------------------------------------


@pytest.mark.slow
def test_print_load_speed(parser: str) -> None:
    if parser != "libyaml":
        pytest.skip("timed once, with the parser load uses")
    runs = 2000
    loaders: dict[str, Callable[[bytes], Any]] = {
        "yamlio.load": load,
        "yaml.safe_load": yaml.safe_load,
        "yaml.load(CSafeLoader)": lambda data: yaml.load(data, Loader=yaml.CSafeLoader),
    }
    for name, loader in loaders.items():
        assert loader(ENVELOPE)["id"] == "refactor-ledger-io"
        started = time.perf_counter()
        for _ in range(runs):
            loader(ENVELOPE)
        micros = (time.perf_counter() - started) / runs * 1e6
        print(f"\n{name:24s} {micros:8.1f} µs per load")
