"""Rules on an envelope that need the repository or the whole ledger, shared by `new`, the
watcher's intake, `validate` and `audit`, so that a task committed with plain git is named by
`validate` for exactly what `new` would have refused.

* No entry may reach into the ledger: the ledger folder (`tasks/` by default), `.git/` and
  `.taskfs/` are written by every agent and owned by none (`globs.reaches_below` gives the
  precise rule: a bare `*` or `**` segment never reaches into them, so `**` still means every
  other file).
* A `parent` must be another task of the ledger, and the parent chain must not loop.
* A `dependsOn` cycle is named once, with a bounded text however long it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from taskfs.core import globs
from taskfs.core.delegation import Known, loop
from taskfs.core.facts import EnvelopeFacts
from taskfs.core.layout import FIXED_LEDGER_FOLDERS
from taskfs.errors import Problem, problem

# The folders no entry may reach into, besides the configured ledger folder.
# How many ids a cycle or chain shows at each end when it is longer than twice as many.
SHOWN_AT_EACH_END = 10


def ledger_folders(tasks_rel: str) -> tuple[str, ...]:
    return (tasks_rel, *FIXED_LEDGER_FOLDERS)


def ledger_entries(envelope: EnvelopeFacts, folders: Sequence[str]) -> list[Problem]:
    """`files_and_interfaces_invalid` for each entry that can match a file of the ledger."""
    problems: list[Problem] = []
    for index, raw in enumerate(envelope.files_and_interfaces):
        try:
            entry = globs.parse_entry(raw)
        except globs.EntryError:
            continue  # named by the envelope's own validation
        reached = [folder for folder in folders if globs.reaches_below(entry, folder)]
        if reached:
            problems.append(
                problem(
                    "files_and_interfaces_invalid",
                    field=f"filesAndInterfaces[{index}]",
                    id=envelope.id,
                    value=raw,
                    reason=f"it can match files below {reached[0]}/, which is the ledger "
                    "(or git's own folder): every agent writes there and no task can own it",
                )
            )
    return problems


def batch_problems(
    envelopes: Sequence[EnvelopeFacts], folders: Sequence[str]
) -> list[list[Problem]]:
    """What `new` refuses of `envelopes` submitted together that they show without the ledger,
    for each: entries reaching into it (`ledger_entries`) and a parent chain that loops among
    them, a parent that is the task itself included (`delegation.loop`). `validate FILE...`
    asks this; `new` applies the same two rules (`rules.Admission`)."""
    known = {e.id: Known(e) for e in envelopes if e.id is not None}
    out = []
    for envelope in envelopes:
        looped = loop(envelope, known)
        out.append(ledger_entries(envelope, folders) + ([looped] if looped else []))
    return out


def shown_chain(ids: Sequence[str]) -> tuple[list[str], str]:
    """A chain of ids as a bounded list and text: both ends, and how many were left out."""
    if len(ids) <= 2 * SHOWN_AT_EACH_END + 1:
        return list(ids), " -> ".join(ids)
    head, tail = ids[:SHOWN_AT_EACH_END], ids[-SHOWN_AT_EACH_END:]
    left_out = len(ids) - 2 * SHOWN_AT_EACH_END
    text = f"{' -> '.join(head)} -> ... ({left_out} more) ... -> {' -> '.join(tail)}"
    return [*head, *tail], text


def cycle_problem(task_id: str, cycle: Sequence[str]) -> Problem:
    shown, text = shown_chain(cycle)
    return problem(
        "dependency_cycle",
        field="dependsOn",
        id=task_id,
        cycle=shown,
        cycle_length=len(cycle) - 1,
        cycle_text=text,
    )


def ledger_cycles(graph: Mapping[str, Iterable[str]]) -> list[Problem]:
    """One `dependency_cycle` per strongly connected group of tasks that loops, however many
    tasks are on it (Tarjan's algorithm, iterative: O(tasks + edges))."""
    from taskfs.core.graph import find_cycle

    problems = []
    for group in _loops(graph):
        start = min(group)
        cycle = find_cycle({k: [d for d in graph.get(k, ()) if d in group] for k in group}, start)
        if cycle is not None:
            problems.append(cycle_problem(start, cycle))
    return problems


def _loops(graph: Mapping[str, Iterable[str]]) -> list[set[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1 or node in set(graph.get(node, ())):
                    groups.append(group)
    return groups


def parent_problems(envelopes: Sequence[EnvelopeFacts]) -> list[Problem]:
    """For tasks already in the ledger: a parent that is the task itself or loops
    (`delegation_loop`), or that is not in the ledger (`parent_not_found`), as `new` refuses
    them. Each loop is named once."""
    known = {e.id: e.parent for e in envelopes if e.id is not None}
    problems: list[Problem] = []
    looped: set[frozenset[str]] = set()
    for envelope in envelopes:
        if envelope.parent is None or envelope.id is None:
            continue
        chain = _chain(envelope.id, known)
        if chain[-1] in chain[:-1]:
            loop = chain[chain.index(chain[-1]) :]
            if frozenset(loop) not in looped:
                looped.add(frozenset(loop))
                shown, text = shown_chain(chain)
                problems.append(
                    problem(
                        "delegation_loop",
                        field="parent",
                        id=chain[-1],
                        chain=shown,
                        chain_text=text,
                    )
                )
        elif envelope.parent not in known:
            problems.append(
                problem("parent_not_found", field="parent", id=envelope.id, parent=envelope.parent)
            )
    return problems


def _chain(task_id: str, parents: Mapping[str, str | None]) -> list[str]:
    """`task_id` and its ancestors, ending at a task that is missing or repeats (then named
    twice). Linear in the chain's length."""
    chain, seen = [task_id], {task_id}
    current = parents.get(task_id)
    while current is not None:
        chain.append(current)
        if current in seen or current not in parents:
            break
        seen.add(current)
        current = parents[current]
    return chain
