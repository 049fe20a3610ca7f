"""Safe, strict YAML for ledger files: `load` reads untrusted bytes, `dump` writes them back.

`load(data)` accepts exactly one YAML document of at most `MAX_BYTES` (1 MiB) of UTF-8 (a
leading byte-order mark is allowed) and returns dicts, lists, str, int, float, bool and None.
It builds the value itself from the parser's event stream (libyaml's C parser when PyYAML has
it, else the pure-Python one), so it refuses with a `YamlError` rather than trusting the
loader: anchors and aliases (even unused ones), any tag other than the plain core ones
(`!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, `!!seq`, `!!map` and the non-specific `!`),
duplicate mapping keys (keys that compare equal in Python, such as `1`, `1.0` and `true`, are
duplicates), keys that are mappings or sequences, a second document, an empty stream, and
nesting deeper than `MAX_DEPTH` collections.

Plain scalars resolve by the YAML 1.2 core schema, narrowed so that nothing surprises:

- null: `~`, `null`, `Null`, `NULL` or nothing at all;
- bool: `true`, `True`, `TRUE`, `false`, `False`, `FALSE`;
- int: decimal without leading zeros, `0|[-+]?[1-9][0-9]*` (`0755`, `-0`, `0x1F` and
  `1_000` are strings);
- float: `[-+]?([0-9]+\\.[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?`, `[-+]?[0-9]+[eE][-+]?[0-9]+`,
  `[-+]?.inf` and `.nan` (each in lower, Title or UPPER case);
- everything else is a string (`yes`, `on`, `2024-05-01`, `12:30`). Quoted and block scalars
  are always strings.

`dump(value)` writes block-style YAML that `load` reads back to an equal value, quoting every
string that would otherwise read as something else and writing multi-line strings as literal
blocks (`|`) where that is exact. It never writes anchors or aliases, raises TypeError
for types other than those `load` returns, and YamlError for a value `load` would refuse
(nested deeper than `MAX_DEPTH`, or over `MAX_BYTES` once written).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container
from typing import TYPE_CHECKING, Any, Protocol

import yaml
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.scanner import Scanner

__all__ = ["MAX_BYTES", "MAX_DEPTH", "YamlError", "dump", "load"]

MAX_BYTES = 1024 * 1024
MAX_DEPTH = 64


class YamlError(ValueError):
    """Refused YAML; `reason` is one sentence a person can act on."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --- scalar resolution -------------------------------------------------------------------

_CORE = "tag:yaml.org,2002:"
_NAN = float("nan")  # one shared object, so that a repeated `.nan` key is found as a duplicate
_INF = float("inf")
_INF_WORDS = (".inf", ".Inf", ".INF")
_SPECIAL: dict[str, Any] = {
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
    **dict.fromkeys([*_INF_WORDS, *("+" + word for word in _INF_WORDS)], _INF),
    **dict.fromkeys(["-" + word for word in _INF_WORDS], -_INF),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), _NAN),
}
_NUMBER_START = frozenset("0123456789+-.")
_INT = re.compile(r"0|[-+]?[1-9][0-9]*")
_FLOAT = re.compile(
    r"[-+]?(?:(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+)"
)
_MAX_INT_DIGITS = 4300  # CPython's default limit for int(str)
_MISSING = object()


class _IntTooLong(Exception):
    pass


def _plain(text: str) -> Any:
    """The value of an untagged plain scalar."""
    value = _SPECIAL.get(text, _MISSING)
    if value is not _MISSING:
        return value
    if text[0] in _NUMBER_START:
        if _INT.fullmatch(text):
            if len(text) > _MAX_INT_DIGITS:
                raise _IntTooLong
            return int(text)
        if _FLOAT.fullmatch(text):
            return float(text)
    return text


# The types each core scalar tag accepts from the plain resolution (`!!float 1` is 1.0).
_SCALAR_TAGS: dict[str, tuple[type, ...]] = {
    "null": (type(None),),
    "bool": (bool,),
    "int": (int,),
    "float": (float, int),
}


