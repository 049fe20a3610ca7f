"""Where each ownership entry of the ledger sits, stored beside the ledger cache, so that a
check of a few new entries meets only the entries near them instead of indexing them all.

`new` and the watcher's intake check a new envelope's `filesAndInterfaces` against the open
tasks' entries, and the ledger cache keeps each task's overlaps with every other task's. Both
used to place every entry of the ledger in an `OwnershipIndex` per call: at 5,000 tasks that
is 15,000 entries read off their text (`globs.placement`), most of the work of a `new`.

An entry's place is a pure function of its text: its leading literal segments and whether it
is all literal. The places are kept, by entry text, in `<cache>/ledger-v*.places` (marshal);
an entry met for the first time is placed and the file rewritten. A query entry whose literal
prefix is P can only overlap an indexed entry whose literal prefix Q agrees with P as far as
the shorter of the two goes (one is a prefix of the other, segment by segment): the trie of
`OwnershipIndex` never meets any other. So `nearby` keeps only those (and every interface
entry, which costs nothing to index), and the real index, built from them alone, decides as
before. A damaged or foreign file is ignored and rebuilt; its content can only be a place
computed from the same text, never a verdict.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterable, Sequence
from typing import TypeVar

from taskfs.core import globs
from taskfs.readmodel import stamps

K = TypeVar("K")
SUFFIX = ".places"
FORMAT = 1
SAVE_AT = 256  # places learnt by one process before the file is written again
Names = tuple[str, ...]
Place = tuple[Names, bool]  # leading literal segments, all literal
FILED_DEPTH = 2  # places are filed by this many of their first segments


class Places:
    """The stored places, read once; `save` writes them back when new ones were computed."""

    def __init__(self, cache: str) -> None:
        self._path = cache + SUFFIX
        self._places: dict[str, Place] = _read(self._path)
        self._read_any = bool(self._places)
        self._added = 0
        # The entries placed so far, filed by the first two segments of their place, and those
        # files by their first segment; made when a query first needs them (`_agreeing`).
        self._filed: dict[Names, list[str]] | None = None
        self._below: dict[str, set[Names]] | None = None

    def of(self, raw: str) -> Place:
        found = self._places.get(raw)
        if found is None:
            names, literal = globs.placement(raw)  # the index's own rule
            found = self._places[raw] = (tuple(names), literal)
            self._added += 1
            if self._filed is not None:
                self._file(raw, found[0])
        return found

    def save(self) -> None:
        """Store the places learnt, when they are many: a few (a new task's) cost less to
        compute again than the whole file costs to write again on every write."""
        if self._added >= SAVE_AT or (self._added and not self._read_any):
            stamps.dump(self._path, (FORMAT, self._places))
            self._added = 0

    def nearby(
        self, records: Iterable[tuple[K, str]], queries: Sequence[str]
    ) -> list[tuple[K, str]]:
        """The (key, entry) of `records` that the entries `queries` can overlap: an interface
        entry of the same name as an interface query (the index compares interfaces by name
        alone, and never with paths), and every path entry whose place agrees with a path
        query's."""
        prefix = globs.INTERFACE_PREFIX
        names_asked = {q[len(prefix) :] for q in queries if q.startswith(prefix)}
        names_asked |= {globs.parse_entry(q).text for q in queries if q.startswith(prefix)}
        wanted = [self.of(q)[0] for q in queries if not q.startswith(prefix)]
        records = list(records)
        texts = {raw for _key, raw in records}
        near = {prefix + name for name in names_asked}
        if any(not p for p in wanted):  # no literal prefix: it meets every path
            near |= {raw for raw in texts if not raw.startswith(prefix)}
        elif wanted:
            near |= self._agreeing(texts, wanted)
        return [(key, raw) for key, raw in records if raw in near]

    def _agreeing(self, texts: set[str], wanted: list[Names]) -> set[str]:
        """The path entries among `texts` whose place agrees with one of `wanted` (none empty):
        one is a prefix of the other, segment by segment. Such a place is filed under the
        query's first one or two segments, or under none, or (for a query of one segment)
        under that segment and any second one."""
        prefix = globs.INTERFACE_PREFIX
        for raw in texts - self._places.keys():
            if not raw.startswith(prefix):
                self.of(raw)
        filed = self._filed
        if filed is None:
            filed = self._filed = {}
            for raw, (names, _literal) in self._places.items():
                key = names[:FILED_DEPTH]
                group = filed.get(key)
                if group is None:
                    filed[key] = [raw]
                else:
                    group.append(raw)
        above = {p[:i] for p in wanted for i in range(len(p) + 1)}
        files = {key for key in above if len(key) <= FILED_DEPTH}
        for p in wanted:
            if len(p) < FILED_DEPTH:
                files |= self._files_below().get(p[0], set())
        found: set[str] = set()
        for key in files:
            for raw in filed.get(key, ()):
                names = self._places[raw][0]
                if names in above or any(names[: len(p)] == p for p in wanted):
                    found.add(raw)
        return found & texts

    def _file(self, raw: str, names: Names) -> None:
        assert self._filed is not None
        key = names[:FILED_DEPTH]
        self._filed.setdefault(key, []).append(raw)
        if self._below is not None and len(key) == FILED_DEPTH:
            self._below.setdefault(key[0], set()).add(key)

    def _files_below(self) -> dict[str, set[Names]]:
        """The files of two segments, by their first (for a query of one segment)."""
        assert self._filed is not None
        if self._below is None:
            self._below = {}
            for key in self._filed:
                if len(key) == FILED_DEPTH:
                    self._below.setdefault(key[0], set()).add(key)
        return self._below


_opened: dict[str, Places] = {}


def opened(cache: str) -> Places:
    """The places stored beside `cache`, read once per process: a place is a pure function of
    an entry's text, so what one call placed holds for every later one (`new` checks its
    envelopes at intake and then updates the cache's overlaps with the same entries)."""
    found = _opened.get(cache)
    if found is None:
        found = _opened[cache] = Places(cache)
    return found


def _read(path: str) -> dict[str, Place]:
    try:
        with open(path, "rb") as handle:
            data = marshal.loads(handle.read())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not (isinstance(data, tuple) and len(data) == 2 and data[0] == FORMAT):
        return {}
    places = data[1]
    return places if type(places) is dict and _well_formed(places) else {}


def _well_formed(places: dict[object, object]) -> bool:
    """Whether every key is an entry's text and every value a place (a damaged file may
    still unmarshal): a few passes at C speed over ten thousand places."""
    values = places.values()
    if set(map(type, places)) - {str} or set(map(type, values)) - {tuple}:
        return False
    if set(map(len, values)) - {2}:  # type: ignore[arg-type]
        return False
    names = [place[0] for place in values]  # type: ignore[index]
    if set(map(type, names)) - {tuple} or {type(p[1]) for p in values} - {bool}:  # type: ignore[index]
        return False
    return not {type(name) for group in names for name in group} - {str}
