"""One rule, stated once (issue 35, item 8): what `ready` offers an agent is exactly what `claim`
accepts from it, on any ledger, and the terminal states are the lifecycle table's, written
nowhere else.

The property test builds random ledgers through the command line (recipients, dependencies on
tasks that exist, do not, or ended in any state, files that meet) and asks, for each agent,
`ready` once and `claim` of every task: each claim `ready` offered must be accepted, and every
other refused. Some dependencies are completed by hand, by someone not allowed or on no run:
`ready` must read those as the claim does.
"""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import taskfs
from taskfs.core.lifecycle import TERMINAL
from tests.helpers import git
from tests.helpers import taskfs as run

PACKAGE = Path(taskfs.__file__).parent
AGENTS = ("alice", "bob", "carol")
FILES = ("src/a/**", "src/a/x.py", "src/b/**", "interface:api", "docs/*.md")
TRUE = {"passFailCommand": "true", "endToEndVerification": "it runs"}
# What may become of a task after it is submitted, and the agent who takes it there; `forged-`:
# completed by a status file written by hand, in the holder's name on no run, or in the name
# of someone not allowed on a passing run (a completion that does not stand:
# `taskfs.store.completions`).
FATES = (
    "submitted",
    "working",
    "completed",
    "failed",
    "canceled",
    "rejected",
    "forged-run",
    "forged-by",
)

tasks = st.lists(
    st.fixed_dictionaries(
        {
            "to": st.sampled_from((None, *AGENTS)),
            "deps": st.lists(st.integers(0, 6), max_size=2, unique=True),
            "files": st.lists(st.sampled_from(FILES), min_size=1, max_size=2, unique=True),
            "fate": st.sampled_from(FATES),
        }
    ),
    min_size=1,
    max_size=5,
)


def _plan(fate: str) -> dict[str, object]:
    """A task of a plan: alice's, owning `src/a/**`, depending on nothing, ending as `fate`."""
    return {"to": "alice", "deps": [], "files": ["src/a/**"], "fate": fate}


def _build(repo: Path, plan: list[dict[str, object]]) -> list[str]:
    made: list[str] = []
    for n, spec in enumerate(plan):
        task_id = f"t{n}"
        deps = [f"t{d}" if d < 6 else "ghost" for d in spec["deps"]]  # type: ignore[attr-defined]
        deps = [d for d in deps if d != task_id]
        envelope = {
            "id": task_id,
            "filesAndInterfaces": spec["files"],
            "dependsOn": deps,
            "acceptanceCheck": TRUE,
            "to": spec["to"],
        }
        path = repo.parent / f"{task_id}.yaml"
        from tests.helpers import write_envelope

        write_envelope(path, **envelope)
        if spec["to"] is None:
            text = path.read_text().replace("to: builder\n", "")
            path.write_text(text)
        if run("new", str(path), "--agent", "planner").code != 0:
            continue  # refused (an ownership conflict): the ledger is what was accepted
        made.append(task_id)
        _fate(task_id, str(spec["fate"]), spec["to"])  # type: ignore[arg-type]
    return made


def _fate(task_id: str, fate: str, to: str | None) -> None:
    holder = to or "alice"
    if fate == "submitted":
        return
    if fate in ("canceled", "rejected", "failed") and fate != "failed":
        reason = ["--reason", "because"]
        who = "planner" if fate == "canceled" else holder
        run("move", task_id, fate, "--agent", who, *reason)
        return
    if run("claim", task_id, "--agent", holder).code != 0:
        return  # not claimable now (its dependencies): it stays submitted
    if fate == "failed":
        run("move", task_id, "failed", "--agent", holder, "--reason", "no")
    elif fate == "completed":
        run("check", task_id)
        run("complete", task_id, "--agent", holder)
    elif fate.startswith("forged-"):
        _forge(task_id, holder if fate == "forged-run" else "mallory", fate == "forged-by")


def _forge(task_id: str, by: str, ran: bool) -> None:
    """A completion of `task_id` written by hand in `by`'s name, on a passing run or none."""
    from tests.helpers import commit_as

    folder = Path("tasks") / task_id
    evidence = Path(run("check", task_id, "--json").json["evidence"]).name if ran else "none.yaml"
    prev = sorted(p.name for p in (folder / "status").iterdir())[-1]
    rel = folder / "status" / "0003-completed-aaaaaaaa.yaml"
    rel.write_text(
        f"task: {task_id}\nstate: completed\nby: {by}\nat: '2026-01-01T00:00:00.000000Z'\n"
        f"prev: {prev}\nevidence: {evidence}\n"
    )
    commit_as(Path.cwd(), by, "forged", str(rel))


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(plan=tasks)
@example(plan=[_plan("forged-by"), {**_plan("submitted"), "deps": [0], "files": ["src/b/**"]}])
@example(plan=[_plan("forged-run"), {**_plan("submitted"), "deps": [0], "files": ["src/b/**"]}])
def test_ready_offers_exactly_what_claim_accepts(repo: Path, plan: list[dict[str, object]]) -> None:
    start = git(repo, "rev-parse", "HEAD")
    try:
        made = _build(repo, plan)
        base = git(repo, "rev-parse", "HEAD")
        for agent in AGENTS:
            offered = [t["id"] for t in run("ready", "--json", "--agent", agent).json["tasks"]]
            accepted = []
            for task_id in made:
                claimed = run("claim", task_id, "--agent", agent, "--json")
                if claimed.code == 0 and not claimed.json.get("already"):
                    accepted.append(task_id)
                if git(repo, "rev-parse", "HEAD") != base:
                    git(repo, "reset", "-q", "--hard", base)
            assert offered == accepted, (agent, plan)
    finally:
        git(repo, "reset", "-q", "--hard", start)
        git(repo, "clean", "-qfdx", "tasks")


# -- the terminal states: the lifecycle table's, and nowhere else spelled out ------------------


def _spelled(node: ast.AST) -> set[str]:
    """The state names a literal collection or SQL text spells out."""
    if isinstance(node, ast.Set | ast.Tuple | ast.List):
        values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        return {v for v in values if isinstance(v, str)}
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {s for s in TERMINAL if f"'{s}'" in node.value}
    return set()


def test_the_terminal_states_are_written_once() -> None:
    """Every other module derives them from `taskfs.core.lifecycle.TERMINAL` (the states with
    no way out of the table): a collection or query text naming all four is a second
    statement of the rule."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "core" / "lifecycle.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if _spelled(node) >= set(TERMINAL):
                found.append(f"{path.relative_to(PACKAGE)}:{getattr(node, 'lineno', '?')}")
    assert found == []


def _restates(node: ast.AST) -> bool:
    """`recipient is None or recipient == agent`, in any spelling of either side."""
    if not isinstance(node, ast.BoolOp) or not isinstance(node.op, ast.Or):
        return False
    text = [ast.unparse(v) for v in node.values]
    return any("recipient is None" in t for t in text) and any(
        "recipient" in t and "agent" in t and "==" in t for t in text
    )


def test_the_recipient_rule_is_written_once() -> None:
    """Who may claim a task addressed to whom is `taskfs.core.shown.offered_to`, which the
    claim's party rule and `ready` both ask: no other module writes the rule out again."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "core" / "shown.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if _restates(node):
                found.append(f"{path.relative_to(PACKAGE)}:{getattr(node, 'lineno', '?')}")
    assert found == []