def _tagged(event: Any) -> Any:
    """The value of a scalar with an explicit tag."""
    tag, text = event.tag, event.value
    if tag == "!" or tag == _CORE + "str":
        return text
    name = tag[len(_CORE) :] if tag.startswith(_CORE) else ""
    if name in ("seq", "map"):
        raise YamlError(f"tag {_show_tag(tag)} at {_at(event)} cannot be used on a plain value")
    kinds = _SCALAR_TAGS.get(name)
    if kinds is None:
        raise _tag_refused(event)
    value = _plain(text)
    if type(value) not in kinds:
        raise YamlError(f"{_show(text)} at {_at(event)} is not a valid {_show_tag(tag)}")
    return float(value) if name == "float" else value


_COLLECTION_TAGS = {
    MappingStartEvent: ("!", _CORE + "map"),
    SequenceStartEvent: ("!", _CORE + "seq"),
}


def _check_collection(event: Any, depth: int, as_key: bool) -> None:
    if as_key:
        kind = "mapping" if event.__class__ is MappingStartEvent else "sequence"
        raise YamlError(f"a {kind} used as a key at {_at(event)}; keys must be plain values")
    if event.anchor is not None:
        raise _anchor_refused(event)
    tag = event.tag
    if tag is not None and tag not in _COLLECTION_TAGS[event.__class__]:
        if tag.startswith(_CORE) and tag[len(_CORE) :] in ("str", "map", "seq", *_SCALAR_TAGS):
            kind = "mapping" if event.__class__ is MappingStartEvent else "sequence"
            raise YamlError(f"tag {_show_tag(tag)} at {_at(event)} cannot be used on a {kind}")
        raise _tag_refused(event)
    if depth >= MAX_DEPTH:
        raise YamlError(f"nesting deeper than {MAX_DEPTH} levels at {_at(event)}")


# --- messages ----------------------------------------------------------------------------


def _at(event: Any) -> str:
    return _where(event.start_mark)


