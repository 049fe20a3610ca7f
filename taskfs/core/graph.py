"""The dependsOn graph: cycles, and whether one task depends on another through any path.

Pure: the graph is a mapping from task id to the ids it depends on. Ids may name tasks that
do not exist yet (a plan can arrive in any order); they are simply nodes without edges.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

Graph = Mapping[str, Iterable[str]]


def find_cycle(graph: Graph, start: str) -> list[str] | None:
    """A dependency cycle through `start`, as `[start, ..., start]`, or None.

    Iterative depth-first search, so a long chain of tasks cannot exhaust the stack.
    """
    parents: dict[str, str] = {}
    stack: list[str] = [start]
    seen: set[str] = set()
    while stack:
        node = stack.pop()
        for dep in graph.get(node, ()):
            if dep == start:
                path = [node]
                while path[-1] != start:
                    path.append(parents[path[-1]])
                return [*reversed(path), start]
            if dep not in seen:
                seen.add(dep)
                parents[dep] = node
                stack.append(dep)
    return None


def depends_on(graph: Graph, task: str, other: str) -> bool:
    """Whether `task` depends on `other`, directly or through other tasks."""
    stack = list(graph.get(task, ()))
    seen: set[str] = set()
    while stack:
        node = stack.pop()
        if node == other:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(graph.get(node, ()))
    return False
