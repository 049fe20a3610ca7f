"""The task graph as Mermaid (renders in GitHub markdown) or Graphviz DOT, coloured by state.

A solid arrow `a --> b` reads "a needs b" (dependsOn); a thick arrow `p ==> c` reads "p
delegated c" (parent); a dotted arrow `a -.-> b` reads "a's work was handed on to b", labelled
how (reassigned, retried), or "b was found while working on a" (discovered: a follow-up, a
request or the task it became). A node drawn dashed is named by a task but not in the ledger
(yet); an archived task is drawn in its final state, marked archived.
"""

from __future__ import annotations

from taskfs import i18n
from taskfs.api.views.reports import Node, TaskGraph
from taskfs.core.lifecycle import STATES
from taskfs.report.style import MISSING_COLOURS, state_colours


def _state(node: Node) -> str:
    if node.state is None:
        return "not in the ledger"
    return i18n.say("{state}, archived", state=node.state) if node.archived else node.state


def _label(node: Node) -> str:
    return f"{node.id}\\n{_state(node)}"


def mermaid(graph: TaskGraph) -> str:
    # Task ids may hold '.', which Mermaid node ids may not: number the nodes instead.
    names = {node.id: f"t{i}" for i, node in enumerate(graph.nodes)}
    lines = ["flowchart LR"]
    for node in graph.nodes:
        label = f"{node.id}<br/><i>{_state(node)}</i>"
        lines.append(f'  {names[node.id]}["{label}"]:::{node.state or "missing"}')
    for edge in graph.edges:
        lines.append(f"  {names[edge.source]} {_arrow(edge.kind)} {names[edge.target]}")
    for state in (*STATES, "intake"):
        fill, ink = state_colours(state)
        lines.append(f"  classDef {state} fill:{fill},stroke:{ink},color:{ink}")
    fill, ink = MISSING_COLOURS
    lines.append(f"  classDef missing fill:{fill},stroke:{ink},color:{ink},stroke-dasharray:4")
    return "\n".join(lines) + "\n"


# How each kind of edge is drawn: (Mermaid arrow, DOT attributes). Any other kind is work
# handed on (reassigned, retried), drawn dotted and labelled with its kind.
_EDGES = {
    "dependsOn": ("-->|needs|", 'label="needs"'),
    "parent": ("==>|delegated|", 'label="delegated", penwidth=2'),
}


def _arrow(kind: str) -> str:
    return _EDGES[kind][0] if kind in _EDGES else f"-.->|{kind}|"


def _dot_attributes(kind: str) -> str:
    return _EDGES[kind][1] if kind in _EDGES else f'label="{kind}", style=dashed'


def dot(graph: TaskGraph) -> str:
    lines = [
        "digraph taskfs {",
        "  rankdir=LR;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica"];',
    ]
    for node in graph.nodes:
        fill, ink = state_colours(node.state)
        style = "" if node.state else ', style="rounded,dashed"'
        lines.append(
            f'  "{node.id}" [label="{_label(node)}", fillcolor="{fill}", '
            f'color="{ink}", fontcolor="{ink}"{style}];'
        )
    for edge in graph.edges:
        lines.append(f'  "{edge.source}" -> "{edge.target}" [{_dot_attributes(edge.kind)}];')
    lines.append("}")
    return "\n".join(lines) + "\n"
