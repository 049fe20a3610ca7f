"""What the board answers (issue 39, items 1-4), read through `board --json` and the page, and
checked against the commands that own each rule: a settled failure (`A -> A-r1 done`), what
waits for each agent's decision (what its `inbox` holds), what is next for it (the first task
`ready` offers it), and the day's completions, which an evening's `archive` must not lower.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.cli.test_turkish import team_ledger
from tests.helpers import git, submit, taskfs


def board() -> dict[str, Any]:
    result = taskfs("board", "--json")
    assert result.code == 0, result.stdout + result.stderr
    doc: dict[str, Any] = result.json
    return doc


def page(tmp_path: Path) -> str:
    target = tmp_path / "board.html"
    assert taskfs("board", "--html", str(target)).code == 0
    return target.read_text()


def complete(repo: Path, task: str, agent: str = "builder") -> None:
    assert taskfs("claim", task, "--agent", agent).code == 0
    owned = repo / "src" / "auth"
    owned.mkdir(parents=True, exist_ok=True)
    (owned / "login.py").write_text(f"# {task}\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", f"work on {task}")
    assert taskfs("check", task, "--agent", agent).code == 0
    assert taskfs("complete", task, "--agent", agent).code == 0


def test_a_failure_whose_retry_completed_is_settled_not_red(repo: Path, tmp_path: Path) -> None:
    first = submit(repo, id="t-a")
    dependent = submit(
        repo, id="t-b", dependsOn=[first], filesAndInterfaces=["docs/**"], contextID="docs"
    )
    assert taskfs("claim", first, "--agent", "builder").code == 0
    assert taskfs("move", first, "failed", "--agent", "builder", "--reason", "red").code == 0
    before = board()
    assert before["markers"].get("settled") is None
    assert before["settled"] == {}
    assert '<span class="bad">0 of 2 done, 1 failed</span>' in page(tmp_path)

    assert taskfs("retry", first, "--agent", "planner").code == 0
    complete(repo, f"{first}-r1")
    after = board()
    assert after["settled"] == {first: f"{first}-r1"}
    assert after["markers"]["settled"] == [first]
    assert after["markers"]["ready"] == [dependent]
    shown = page(tmp_path)
    assert '<span class="done">1 of 3 done, 0 failed</span>' in shown
    assert '<span class="count-settled">1 settled</span>' in shown
    assert f'{first} → <a href="#task-{first}-r1">{first}-r1</a> done' in shown
    # The dependent's chip reads the dependency as it stands, in the colour of done.
    assert (
        f'<a class="dep state-completed settled" href="#task-{first}" data-dep="{first}"' in shown
    )
    assert f"{first} → {first}-r1 completed</a>" in shown


def test_what_needs_a_decision_is_what_each_agents_inbox_holds(repo: Path) -> None:
    team_ledger(repo)
    doc = board()
    needs: dict[str, list[tuple[str, str]]] = {}
    for decision in doc["needs"]:
        needs.setdefault(decision["agent"], []).append((decision["kind"], decision["task"]))
    for row in doc["agents"]:
        agent = row["name"]
        box = taskfs("inbox", "--agent", agent, "--json", "--full").json  # whole records
        wanted = [("answer", q["task_id"]) for q in box["questions"]]
        wanted += [("review", r["task_id"]) for r in box["results"]]
        wanted += [("retry", t["id"]) for t in box["ended"]]
        wanted += [("hand_on", t["id"]) for t in box["quiet"]]
        wanted += [("propose", i["id"]) for i in box["requests"] if i.get("proposal") is None]
        wanted += [("accept", i["id"]) for i in box["requested"] if i.get("proposal")]
        assert needs.get(agent, []) == wanted, agent
        assert row["needsYou"] == len(wanted)
    # This team's day holds a question, a quiet worker and a proposal for the planner.
    kinds = {kind for kind, _task in needs["planner"]}
    assert kinds == {"answer", "hand_on", "accept"}
    settle = {d["kind"]: (d["command"], d["tool"]) for d in doc["needs"]}
    assert settle["accept"][0].startswith("taskfs intake accept ")
    assert settle["accept"][1].startswith("agent_accept(")
    assert settle["hand_on"][0] == "taskfs reassign t-sessiz --to AGENT"


def test_what_is_next_for_each_agent_is_the_first_task_ready_offers_it(repo: Path) -> None:
    team_ledger(repo)
    submit(repo, id="t-helper", to="helper", filesAndInterfaces=["helper/**"])
    for row in board()["agents"]:
        offered = taskfs("ready", "--agent", row["name"], "--json").json["tasks"]
        assert row["next"] == (offered[0]["id"] if offered else None), row["name"]
    nexts = {row["name"]: row["next"] for row in board()["agents"]}
    assert nexts["helper"] is not None  # idle, with the handed-on work and t-helper to take


def test_the_days_completions_are_the_same_after_the_evenings_archive(
    repo: Path, tmp_path: Path
) -> None:
    done = submit(repo, id="t-done")
    complete(repo, done)
    failed = submit(repo, id="t-failed", filesAndInterfaces=["other/**"])
    assert taskfs("refuse", failed, "--agent", "builder", "--reason", "not mine").code == 0
    before = board()
    assert before["completed"] == {"today": 1, "thisWeek": 1}
    builder = next(a for a in before["agents"] if a["name"] == "builder")
    assert builder["doneToday"] == 1
    assert '<span class="today">1 completed today</span>' in page(tmp_path)

    archived = taskfs("archive", "--older-than", "0s", "--json")
    assert archived.json["archived"] == [done, failed]
    after = board()
    assert after["columns"] == {}  # the tasks left the working tree
    assert after["completed"] == before["completed"]
    builder = next(a for a in after["agents"] if a["name"] == "builder")
    assert builder["doneToday"] == 1
    assert builder["doneThisWeek"] == 1
    assert '<span class="today">1 completed today</span>' in page(tmp_path)