def _where(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _show_tag(tag: str) -> str:
    return "!!" + tag[len(_CORE) :] if tag.startswith(_CORE) else tag


def _anchor_refused(event: Any) -> YamlError:
    return YamlError(
        f"anchor &{event.anchor} at {_at(event)}: anchors and aliases are not allowed; "
        "write the value out in full"
    )


def _tag_refused(event: Any) -> YamlError:
    return YamlError(
        f"tag {_show_tag(event.tag)} at {_at(event)} is not allowed; only !!str, !!int, "
        "!!float, !!bool, !!null, !!seq and !!map are"
    )


def _parser_refused(error: yaml.YAMLError) -> YamlError:
    if not isinstance(error, yaml.MarkedYAMLError) or error.problem_mark is None:
        return YamlError(f"not valid YAML: {error}")
    reason = f"{error.problem} at {_where(error.problem_mark)}"
    if error.context and error.context_mark is not None:
        reason += f" ({error.context} at {_where(error.context_mark)})"
    return YamlError(reason)


# --- bytes to text -----------------------------------------------------------------------

_UTF8_BOM = b"\xef\xbb\xbf"
_NON_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _decode(data: bytes) -> str:
    if len(data) > MAX_BYTES:
        raise YamlError(f"the file is {len(data):,} bytes, over the limit of {MAX_BYTES:,} (1 MiB)")
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise YamlError(
            "the file is UTF-16 or UTF-32 (byte-order mark at byte offset 0); save it as UTF-8"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        offset = error.start + (3 if data.startswith(_UTF8_BOM) else 0)
        line = data.count(b"\n", 0, offset) + 1
        raise YamlError(
            f"not UTF-8: byte 0x{data[offset]:02x} at byte offset {offset} (line {line}); "
            "save the file as UTF-8"
        ) from None
    bad = _NON_PRINTABLE.search(text)
    if bad is not None:
        index = bad.start()
        line = text.count("\n", 0, index) + 1
        column = index - text.rfind("\n", 0, index)
        raise YamlError(
            f"control character U+{ord(bad.group()):04X} at line {line}, column {column}; "
            "remove it or write it as an escape in a double-quoted string"
        )
    return text


# --- events to value ---------------------------------------------------------------------


class _EventSource(Protocol):
    def get_event(self) -> Any: ...


class _PyParser(Reader, Scanner, Parser):
    """PyYAML's pure-Python parser, for when libyaml is missing."""

    def __init__(self, text: str) -> None:
        Reader.__init__(self, text)
        Scanner.__init__(self)
        Parser.__init__(self)


def _pick_parser() -> Callable[[str], _EventSource]:
    try:
        from yaml._yaml import CParser
    except ImportError:
        return _PyParser
    return CParser


_new_parser = _pick_parser()
_NO_KEY = object()


def load(data: bytes) -> Any:
    """The value of the single YAML document in `data`; YamlError when it is refused."""
    text = _decode(data)
    try:
        return _build(_new_parser(text))
    except yaml.YAMLError as error:
        raise _parser_refused(error) from None


def _build(parser: _EventSource) -> Any:
    # One flat loop with an explicit stack: no recursion, and as little Python per event as
    # possible, since ledgers are read thousands of times per command.
    root: list[Any] = []
    current: list[Any] | dict[Any, Any] = root
    stack: list[list[Any] | dict[Any, Any]] = []
    key: Any = _NO_KEY
    event: Any = None
    try:
        while True:
            event = parser.get_event()
            cls = event.__class__
            if cls is ScalarEvent:
                value = _scalar(event)
                opened = False
            elif cls is MappingStartEvent or cls is SequenceStartEvent:
                _check_collection(event, len(stack), key is _NO_KEY and type(current) is dict)
                value = {} if cls is MappingStartEvent else []
                opened = True
            elif cls is MappingEndEvent or cls is SequenceEndEvent:
                current = stack.pop()
                continue
            elif _end_of_stream(event, root):
                break
            else:
                continue

            if type(current) is list:
                current.append(value)
            elif key is _NO_KEY:
                key = _new_key(current, value, event)
            else:
                current[key] = value
                key = _NO_KEY
            if opened:
                stack.append(current)
                current = value
    except _IntTooLong:
        raise YamlError(f"the integer at {_at(event)} has too many digits") from None
    if not root:
        raise YamlError("empty: the file holds no YAML document, only blank lines or comments")
    return root[0]


def _scalar(event: Any) -> Any:
    if event.anchor is not None:
        raise _anchor_refused(event)
    if event.tag is not None:
        return _tagged(event)
    if event.style:  # quoted or block; plain is '' from libyaml and None from PyYAML
        return event.value
    return _plain(event.value)


def _new_key(mapping: Container[Any], key: Any, event: Any) -> Any:
    if key in mapping:
        raise YamlError(f"duplicate key {_show(event.value)} at {_at(event)}")
    return key


def _end_of_stream(event: Any, root: list[Any]) -> bool:
    """Whether the stream ends here; refuses an alias or a second document on the way."""
    cls = event.__class__
    if cls is StreamEndEvent:
        return True
    if cls is AliasEvent:
        raise YamlError(
            f"alias *{event.anchor} at {_at(event)}: anchors and aliases are not allowed; "
            "write the value out in full"
        )
    # Every document holds a node, so a document start after one has been read is a second.
    if cls is DocumentStartEvent and root:
        raise YamlError(
            f"more than one document: a second one starts at {_at(event)}; "
            "keep one document per file"
        )
    return False


# --- value to text -----------------------------------------------------------------------

if TYPE_CHECKING:
    _RulesBase = yaml.SafeDumper
    _DumperBase = yaml.SafeDumper
else:
    _RulesBase = object
    _DumperBase = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

_STR_TAG = _CORE + "str"
_MAP_TAG, _SEQ_TAG = _CORE + "map", _CORE + "seq"
_BOOL_TAG, _INT_TAG, _NULL_TAG = _CORE + "bool", _CORE + "int", _CORE + "null"
_WRITABLE = frozenset({dict, list, str, int, float, bool, type(None)})
# Only double quotes escape these line breaks: PyYAML's emitter writes them raw in plain and
# single-quoted scalars, where a loader folds them into a space, and a block would read them
# back as \n. For tabs, \r, control characters and trailing spaces the emitter itself falls
# back from `|` to double quotes.
_ODD_BREAK = re.compile("[\x85\u2028\u2029]")


def _reads_as_str(text: str) -> bool:
    """Whether `load` reads `text`, written as a plain scalar, back as that string."""
    try:
        return type(_plain(text)) is str
    except _IntTooLong:
        return False


class _Rules(_RulesBase):
    """What `dump` changes in PyYAML's safe dumper; mixed into the C or the Python one."""

    _depth = 0

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def represent_data(self, data: Any) -> Node:
        # The nodes PyYAML's safe representer makes, made here for the types a ledger file
        # holds (a thousand envelopes and statuses are written per bulk `new`): no alias
        # bookkeeping (there are none), no lookup of a representer along the type's MRO.
        cls = type(data)
        if cls is str:
            return self.represent_str(data)
        if cls is dict or cls is list:
            self._depth += 1
            try:
                if self._depth > MAX_DEPTH:
                    raise YamlError(f"the value nests deeper than {MAX_DEPTH} levels")
                if cls is dict:
                    pairs = [
                        (self.represent_data(k), self.represent_data(v)) for k, v in data.items()
                    ]
                    return MappingNode(_MAP_TAG, pairs, flow_style=self.default_flow_style)
                items = [self.represent_data(item) for item in data]
                return SequenceNode(_SEQ_TAG, items, flow_style=self.default_flow_style)
            finally:
                self._depth -= 1
        if cls is bool:
            return ScalarNode(_BOOL_TAG, "true" if data else "false", style=self.default_style)
        if cls is int:
            return ScalarNode(_INT_TAG, str(data), style=self.default_style)
        if data is None:
            return ScalarNode(_NULL_TAG, "null", style=self.default_style)
        if cls is not float:
            raise TypeError(
                f"cannot write {cls.__name__} as YAML: only dict, list, str, int, float, bool "
                "and None"
            )
        return super().represent_data(data)

    def represent_str(self, data: str) -> ScalarNode:
        # Other scalars need no help: PyYAML's YAML 1.1 resolver reads every int, float, bool
        # and null as `load` does (or the emitter adds a tag, which `load` accepts), and a
        # string it would misread (`yes`, `0755`) comes out quoted.
        style = None
        if not _reads_as_str(data) or _ODD_BREAK.search(data):
            style = '"'
        elif "\n" in data:
            style = "|"
        return self.represent_scalar(_STR_TAG, data, style=style)


class _Dumper(_Rules, _DumperBase):
    """The dumper `dump` uses: on libyaml's emitter when PyYAML has it."""


class _PyDumper(_Rules, yaml.SafeDumper):
    """The same rules on PyYAML's pure-Python emitter."""


_Dumper.add_representer(str, _Dumper.represent_str)
_PyDumper.add_representer(str, _PyDumper.represent_str)


def dump(value: Any) -> str:
    """Block-style YAML text for `value`, which `load` reads back as an equal value."""
    return _dump_with(_Dumper, value)


def _dump_with(dumper: type[yaml.SafeDumper], value: Any) -> str:
    text: str = yaml.dump(
        value,
        Dumper=dumper,
        allow_unicode=True,
        default_flow_style=False,
        sort_keys=False,
        width=1 << 30,
    )
    if len(text) * 4 > MAX_BYTES and len(text.encode()) > MAX_BYTES:
        raise YamlError(f"the YAML text would be over the limit of {MAX_BYTES:,} bytes (1 MiB)")
    return text
