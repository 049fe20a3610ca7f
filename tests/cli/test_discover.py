"""Discovered work, cheaply (issue 38, item 2): a worker files a follow-up in prose from inside
its task. It is a request (an intake) addressed by default to the task's sender, linked to the
task it came from, shown on that task, the board and the graph; the contract is still reached
through the intake. Audit knows who may file one, and every forgery of one."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from taskfs.core import yamlio
from taskfs.core.layout import format_time, stamped_name
from tests.helpers import ENVELOPE, commit_as, git, submit, taskfs

WORDS = "The login form also lets a password of only spaces through; that needs a fix too."


def working(repo: Path) -> str:
    task = submit(repo, id="t1")
    assert taskfs("claim", task, "--agent", "builder").code == 0
    return task


def discover(task: str, agent: str = "builder", *extra: str) -> dict[str, object]:
    found = taskfs("discover", task, WORDS, "--agent", agent, *extra, "--json")
    assert found.code == 0, found.stdout + found.stderr
    return dict(found.json)


def test_a_follow_up_is_a_request_to_the_sender_linked_to_its_task(repo: Path) -> None:
    task = working(repo)
    found = discover(task)
    follow_up = str(found["id"])
    assert (found["state"], found["from"], found["to"]) == ("intake", "builder", "planner")
    assert found["discoveredFrom"] == task
    # The sender sees it among its requests; the task it came from lists it.
    box = taskfs("inbox", "--agent", "planner", "--json").json
    assert [(r["id"], r["from"]) for r in box["requests"]] == [(follow_up, "builder")]
    shown = taskfs("show", task, "--json").json
    assert [(f["id"], f["state"]) for f in shown["followUps"]] == [(follow_up, "intake")]
    assert follow_up in taskfs("show", task).stdout
    assert task in taskfs("show", follow_up).stdout  # "a follow-up found while working on t1"
    # The board: the task's card links to it, its request card to the task.
    page = repo / "board.html"
    assert taskfs("board", "--html", str(page)).code == 0
    html = page.read_text()
    assert f'href="#task-{follow_up}"' in html
    assert 'class="found"' in html
    # The graph: a dotted edge, labelled.
    edges = taskfs("graph", "--json").json["edges"]
    assert {"from": task, "to": follow_up, "kind": "discovered"} in edges
    assert "discovered" in taskfs("graph").stdout


def test_the_contract_is_reached_through_the_intake_and_stays_linked(repo: Path) -> None:
    task = working(repo)
    follow_up = str(discover(task)["id"])
    proposal = repo / "p.yaml"
    fields = {k: v for k, v in ENVELOPE.items() if k not in ("from", "to")}
    proposal.write_text(yamlio.dump({**fields, "filesAndInterfaces": ["src/spaces.py"]}))
    assert taskfs("intake", "propose", follow_up, str(proposal), "--agent", "planner").code == 0
    assert taskfs("intake", "accept", follow_up, "--agent", "builder").code == 0
    shown = taskfs("show", task, "--json").json
    assert [(f["id"], f["state"]) for f in shown["followUps"]] == [(follow_up, "submitted")]
    assert taskfs("show", follow_up, "--json").json["request"]["discoveredFrom"] == task
    assert taskfs("audit", "--json").json["ok"] is True


def test_a_proposal_that_readdresses_the_follow_up_is_refused_and_nothing_is_kept(
    repo: Path,
) -> None:
    """The team day: the planner proposed the follow-up addressed to a third agent (and as
    its own); propose said ok, the requester's inbox said to accept it, and accept exited 0
    submitting nothing, saying `to` was missing. A proposal cannot say whose the task is."""
    task = working(repo)
    follow_up = str(discover(task)["id"])
    proposal = repo / "p.yaml"
    for changed, code in (
        ({"to": "alice"}, "invalid_value"),
        ({"from": "planner"}, "agent_not_allowed"),
    ):
        fields = {k: v for k, v in ENVELOPE.items() if k not in ("from", "to")}
        proposal.write_text(yamlio.dump({**fields, **changed}))
        head = git(repo, "rev-parse", "HEAD")
        refused = taskfs(
            "intake", "propose", follow_up, str(proposal), "--agent", "planner", "--json"
        )
        assert refused.codes == [code], refused.stdout
        assert git(repo, "rev-parse", "HEAD") == head
        assert git(repo, "status", "--porcelain", "tasks") == ""
    assert taskfs("intake", "accept", follow_up, "--agent", "builder", "--json").codes == [
        "proposal_not_found"
    ]


def test_only_a_party_to_the_task_files_one(repo: Path) -> None:
    task = working(repo)
    refused = taskfs("discover", task, WORDS, "--agent", "eve", "--json")
    assert refused.codes == ["agent_not_allowed"]
    assert taskfs("discover", "nope", WORDS, "--agent", "builder", "--json").codes == [
        "task_not_found"
    ]
    assert taskfs("ls", "--state", "intake", "--json").json["tasks"] == []  # nothing written
    # Addressed elsewhere when asked.
    assert discover(task, "builder", "--to", "helper")["to"] == "helper"


# -- audit: every forgery of a follow-up's link ----------------------------------------------


def forged_request(repo: Path, task: str, by: str, author: str) -> Path:
    """A request claiming to be found in `task`, written by hand and committed as `author`."""
    now = datetime.now(timezone.utc)
    folder = repo / "tasks" / "forged" / "intake"
    folder.mkdir(parents=True)
    record = {"intake": "forged", "kind": "request", "by": by, "at": format_time(now),
              "to": "planner", "door": "cli", "text": WORDS, "discoveredFrom": task}  # fmt: skip
    path = folder / stamped_name(now)
    path.write_text(yamlio.dump(record))
    commit_as(repo, author, "a follow-up", str(path.relative_to(repo)))
    return path


def audit_codes() -> set[str]:
    return {f["code"] for f in taskfs("audit", "--json").json["findings"]}


def test_audit_names_a_follow_up_filed_by_no_party_of_its_task(repo: Path) -> None:
    task = working(repo)
    forged_request(repo, task, "eve", "eve")
    assert "intake_unauthorized" in audit_codes()


def test_audit_names_a_follow_up_whose_author_is_spoofed(repo: Path) -> None:
    task = working(repo)
    forged_request(repo, task, "builder", "eve")
    assert "author_mismatch" in audit_codes()


def test_audit_names_a_follow_up_edited_or_deleted(repo: Path) -> None:
    task = working(repo)
    follow_up = str(discover(task)["id"])
    (path,) = (repo / "tasks" / follow_up / "intake").glob("*.yaml")
    path.write_text(path.read_text().replace(f"discoveredFrom: {task}", "discoveredFrom: t9"))
    git(repo, "commit", "-q", "-am", "edit the link")
    assert "ledger_file_edited" in audit_codes()
    path.unlink()
    git(repo, "commit", "-q", "-am", "delete it")
    assert "ledger_file_deleted" in audit_codes()
