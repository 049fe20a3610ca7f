"""The layering checks that import-linter's contracts (`.importlinter`) do not make: no import
cycle anywhere in taskfs/, and no module over 600 lines.

A cycle is looked for in grimp's graph of the package (the graph import-linter checks): an
import inside a function counts, one under `if TYPE_CHECKING:` does not (it never runs). Each
strongly connected set of modules is one finding, named with the modules in it and one cycle
through them, each import with its line.

Run as `python -m tests.layering [PACKAGE_DIR]` from the folder that holds the package (the
package is found as Python would import it, so that folder must come first on `sys.path`):
prints each finding and exits 1 when there is one.
"""

from __future__ import annotations

import itertools
import sys
from collections import deque
from pathlib import Path

import grimp

PACKAGE = "taskfs"
MAX_LINES = 600


def import_graph(package: str = PACKAGE) -> grimp.ImportGraph:
    # No cache: a stale one once hid every import of a folder that had just become a package.
    return grimp.build_graph(package, exclude_type_checking_imports=True, cache_dir=None)


def _components(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected sets of two or more modules (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.find_modules_directly_imported_by(nxt)))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    members: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        members.append(member)
                        if member == node:
                            break
                    if len(members) > 1:
                        found.append(sorted(members))
    return sorted(found)


def _shortest_cycle(graph: grimp.ImportGraph, members: list[str]) -> list[str]:
    """A shortest cycle through the first member, within the set: [a, b, ..., a]."""
    start, inside = members[0], set(members)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(graph.find_modules_directly_imported_by(node)):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if nxt in inside and nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    raise AssertionError(f"no cycle through {start} in {members}")  # a component always has one


def _line(graph: grimp.ImportGraph, importer: str, imported: str) -> str:
    lines = sorted(
        {d["line_number"] for d in graph.get_import_details(importer=importer, imported=imported)}
    )
    return ", ".join(f"l.{n}" for n in lines)


def find_cycles(graph: grimp.ImportGraph) -> list[str]:
    """One finding per set of modules that import each other in a circle, as text."""
    findings = []
    for members in _components(graph):
        cycle = _shortest_cycle(graph, members)
        steps = "\n".join(
            f"    {a} -> {b} ({_line(graph, a, b)})" for a, b in itertools.pairwise(cycle)
        )
        findings.append(
            f"import cycle among {len(members)} modules: {', '.join(members)}\n"
            f"  for example:\n{steps}"
        )
    return findings


def long_modules(package_dir: Path, limit: int = MAX_LINES) -> list[str]:
    """Every module under `package_dir` longer than `limit` lines, as text."""
    found = []
    for path in sorted(package_dir.rglob("*.py")):
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > limit:
            found.append(f"{path.relative_to(package_dir.parent)} has {count} lines (> {limit})")
    return found


def folders_without_init(package_dir: Path) -> list[str]:
    """Folders of Python modules that are not packages: grimp, so import-linter, cannot see
    them, and a contract would pass over whatever they import."""
    folders = {path.parent for path in package_dir.rglob("*.py")}
    return [
        str(folder.relative_to(package_dir.parent))
        for folder in sorted(folders)
        if not (folder / "__init__.py").exists()
    ]


def main(argv: list[str]) -> int:
    package_dir = Path(argv[0]) if argv else Path(PACKAGE)
    problems = [
        *(f"{folder} has no __init__.py" for folder in folders_without_init(package_dir)),
        *find_cycles(import_graph(package_dir.name)),
        *long_modules(package_dir),
    ]
    for problem in problems:
        print(problem)
    if not problems:
        print(f"{package_dir.name}: no import cycle, no module over {MAX_LINES} lines")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
