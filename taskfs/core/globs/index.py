"""`OwnershipIndex`: many tasks' entries in a trie on their leading literal segments, walked
with the query glob's automaton, so a query only meets the entries that could share its leading
directories; entries given as text are placed without being parsed, and parsed when a query
first meets them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeAlias, TypeVar

from taskfs.core.globs.automata import _GLOBSTAR, _compile, _Globstar, _Item, _Pattern, matches
from taskfs.core.globs.parse import parse_entry
from taskfs.core.globs.relations import overlap
from taskfs.core.globs.syntax import _WILDCARD, INTERFACE_PREFIX, Entry

K = TypeVar("K")

# (order added, key, raw text, the entry when it was given parsed). A plain tuple of strings
# and numbers, which the garbage collector stops tracking: an index holds tens of thousands.
_Record: TypeAlias = "tuple[int, K, str, Entry | None]"


def _entry_of(record: _Record[K]) -> Entry:
    return record[3] or parse_entry(record[2])  # parse_entry is memoised


def _order(record: _Record[K]) -> int:
    return record[0]


class _Node(Generic[K]):
    """A trie node. Thousands are built per check, so they hold nothing until they need to."""

    __slots__ = ("children", "exact", "open")

    def __init__(self) -> None:
        self.children: dict[str, _Node[K]] | None = None
        self.exact: list[_Record[K]] | None = None  # literal paths ending here
        self.open: list[_Record[K]] | None = None  # entries whose literal prefix ends here

    def child(self, name: str) -> _Node[K]:
        if self.children is None:
            self.children = {}
        found = self.children.get(name)
        if found is None:
            found = self.children[name] = _Node()
        return found


def placement(text: str) -> tuple[list[str], bool]:
    """The leading segments of a path entry with no wildcard character, and whether that is
    all of it (a literal path), read off the text without parsing it.

    Works on a raw entry as on a normalised one. A class of one character (`[a]`) counts as a
    wildcard here, so such an entry sits higher in the trie than it could: it then meets more
    queries, never fewer, and `overlap` decides.
    """
    wildcard = _WILDCARD.search(text)
    if wildcard is None:
        names, literal = text.split("/"), not text.endswith("/")
    else:
        names, literal = text[: wildcard.start()].split("/")[:-1], False
    return [name for name in names if name and name != "."], literal


class OwnershipIndex(Generic[K]):
    """Entries of many tasks, for finding the ones a new entry overlaps or a path matches.

    Path entries sit in a trie on their leading literal segments; a query walks the trie with
    its own glob and meets only the entries whose literal prefix it can match. Adding is cheap:
    an entry given as text is placed by its literal prefix alone and parsed only when a query
    first reaches it, so a check against thousands of open tasks pays for the few entries
    near the query, not for all of them. Text given to `add` must be a valid entry (as in
    every envelope that passed validation); a broken one raises `EntryError` when met.
    """

    def __init__(self) -> None:
        self._root: _Node[K] = _Node()
        self._interfaces: dict[str, list[_Record[K]]] = {}
        self._count = 0

    def add(self, key: K, entry: Entry | str) -> None:
        raw, parsed = (entry, None) if isinstance(entry, str) else (entry.raw, entry)
        record: _Record[K] = (self._count, key, raw, parsed)
        self._count += 1
        if raw.startswith(INTERFACE_PREFIX):
            name = parsed.text if parsed is not None else raw[len(INTERFACE_PREFIX) :]
            self._interfaces.setdefault(name, []).append(record)
            return
        prefix, literal = placement(parsed.text if parsed is not None else raw)
        node = self._root
        for name in prefix:
            node = node.child(name)
        if literal:
            if node.exact is None:
                node.exact = []
            node.exact.append(record)
        else:
            if node.open is None:
                node.open = []
            node.open.append(record)

    def conflicts(self, entry: Entry) -> Iterator[tuple[K, Entry, str]]:
        """(key, indexed entry, witness) for every indexed entry that overlaps `entry`."""
        if entry.kind == "interface":
            for record in self._interfaces.get(entry.text, ()):
                yield record[1], _entry_of(record), INTERFACE_PREFIX + entry.text
            return
        for record in sorted(self._candidates(_compile(entry.text)), key=_order):
            other = _entry_of(record)
            witness = overlap(entry, other)
            if witness is not None:
                yield record[1], other, witness

    def matching(self, path: str) -> Iterator[tuple[K, Entry]]:
        """(key, indexed entry) for every indexed entry that matches the concrete `path`
        (a repository path as git writes it, or `interface:<name>`), in the order added."""
        if path.startswith(INTERFACE_PREFIX):
            for record in self._interfaces.get(path[len(INTERFACE_PREFIX) :], ()):
                yield record[1], _entry_of(record)
            return
        found: list[_Record[K]] = []
        node: _Node[K] | None = self._root
        for name in path.split("/"):
            assert node is not None
            found += node.open or ()
            node = node.children.get(name) if node.children else None
            if node is None:
                break
        else:
            assert node is not None
            found += (node.open or []) + (node.exact or [])
        for record in sorted(found, key=_order):
            other = _entry_of(record)
            if matches(other, path):
                yield record[1], other

    def _candidates(self, pattern: _Pattern) -> list[_Record[K]]:
        items = pattern.items
        # positions from which the rest of the glob can match no further segment
        done = {p for p in range(len(items) + 1) if all(i is _GLOBSTAR for i in items[p:])}
        found: list[_Record[K]] = []
        met: set[int] = set()
        seen: set[tuple[int, int]] = set()
        todo: list[tuple[_Node[K], int]] = [(self._root, 0)]
        while todo:
            node, pos = todo.pop()
            if (id(node), pos) in seen:
                continue
            seen.add((id(node), pos))
            if id(node) not in met:
                met.add(id(node))
                found.extend(node.open or ())
            if pos in done:
                found.extend(node.exact or ())
            if pos < len(items) and items[pos] is _GLOBSTAR:
                todo.append((node, pos + 1))  # ** matching no segment
            if node.children:
                todo.extend(_descend(node.children, items, pos))
        return list({r[0]: r for r in found}.values())


def _descend(
    children: dict[str, _Node[K]], items: tuple[_Item, ...], pos: int
) -> Iterator[tuple[_Node[K], int]]:
    if pos == len(items):
        return
    item = items[pos]
    if isinstance(item, _Globstar):
        yield from ((child, pos) for child in children.values())
        return
    if item.literal is not None:
        found = children.get(item.literal)
        if found is not None:
            yield found, pos + 1
    else:
        for name, child in children.items():
            if item.match(name):
                yield child, pos + 1
