"""`taskfs graph`: the dependsOn and delegation graph as Mermaid and DOT, coloured by state."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from taskfs.report.style import STATE_COLOURS
from tests.helpers import check, submit, taskfs


@pytest.fixture
def planned(repo: Path) -> Path:
    """base (completed) <- needs - docs (submitted) - needs -> ghost (not in the ledger);
    base delegated part (working)."""
    submit(repo, id="base", filesAndInterfaces=["src/base/**"])
    assert taskfs("claim", "base", "--agent", "builder").code == 0
    # A task delegates while it is open: a closed parent owns nothing to hand down.
    submit(
        repo,
        id="part",
        parent="base",
        filesAndInterfaces=["src/base/part.py"],
        **{"from": "builder", "to": "helper"},
    )
    assert taskfs("claim", "part", "--agent", "helper").code == 0
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "login.py").write_text("ok\n")  # what base's check looks for
    check("base")
    assert taskfs("complete", "base", "--agent", "builder").code == 0
    submit(repo, id="docs", dependsOn=["base", "ghost"], filesAndInterfaces=["docs/**"])
    return repo


def test_mermaid_draws_nodes_coloured_by_state_and_both_kinds_of_edge(planned: Path) -> None:
    result = taskfs("graph")
    assert result.code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "flowchart LR"
    nodes = dict(re.findall(r'^  (t\d+)\["([a-z0-9._-]+)<br/>', result.stdout, re.M))
    names = {task: node for node, task in nodes.items()}
    assert sorted(names) == ["base", "docs", "ghost", "part"]
    classes = dict(re.findall(r"^  (t\d+)\[.*\]:::(\w+)$", result.stdout, re.M))
    assert {nodes[n]: c for n, c in classes.items()} == {
        "base": "completed",
        "docs": "submitted",
        "ghost": "missing",
        "part": "working",
    }
    assert f"  {names['docs']} -->|needs| {names['base']}" in lines
    assert f"  {names['docs']} -->|needs| {names['ghost']}" in lines
    assert f"  {names['base']} ==>|delegated| {names['part']}" in lines
    fill = STATE_COLOURS["completed"][0]
    assert any(line.startswith(f"  classDef completed fill:{fill}") for line in lines)


def test_dot_is_the_same_graph(planned: Path) -> None:
    result = taskfs("graph", "--format", "dot")
    assert result.code == 0
    out = result.stdout
    assert out.startswith("digraph taskfs {")
    assert out.rstrip().endswith("}")
    assert f'"base" [label="base\\ncompleted", fillcolor="{STATE_COLOURS["completed"][0]}"' in out
    assert '"ghost" [label="ghost\\nnot in the ledger"' in out
    assert 'style="rounded,dashed"' in out
    assert '"docs" -> "base" [label="needs"];' in out
    assert '"base" -> "part" [label="delegated", penwidth=2];' in out
    assert out.count("{") == out.count("}")


def test_graph_json_lists_nodes_and_edges(planned: Path) -> None:
    doc = taskfs("graph", "--json").json
    assert doc["ok"] is True
    assert {n["id"]: n["state"] for n in doc["nodes"]} == {
        "base": "completed",
        "docs": "submitted",
        "ghost": None,
        "part": "working",
    }
    assert sorted((e["from"], e["to"], e["kind"]) for e in doc["edges"]) == [
        ("base", "part", "parent"),
        ("docs", "base", "dependsOn"),
        ("docs", "ghost", "dependsOn"),
    ]


def test_an_empty_ledger_is_an_empty_graph(repo: Path) -> None:
    assert taskfs("graph", "--json").json["nodes"] == []
    assert taskfs("graph").stdout.startswith("flowchart LR\n")
    assert taskfs("graph", "--format", "svg").code == 2


def test_graphviz_reads_the_dot(planned: Path) -> None:
    if shutil.which("dot") is None:
        if os.environ.get("TASKFS_REQUIRE_GRAPHVIZ"):  # .ci/run installs it: never skip there
            pytest.fail("Graphviz's dot is not installed (apt-get install graphviz)")
        pytest.skip("Graphviz's dot is not installed (apt-get install graphviz)")
    out = taskfs("graph", "--format", "dot").stdout
    svg = subprocess.run(["dot", "-Tsvg"], input=out, capture_output=True, text=True, check=True)
    for task in ("base", "docs", "ghost", "part"):
        assert f"<title>{task}</title>" in svg.stdout


def test_work_handed_on_is_drawn_from_the_old_task_to_the_new_one(repo: Path) -> None:
    submit(repo, id="slow")
    assert taskfs("reassign", "slow", "--to", "helper", "--agent", "planner").code == 0
    assert taskfs("claim", "slow-r1", "--agent", "helper").code == 0
    failed = ["move", "slow-r1", "failed", "--agent", "helper", "--reason", "no luck"]
    assert taskfs(*failed).code == 0
    # A retry records its link the same way (x-retriedFrom): the graph reads both.
    submit(repo, id="again", to="helper", **{"x-retriedFrom": "slow-r1"})
    # A link its sender could not have made (another sender) is not drawn.
    submit(
        repo,
        id="forged",
        filesAndInterfaces=["forged.py"],
        **{"from": "mallory", "x-retriedFrom": "slow"},
    )
    doc = taskfs("graph", "--json").json
    assert sorted((e["from"], e["to"], e["kind"]) for e in doc["edges"]) == [
        ("slow", "slow-r1", "reassigned"),
        ("slow-r1", "again", "retried"),
    ]
    mermaid = taskfs("graph").stdout
    names = dict(re.findall(r'^  (t\d+)\["([a-z0-9._-]+)<br/>', mermaid, re.M))
    ids = {task: node for node, task in names.items()}
    assert f"  {ids['slow']} -.->|reassigned| {ids['slow-r1']}" in mermaid.splitlines()
    dot = taskfs("graph", "--format", "dot").stdout
    assert '"slow-r1" -> "again" [label="retried", style=dashed];' in dot
