"""Where each ownership entry of the ledger sits, stored beside the ledger cache, so that a
check of a few new entries meets only the entries near them instead of indexing them all.

`new` and the watcher's intake check a new envelope's `filesAndInterfaces` against the open
tasks' entries, and the ledger cache keeps each task's overlaps with every other task's. Both
used to place every entry of the ledger in an `OwnershipIndex` per call: at 5,000 tasks that
is 15,000 entries read off their text (`globs.placement`), most of the work of a `new`.

An entry's place is a pure function of its text: its leading literal segments. A query entry
whose literal prefix is P can only overlap an indexed entry whose literal prefix Q agrees with
P as far as the shorter of the two goes (one is a prefix of the other, segment by segment):
the trie of `OwnershipIndex` never meets any other. Such a Q is filed under P's first one or
two segments, or under none, or (for a P of one segment) under that segment and any second
one. So the path entries are kept in `<cache>/ledger-v*.places` (marshal) filed under the
first two segments of their place (`file_of`), and `nearby` reads only the files a query's
place names, places what it finds there, and keeps those that agree (and every interface entry
of a name asked, which costs nothing to index); the real index, built from them alone, decides
as before. An entry met for the first time is filed, and the file written again once many
were. A damaged or foreign file is ignored and rebuilt: what it holds is only where an entry
is filed, computed from the entry's own text.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterable, Sequence
from typing import TypeVar

from taskfs.core import globs
from taskfs.readmodel import stamps

K = TypeVar("K")
SUFFIX = ".places"
FORMAT = 3  # 3: the files of entries, by the first two segments of their places
SAVE_AT = 256  # entries filed by one process before the file is written again
Names = tuple[str, ...]
FILED_DEPTH = 2
SEPARATOR = "\0"  # between the entries of a file: no entry's text holds it


def file_of(names: Names) -> str:
    """The file a place is kept in: its first two segments, joined by `/` (which no segment
    holds); "" for a place of none."""
    return "/".join(names[:FILED_DEPTH])


class Places:
    """The stored files of entries, read once; `save` writes them back when many entries were
    filed since."""

    def __init__(self, cache: str) -> None:
        self._path = cache + SUFFIX
        filing, files = _read(self._path)
        self._filing: dict[str, str] = filing  # entry text -> its file
        self._files: dict[str, str] = files  # file -> its entries, joined by SEPARATOR
        self._read_any = bool(filing)
        self._interfaces: set[str] = set()
        self._added = 0

    def place(self, raw: str) -> Names:
        """The leading literal segments of a path entry (`globs.placement`), which it is filed
        by; a new one is filed."""
        names = tuple(globs.placement(raw)[0])
        if raw not in self._filing:
            name = self._filing[raw] = file_of(names)
            held = self._files.get(name)
            self._files[name] = raw if held is None else held + SEPARATOR + raw
            self._added += 1
        return names

    def save(self) -> None:
        """Store the entries filed, when they are many: a few (a new task's) cost less to file
        again than the whole file costs to write again on every write."""
        if self._added >= SAVE_AT or (self._added and not self._read_any):
            stamps.dump(self._path, (FORMAT, self._filing, self._files))
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
        wanted = [self.place(q) for q in queries if not q.startswith(prefix)]
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
        one is a prefix of the other, segment by segment."""
        prefix = globs.INTERFACE_PREFIX
        for raw in texts - self._filing.keys() - self._interfaces:
            if raw.startswith(prefix):
                self._interfaces.add(raw)  # never filed; not looked at again by this process
            else:
                self.place(raw)
        above = {p[:i] for p in wanted for i in range(len(p) + 1)}
        names = {file_of(p) for p in above}
        for first in {p[0] for p in wanted if len(p) < FILED_DEPTH}:  # and every second one
            names |= {name for name in self._files if name.startswith(first + "/")}
        found: set[str] = set()
        for name in names:
            held = self._files.get(name)
            for raw in held.split(SEPARATOR) if held else ():
                place = tuple(globs.placement(raw)[0])
                if place in above or any(place[: len(p)] == p for p in wanted):
                    found.add(raw)
        return found & texts


_opened: dict[str, Places] = {}


def opened(cache: str) -> Places:
    """The places stored beside `cache`, read once per process: where an entry is filed is a
    pure function of its text, so what one call filed holds for every later one (`new` checks
    its envelopes at intake and then updates the cache's overlaps with the same entries)."""
    found = _opened.get(cache)
    if found is None:
        found = _opened[cache] = Places(cache)
    return found


def _read(path: str) -> tuple[dict[str, str], dict[str, str]]:
    try:
        with open(path, "rb") as handle:
            data = marshal.loads(handle.read())
    except (OSError, EOFError, ValueError, TypeError):
        return {}, {}
    if not (type(data) is tuple and len(data) == 3 and data[0] == FORMAT):
        return {}, {}
    _format, filing, files = data
    if type(filing) is dict and type(files) is dict and _well_formed(filing, files):
        return filing, files
    return {}, {}


def _well_formed(filing: dict[object, object], files: dict[object, object]) -> bool:
    """Whether every entry names a file there and the files hold as many entries as were
    filed (a damaged file may still unmarshal): a few passes at C speed over ten thousand
    entries. Which file holds which entry is not checked one by one (that would cost what
    the file saves): the cache's files are this checkout's own, written by taskfs alone."""
    for mapping in (filing, files):
        if set(map(type, mapping)) - {str} or set(map(type, mapping.values())) - {str}:
            return False
    if not files.keys() >= set(filing.values()) or "" in files.values():
        return False
    joined = SEPARATOR.join(files.values())  # type: ignore[arg-type]
    held = joined.count(SEPARATOR) + 1 if files else 0  # the entries of all files

    return held == len(filing)
