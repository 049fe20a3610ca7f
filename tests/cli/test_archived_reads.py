"""What the readers other than `show` and `ls --archived` say of an archived task (the team day's
findings): `graph` and `review` show its final state, marked archived; `new` on its id says it
is archived; a refused archive names the setting that would allow it."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import configure, git, submit, taskfs, write_envelope


def _archived_canceled(repo: Path) -> None:
    """A canceled task `mul` that a live task depends on, then archived."""
    submit(repo, id="mul", filesAndInterfaces=["src/mul/**"])
    assert taskfs("move", "mul", "canceled", "--agent", "planner", "--reason", "no").code == 0
    submit(repo, id="after", filesAndInterfaces=["src/after/**"], dependsOn=["mul"])
    done = taskfs("archive", "--older-than", "0", "--json")
    assert done.json["archived"] == ["mul"], done.stdout


def test_graph_shows_an_archived_task_in_its_final_state(repo: Path) -> None:
    _archived_canceled(repo)
    graph = taskfs("graph", "--json")
    assert graph.code == 0, graph.stdout
    nodes = {n["id"]: n for n in graph.json["nodes"]}
    assert nodes["mul"]["state"] == "canceled"
    assert nodes["mul"]["archived"] is True
    assert nodes["after"]["archived"] is False
    drawn = taskfs("graph").stdout
    line = next(line for line in drawn.splitlines() if "mul<br/>" in line)
    assert line.endswith(":::canceled")
    assert "archived" in line
    dot = taskfs("graph", "--format", "dot").stdout
    assert "style=" not in next(line for line in dot.splitlines() if '"mul" [' in line)


def test_review_shows_an_archived_task_in_its_final_state(repo: Path) -> None:
    _archived_canceled(repo)
    first = git(repo, "rev-list", "--max-parents=0", "HEAD")
    reviewed = taskfs("review", f"{first}..HEAD", "--json")
    assert reviewed.code == 0, reviewed.stdout
    outcome = next(o for o in reviewed.json["outcomes"] if o["id"] == "mul")
    assert (outcome["state"], outcome["archived"]) == ("canceled", True)
    added = next(t for t in reviewed.json["tasks"] if t["id"] == "mul")
    assert (added["state"], added["archived"]) == ("canceled", True)
    live = next(o for o in reviewed.json["outcomes"] if o["id"] == "after")
    assert (live["state"], live["archived"]) == ("submitted", False)
    # The markdown says the state, not that the checkout lacks the task.
    text = taskfs("--lang", "en", "review", f"{first}..HEAD").stdout
    row = next(line for line in text.splitlines() if line.startswith("| `mul` |"))
    assert row.split(" | ")[1] == "canceled, archived"


def test_new_on_an_archived_id_says_it_is_archived(repo: Path) -> None:
    _archived_canceled(repo)
    path = write_envelope(repo.parent / "again.yaml", id="mul")
    again = taskfs("new", str(path), "--json")
    assert (again.code, again.codes) == (1, ["task_exists"])
    assert again.json["errors"][0]["archived"] is True
    live = write_envelope(repo.parent / "live.yaml", id="after")
    taken = taskfs("new", str(live), "--json")
    assert taken.codes == ["task_exists"]
    assert taken.json["errors"][0].get("archived", False) is False


def test_a_refused_archive_names_the_setting_that_allows_it(repo: Path) -> None:
    refused = taskfs("archive", "--older-than", "0", "--agent", "planner", "--json")
    assert (refused.code, refused.codes) == (1, ["agent_not_allowed"])
    error = refused.json["errors"][0]
    assert (error["setting"], error["path"]) == ("archive.by", ".taskfs/config.yaml")
    # Doing what it says allows it.
    configure(repo, "planner archives", archive={"by": ["operator", "planner"]})
    allowed = taskfs("archive", "--older-than", "0", "--agent", "planner", "--json")
    assert allowed.code == 0, allowed.stdout


def test_archive_names_an_ended_request_it_leaves_in_place(repo: Path) -> None:
    opened = taskfs("intake", "open", "please do x", "--id", "req1", "--to", "builder",
                    "--agent", "planner")  # fmt: skip
    assert opened.code == 0, opened.stdout + opened.stderr
    assert taskfs("intake", "cancel", "req1", "--agent", "planner", "--reason", "no").code == 0
    taskfs("intake", "open", "still open", "--id", "req2", "--agent", "planner")
    submit(repo, id="mul", filesAndInterfaces=["src/mul/**"])
    assert taskfs("move", "mul", "canceled", "--agent", "planner", "--reason", "no").code == 0
    young = taskfs("archive", "--json")  # the default age, 30 days: too young to be named
    assert (young.json["skipped"], young.json["skippedWhy"]) == ([], {})
    done = taskfs("archive", "--older-than", "0", "--json")
    assert done.code == 0, done.stdout
    assert done.json["archived"] == ["mul"]
    assert done.json["skipped"] == ["req1"]
    assert done.json["skippedWhy"] == {"req1": "request"}
    assert (repo / "tasks" / "req1").exists()
    assert taskfs("audit", "--json").json["findings"] == []
