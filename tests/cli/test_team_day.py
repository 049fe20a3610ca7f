"""A team's working day, through the command line (issues 29 and 38).

A planner and two workers build a small Python library through six envelopes with pytest
checks, dependencies and ownership, priorities and labels. One worker dies mid-task and its
task is handed on; another task fails (the check says why) and is retried; the task depending
on both is then completed without being sent again. The planner learns of the refusal, the
failure and the quiet worker from its inbox and `prime` alone. Along the way (issue 38) the
planner finds the core tasks by label, amends a contract nobody has claimed and one a worker
holds (who accepts it), a worker files a follow-up it found, and `ready` offers the most urgent
first.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from taskfs.core import yamlio
from tests.helpers import configure, git, taskfs, taskfs_process

PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"
MODULES = {
    "add": ("a + b", "assert add(2, 3) == 5"),
    "sub": ("a - b", "assert sub(5, 3) == 2"),
    "mul": ("a * b", "assert mul(2, 3) == 6"),
}


def plan(folder: Path) -> list[str]:
    """The planner's six envelopes: three functions, the package that exports them (it
    depends on add and sub), its docs and a command line (both depend on the package)."""
    folder.mkdir(parents=True)
    envelopes: dict[str, dict[str, Any]] = {}
    for name in MODULES:
        envelopes[f"t-{name}"] = {
            "objective": f"Write calc/{name}.py with a function {name}(a, b) and its test.",
            "filesAndInterfaces": [f"calc/{name}.py", f"tests/test_{name}.py"],
            "passFailCommand": f"{PYTEST} tests/test_{name}.py",
            "to": "w2" if name != "add" else "w1",
            "labels": ["core"],
        }
    envelopes["t-api"] = {
        "objective": "Export add and sub from the calc package, with a test of both.",
        "filesAndInterfaces": ["calc/__init__.py", "tests/test_api.py"],
        "passFailCommand": f"{PYTEST} tests/test_api.py",
        "to": "w2",
        "dependsOn": ["t-add", "t-sub"],
        "labels": ["core", "api"],
        "priority": 1,
    }
    # The docs are more urgent than the command line: `ready` offers them first.
    envelopes["t-docs"] = {
        "objective": "Describe the calc package's functions in docs/calc.md for its users.",
        "filesAndInterfaces": ["docs/calc.md"],
        "passFailCommand": "grep -q add docs/calc.md",
        "to": "w1",
        "dependsOn": ["t-api"],
        "labels": ["docs"],
        "priority": 0,
    }
    envelopes["t-cli"] = {
        "objective": "Add calc/cli.py that adds two numbers given on the command line.",
        "filesAndInterfaces": ["calc/cli.py"],
        "passFailCommand": f"{sys.executable} calc/cli.py 2 3 | grep -qx 5",
        "to": "w2",
        "dependsOn": ["t-api"],
        "priority": 3,
    }
    paths = []
    for task_id, spec in envelopes.items():
        doc = {
            "id": task_id,
            "objective": spec["objective"],
            "outputFormat": "A commit with the files the task owns.",
            "toolAndSourceGuidance": "Python 3 and pytest; read the calc package.",
            "boundaries": "Do not touch files other tasks own; no new dependencies.",
            "filesAndInterfaces": spec["filesAndInterfaces"],
            "acceptanceCheck": {
                "passFailCommand": spec["passFailCommand"],
                "endToEndVerification": "Import calc and call the function in a shell.",
            },
            "contextID": "calc",
            "from": "planner",
            "to": spec["to"],
        }
        for key in ("dependsOn", "labels", "priority"):
            if key in spec:
                doc[key] = spec[key]
        path = folder / f"{task_id}.yaml"
        path.write_text(yamlio.dump(doc))
        paths.append(str(path))
    return paths


def quiet_soon(repo: Path) -> None:
    """Quiet after a few milliseconds: the worker that dies is quiet when anyone looks."""
    configure(repo, "quiet soon", nudge={"senderQuietMinutes": 0.001})


def write_module(repo: Path, name: str, body: str) -> None:
    (repo / "calc").mkdir(exist_ok=True)
    (repo / "tests").mkdir(exist_ok=True)
    (repo / "calc" / f"{name}.py").write_text(f"def {name}(a, b):\n    return {body}\n")
    test = f"from calc.{name} import {name}\n\n\ndef test_{name}():\n    {MODULES[name][1]}\n"
    (repo / "tests" / f"test_{name}.py").write_text(test)


def write_package(repo: Path) -> None:
    (repo / "calc" / "__init__.py").write_text(
        "from calc.add import add\nfrom calc.sub import sub\n"
    )
    test = "import calc\n\n\ndef test_api():\n    assert calc.sub(calc.add(2, 3), 3) == 2\n"
    (repo / "tests" / "test_api.py").write_text(test)


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "calc", "tests")
    git(repo, "commit", "-q", "-m", message)


def ok(*args: str) -> Any:
    result = taskfs(*args, "--json")
    assert result.code == 0, result.stdout + result.stderr
    return result.json


def finish(repo: Path, task: str, agent: str) -> None:
    """The worker checks its committed work and completes the task."""
    checked = taskfs("check", task, "--agent", agent, "--json")
    assert checked.json["verdict"] == "pass", checked.json
    assert checked.json["workTree"] == "clean"
    assert ok("complete", task, "--agent", agent)["state"] == "completed"


def test_a_team_day_through_the_command_line(repo: Path, tmp_path: Path) -> None:
    quiet_soon(repo)

    submitted = ok("new", *plan(tmp_path / "plan"), "--agent", "planner")
    assert [t["id"] for t in submitted["tasks"]] == [
        "t-add",
        "t-sub",
        "t-mul",
        "t-api",
        "t-docs",
        "t-cli",
    ]
    assert [w["code"] for w in submitted["warnings"]] == []  # a plan naming its own tasks
    # The planner finds the core of the plan by its label (both paths agree).
    core = ["t-add", "t-api", "t-mul", "t-sub"]
    assert [t["id"] for t in ok("ls", "--label", "core")["tasks"]] == core
    listed = taskfs_process("ls", "--label", "core", "--json", cwd=repo).json["tasks"]
    assert [t["id"] for t in listed] == core
    # Before anyone claims the docs, the planner amends them: in force at once.
    docs = yamlio.load(Path(plan(tmp_path / "amended")[4]).read_bytes())
    docs["objective"] = "Describe add and sub in docs/calc.md, with one example of each."
    amended = tmp_path / "docs.yaml"
    amended.write_text(yamlio.dump(docs))
    assert ok("amend", "t-docs", str(amended), "--agent", "planner")["inForce"] is True
    assert ok("show", "t-docs")["envelope"]["objective"].startswith("Describe add and sub")

    # w1 claims t-add, starts, and dies: nothing more comes from it.
    assert ok("claim", "t-add", "--agent", "w1")["state"] == "working"
    write_module(repo, "add", "a + b")  # never committed

    # w2's subtraction is wrong: the check says why, in its answer.
    assert ok("claim", "t-sub", "--agent", "w2")["state"] == "working"
    write_module(repo, "sub", "b - a")
    commit(repo, "sub, wrongly")
    text = taskfs("check", "t-sub", "--agent", "w2")
    assert text.code == 1
    assert "assert -2 == 2" in text.stdout, text.stdout
    as_json = taskfs("check", "t-sub", "--agent", "w2", "--json")
    assert as_json.code == 1
    assert "assert -2 == 2" in as_json.json["output"]["stdout"]
    failed = ok("send", "t-sub", "cannot get the sign right", "--agent", "w2", "--status", "failed")
    assert failed["transition"] == {"from": "working", "to": "failed"}
    # ... and refuses the multiplication.
    refused = ok("refuse", "t-mul", "--agent", "w2", "--reason", "not my area")
    assert refused["state"] == "rejected"

    # Nothing the package waits for can complete now, and `ready` says so.
    nothing = taskfs("ready", "--agent", "w2")
    assert "t-api waits for t-add (working), t-sub (failed)" in nothing.stdout, nothing.stdout
    # A plan depending on a failed task, or on one that does not exist, is warned of.
    extra = tmp_path / "extra.yaml"
    envelope = yamlio.load(Path(plan(tmp_path / "again")[3]).read_bytes())
    extra.write_text(yamlio.dump({**envelope, "id": "t-more", "dependsOn": ["t-sub", "t-nope"]}))
    linted = taskfs("lint", str(extra), "--json").json
    assert [(w["code"], w["dependency"]) for w in linted["warnings"]] == [
        ("dependency_final", "t-sub"),
        ("dependency_unknown", "t-nope"),
    ]

    # The planner learns all three from its inbox alone ...
    inbox = ok("inbox", "--agent", "planner")
    ended = {t["id"]: (t["state"], t["endedBy"], t["reason"]) for t in inbox["ended"]}
    assert ended == {
        "t-sub": ("failed", "w2", "cannot get the sign right"),
        "t-mul": ("rejected", "w2", "not my area"),
    }
    assert [(t["id"], t["holder"]) for t in inbox["quiet"]] == [("t-add", "w1")]
    assert inbox["badge"].endswith(", 2 refused or failed, 1 quiet"), inbox["badge"]
    # ... and from prime alone.
    prime = taskfs("prime", "--agent", "planner").stdout
    assert "t-sub failed by w2: cannot get the sign right" in prime
    assert "t-mul refused by w2: not my area" in prime
    assert "t-add held by w1 (working): quiet for" in prime
    assert "taskfs retry ID" in prime
    assert "taskfs reassign ID --to AGENT" in prime
    # For a host with the MCP tools, the same in tools, no command in sight.
    tools = taskfs("prime", "--agent", "planner", "--mcp").stdout
    assert "agent_retry(task_id, to)" in tools
    assert "agent_reassign(task_id, to)" in tools
    assert "taskfs " not in tools
    sent = {t["id"]: t for t in ok("sent", "--agent", "planner")["tasks"]}
    assert set(sent) == {"t-add", "t-sub", "t-mul", "t-api", "t-docs", "t-cli"}
    assert sent["t-add"]["quiet"] is True
    assert sent["t-add"]["quietMinutes"] is not None

    # The dead worker's task is handed on; the failed one is retried.
    handed = ok("reassign", "t-add", "--to", "w2", "--agent", "planner")
    assert (handed["newId"], handed["state"]) == ("t-add-r1", "canceled")
    retried = ok("retry", "t-sub", "--agent", "planner")
    assert (retried["newId"], retried["to"]) == ("t-sub-r1", "w2")
    assert taskfs("retry", "t-sub", "--agent", "planner", "--json").codes == [
        "transition_not_allowed"  # once: then the successor is retried
    ]
    inbox = ok("inbox", "--agent", "planner")
    assert [t["id"] for t in inbox["ended"]] == ["t-mul"]  # t-sub is handled now
    # Had w1 come back, the first thing it reads is to stop.
    assert "STOP t-add: canceled by planner" in taskfs("prime", "--agent", "w1").stdout
    # A dependency on the failed task is now one on its successor: no warning.
    assert "dependency_final" not in {
        w["code"] for w in taskfs("lint", str(extra), "--json").json["warnings"]
    }

    # w2 does both again; the package becomes ready without being sent again.
    assert ok("claim", "t-add-r1", "--agent", "w2")["state"] == "working"
    commit(repo, "add")
    finish(repo, "t-add-r1", "w2")
    assert "t-api" not in [t["id"] for t in ok("ready", "--agent", "w2")["tasks"]]
    assert ok("claim", "t-sub-r1", "--agent", "w2")["state"] == "working"
    write_module(repo, "sub", "a - b")
    commit(repo, "sub, right")
    # While at it, w2 finds more to do: a follow-up to the planner, linked to its task.
    found = ok("discover", "t-sub-r1", "sub() should refuse strings.", "--agent", "w2")
    assert (found["to"], found["discoveredFrom"]) == ("planner", "t-sub-r1")
    requests = ok("inbox", "--agent", "planner")["requests"]
    assert [(r["id"], r["from"]) for r in requests] == [(found["id"], "w2")]
    finish(repo, "t-sub-r1", "w2")
    assert [f["id"] for f in ok("show", "t-sub-r1")["followUps"]] == [found["id"]]
    ready = [t["id"] for t in ok("ready", "--agent", "w2")["tasks"]]
    assert ready == ["t-api"]
    # The prepared answer a fresh process prints agrees with the full rules.
    fresh = taskfs_process("ready", "--agent", "w2", "--json", cwd=repo)
    assert [t["id"] for t in fresh.json["tasks"]] == ["t-api"]
    assert ok("claim", "t-api", "--agent", "w2")["state"] == "working"
    # The planner tightens the package's boundaries after the claim: w2 accepts it first.
    api = yamlio.load(Path(plan(tmp_path / "api")[3]).read_bytes())
    api["boundaries"] = "Do not touch files other tasks own; export nothing but add and sub."
    tightened = tmp_path / "api.yaml"
    tightened.write_text(yamlio.dump(api))
    assert ok("amend", "t-api", str(tightened), "--agent", "planner")["inForce"] is False
    assert [a["task_id"] for a in ok("inbox", "--agent", "w2")["amendments"]] == ["t-api"]
    assert ok("amend", "t-api", "--accept", "--agent", "w2")["inForce"] is True
    assert ok("show", "t-api")["envelope"]["boundaries"].endswith("but add and sub.")
    write_package(repo)
    commit(repo, "the package")
    finish(repo, "t-api", "w2")
    # The most urgent first: the docs (0) before the command line (3), not by their ids.
    assert [t["id"] for t in ok("ready")["tasks"]] == ["t-docs", "t-cli"]
    assert ok("show", "t-sub")["state"] == "failed"  # the old task stays as it ended
    assert taskfs("audit", "--json").json["ok"] is True
