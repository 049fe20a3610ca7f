"""Across hops (interlink's deferred "tranche B"): a question reaches the delegation chain's
owner, whose answer unblocks the asker; and a task handed back up the chain is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers import Result, git, send, taskfs, write_envelope


def new(repo: Path, task_id: str, **changes: Any) -> Result:
    path = write_envelope(repo / f"{task_id}.yaml", id=task_id, **changes)
    result = taskfs("new", str(path), "--json")
    path.unlink()
    return result


def three_hops(repo: Path) -> None:
    """alice -> bob (root) -> carol (mid) -> dave (leaf), each claimed by its recipient."""
    hops = [
        ("root", None, "alice", "bob", ["src/**"]),
        ("mid", "root", "bob", "carol", ["src/auth/**"]),
        ("leaf", "mid", "carol", "dave", ["src/auth/login.py"]),
    ]
    for task_id, parent, sender, to, files in hops:
        made = new(
            repo, task_id, parent=parent, filesAndInterfaces=files, **{"from": sender, "to": to}
        )
        assert made.code == 0, made.stdout
        claimed = taskfs("claim", task_id, "--agent", to, "--json")
        assert claimed.code == 0, claimed.stdout


def state(task_id: str) -> str:
    return str(taskfs("show", task_id, "--json").json["state"])


def test_a_question_two_hops_down_reaches_the_chains_owner_whose_answer_unblocks_it(
    repo: Path,
) -> None:
    three_hops(repo)
    question = send("leaf", "dave", "carol", "Keep the old session format?", status="needs_input")
    assert state("leaf") == "input_required"

    # Put to carol, who delegated the leaf; alice owns the chain and sees it too.
    box = taskfs("inbox", "--agent", "alice", "--json").json
    assert [q["msg_id"] for q in box["questions"]] == [question]
    assert box["questions"][0]["to"] == "carol"
    assert box["questions"][0]["asOwner"] is True
    assert box["counts"]["questions"] == 1
    carol = taskfs("inbox", "--agent", "carol", "--json").json
    assert [(q["msg_id"], q["asOwner"]) for q in carol["questions"]] == [(question, False)]
    # bob is in the middle of the chain, neither asked nor its owner.
    assert taskfs("inbox", "--agent", "bob", "--json").json["questions"] == []
    primed = taskfs("prime", "--agent", "alice").stdout
    assert f"answer {question} from dave on leaf" in primed
    assert "you own the delegation chain" in primed

    # bob may not answer: he is no party to the leaf and the question was not put to him.
    before = git(repo, "rev-parse", "HEAD")
    refused = taskfs("send", "leaf", "--agent", "bob", "--in-reply-to", question, "yes", "--json")
    assert refused.code == 1
    assert "agent_not_allowed" in refused.codes
    assert git(repo, "rev-parse", "HEAD") == before
    assert state("leaf") == "input_required"

    answered = taskfs(
        "send", "leaf", "--agent", "alice", "--in-reply-to", question, "Yes, keep it.", "--json"
    )
    assert answered.code == 0, answered.stdout
    assert answered.json["to"] == "dave"
    assert answered.json["transition"] == {"from": "input_required", "to": "working"}
    assert state("leaf") == "working"
    # Recorded and committed like any answer: the message and the transition, by alice.
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "log", "-1", "--format=%an") == "alice"
    rows = taskfs("messages", "leaf", "--json").json["messages"]
    answer = next(m for m in rows if m.get("in_reply_to") == question)
    assert (answer["from"], answer["to"], answer["verified"]) == ("alice", "dave", True)
    dave = taskfs("inbox", "--agent", "dave", "--json").json
    assert [m["from"] for m in dave["unread"]] == ["alice"]
    # Answered: the question waits for nobody any more.
    assert taskfs("inbox", "--agent", "alice", "--json").json["questions"] == []
    assert taskfs("inbox", "--agent", "carol", "--json").json["questions"] == []
    # The owner's right ends with the question: it cannot move the leaf otherwise.
    moved = taskfs("move", "leaf", "failed", "--agent", "alice", "--reason", "no", "--json")
    assert moved.code == 1
    assert moved.codes == ["agent_not_allowed"]
    assert taskfs("audit", "--json").json["ok"] is True


def test_the_addressee_may_still_answer_and_then_the_owner_no_longer_can(repo: Path) -> None:
    three_hops(repo)
    question = send("leaf", "dave", "carol", "Which branch?", status="needs_input")
    first = taskfs("send", "leaf", "--agent", "carol", "--in-reply-to", question, "main", "--json")
    assert first.code == 0, first.stdout
    assert state("leaf") == "working"
    late = taskfs("send", "leaf", "--agent", "alice", "--in-reply-to", question, "dev", "--json")
    assert late.code == 1
    assert "agent_not_allowed" in late.codes


def test_a_question_on_a_task_without_parent_stays_with_its_sender(repo: Path) -> None:
    made = new(repo, "solo", **{"from": "alice", "to": "bob"})
    assert made.code == 0, made.stdout
    assert taskfs("claim", "solo", "--agent", "bob").code == 0
    question = send("solo", "bob", "alice", "Really?", status="needs_input")
    box = taskfs("inbox", "--agent", "alice", "--json").json
    assert [(q["msg_id"], q["asOwner"]) for q in box["questions"]] == [(question, False)]
    stranger = taskfs("send", "solo", "--agent", "zed", "--in-reply-to", question, "y", "--json")
    assert stranger.code == 1
    assert "agent_not_allowed" in stranger.codes


def test_handing_a_task_back_up_the_chain_is_a_delegation_loop(repo: Path) -> None:
    made = new(repo, "root", filesAndInterfaces=["src/**"], **{"from": "alice", "to": "bob"})
    assert made.code == 0, made.stdout
    assert taskfs("claim", "root", "--agent", "bob").code == 0
    before = git(repo, "rev-parse", "HEAD")

    # A -> B -> A: bob delegates back to alice, who started the chain.
    back = new(
        repo,
        "back",
        parent="root",
        filesAndInterfaces=["src/a.py"],
        **{"from": "bob", "to": "alice"},
    )
    assert back.code == 1, back.stdout
    assert back.codes == ["delegation_loop"]
    error = back.json["errors"][0]
    assert error["agent"] == "alice"
    assert error["chain"] == ["root", "back"]
    assert "root (alice -> bob) -> back (bob -> alice)" in error["message"]
    assert git(repo, "rev-parse", "HEAD") == before
    assert git(repo, "status", "--porcelain") == ""

    # Two hops down, back to the middle: alice -> bob -> carol -> bob.
    mid = new(
        repo,
        "mid",
        parent="root",
        filesAndInterfaces=["src/auth/**"],
        **{"from": "bob", "to": "carol"},
    )
    assert mid.code == 0, mid.stdout
    assert taskfs("claim", "mid", "--agent", "carol").code == 0
    bounce = new(
        repo,
        "bounce",
        parent="mid",
        filesAndInterfaces=["src/auth/x.py"],
        **{"from": "carol", "to": "bob"},
    )
    assert bounce.codes == ["delegation_loop"]
    # Onward to someone new is fine, and so is splitting one's own work for oneself.
    onward = new(
        repo,
        "onward",
        parent="mid",
        filesAndInterfaces=["src/auth/x.py"],
        **{"from": "carol", "to": "dave"},
    )
    assert onward.code == 0, onward.stdout
    split = new(
        repo,
        "split",
        parent="mid",
        filesAndInterfaces=["src/auth/y.py"],
        **{"from": "carol", "to": "carol"},
    )
    assert split.code == 0, split.stdout


def test_the_watcher_refuses_a_dropped_ping_pong_envelope_too(repo: Path) -> None:
    made = new(repo, "root", filesAndInterfaces=["src/**"], **{"from": "alice", "to": "bob"})
    assert made.code == 0, made.stdout
    assert taskfs("claim", "root", "--agent", "bob").code == 0
    write_envelope(
        repo / "tasks" / "back.yaml",
        id="back",
        parent="root",
        filesAndInterfaces=["src/a.py"],
        **{"from": "bob", "to": "alice"},
    )
    taskfs("watch", "--once")
    report = (repo / "tasks" / "back+refused.yaml").read_text()
    assert "delegation_loop" in report
    assert not (repo / "tasks" / "back" / "envelope.yaml").exists()
