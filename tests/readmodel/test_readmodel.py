"""The read model (issue 17): one projection with named fields, one serialisation, and a fast
path that imports nothing but the leaves."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import taskfs
from taskfs.readmodel import projection
from taskfs.readmodel.projection import Facts, Summary, text_of
from taskfs.readmodel.view import Row
from taskfs.store import index
from taskfs.store.repository import Repository
from tests.helpers import submit
from tests.helpers import taskfs as run_taskfs

PACKAGE = Path(taskfs.__file__).parent
LEAVES = ("taskfs.core", "taskfs.errors", "taskfs.i18n", "taskfs.readmodel")

names = st.text(alphabet="abcdefghij0123456789-", min_size=1, max_size=12)
maybe = st.none() | names
entries = st.lists(names, max_size=4).map(tuple)
summaries = st.builds(
    Summary,
    names,
    st.builds(Facts, maybe, maybe, maybe, names, entries, maybe, entries, st.none() | entries),
    st.sampled_from(["submitted", "working", "completed"]),
    maybe,
    st.integers(0, 3),
    entries,
    maybe,
    maybe,
    st.integers(0, 9),
    entries,
)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a loaded machine
@given(summaries)
def test_a_projection_survives_its_serialisation(summary: Summary) -> None:
    assert projection.decode(projection.encode(summary)) == summary
    # The store keeps a task's overlaps in its row, beside its projection (its searched text,
    # `ls --grep`, inside it).
    stored = Row(summary, overlaps=summary.overlaps).encode()
    assert Row.decode(stored).summary == summary


@pytest.mark.parametrize(
    "fields",
    [
        (),
        ("id",),
        ("id", ("facts",), "working", None, 0, (), None, None, 1, ()),  # facts too short
        ("id", None, "working", None, 0, (), None, None, 1, ()),
    ],
)
def test_what_is_not_an_encoded_projection_is_refused(fields: tuple[object, ...]) -> None:
    with pytest.raises((ValueError, TypeError)):
        projection.decode(fields)


def test_the_store_holds_what_the_full_reader_says(repo: Path) -> None:
    """The one converter: each stored projection is `Summary.of` the full reader's task."""
    from taskfs.store.task_reader import load_task

    first = submit(repo, id="first", filesAndInterfaces=["src/a/**"])
    submit(repo, id="second", filesAndInterfaces=["src/a/x.py"], dependsOn=[first])
    assert run_taskfs("claim", first, "--agent", "builder").code == 0
    store = Repository.open(repo)
    ledger = index.summaries(store)
    assert sorted(ledger) == ["first", "second"]
    for task_id, summary in ledger.items():
        task = load_task(store, task_id)
        expected = Summary.of(task)
        # What `ls --grep` searches is the reader's too: the objective, case folded.
        assert summary._replace(overlaps=(), text=None) == expected
        assert summary.text == text_of(task.envelope.objective)
    assert ledger["second"].overlaps == ("first",)
    assert ledger["first"].holder == "builder"


def _imports(path: Path) -> set[str]:
    """The taskfs modules a file imports at run time (`if TYPE_CHECKING:` blocks left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module:
                found.add(child.module)
            visit(child)

    visit(tree)
    return {name for name in found if name.split(".")[0] == "taskfs"}


def test_the_read_model_imports_only_the_leaves() -> None:
    files = sorted((PACKAGE / "readmodel").glob("*.py"))
    assert len(files) >= 5
    for path in files:
        outside = {m for m in _imports(path) if m != "taskfs" and not m.startswith(LEAVES)}
        assert outside == set(), path.name


def test_the_fast_path_never_imports_the_store() -> None:
    imported = _imports(PACKAGE / "cli" / "fast.py")
    assert "taskfs.readmodel" in imported or any(m.startswith("taskfs.readmodel") for m in imported)
    assert not [m for m in imported if m.startswith(("taskfs.store", "taskfs.runner"))]
