"""Requests that are not yet a contract (contract section 12), through the command line: a
request is kept and answered with what it lacks, completed on its id by its requester, proposed
for by its recipient, canceled by a party; it owns nothing, blocks nothing, and audit knows it."""

from __future__ import annotations

from pathlib import Path

from taskfs.core import yamlio
from tests.helpers import ENVELOPE, commit_as, git, submit, taskfs

REQUIRED = [
    "objective",
    "outputFormat",
    "toolAndSourceGuidance",
    "boundaries",
    "filesAndInterfaces",
    "acceptanceCheck.passFailCommand",
    "acceptanceCheck.endToEndVerification",
    "contextID",
]


def fields(repo: Path, name: str, **values: object) -> str:
    """A YAML file of envelope fields (a partial envelope), as a requester sends it."""
    path = repo / name
    path.write_text(yamlio.dump(values))
    return str(path)


def opened(*args: str) -> dict[str, object]:
    result = taskfs("intake", "open", *args, "--json")
    assert result.code == 0, result.stdout + result.stderr
    return dict(result.json)


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD")


def test_prose_is_kept_and_answered_with_every_missing_field(repo: Path) -> None:
    before = head(repo)
    doc = opened("please add a --verbose flag", "--agent", "alice", "--to", "bob")
    task = str(doc["id"])
    assert doc["ok"] is True
    assert doc["state"] == "intake"
    assert doc["missing"] == REQUIRED
    assert doc["words"] == ["please add a --verbose flag"]
    assert doc["schema"] == ".taskfs/schema/envelope.schema.json"
    assert {p["code"] for p in doc["problems"]} >= {"objective_required", "context_id_required"}
    # Committed, under the requester's name, holding its words.
    assert git(repo, "rev-parse", "HEAD~1") == before
    assert git(repo, "log", "-1", "--format=%an") == "alice"
    files = git(repo, "show", "--name-only", "--format=", "HEAD").splitlines()
    assert files == [f for f in files if f.startswith(f"tasks/{task}/intake/")]
    assert files
    # Seen where tasks are seen.
    listed = taskfs("ls", "--json").json["tasks"]
    assert [(t["id"], t["state"], t["from"], t["to"]) for t in listed] == [
        (task, "intake", "alice", "bob")
    ]
    assert taskfs("ls", "--state", "intake", "--json").json["tasks"][0]["id"] == task
    shown = taskfs("show", task, "--json")
    assert shown.code == 0
    assert shown.json["missing"] == REQUIRED
    text = taskfs("show", task).stdout
    assert "objective_required" in text
    assert f"taskfs intake add {task}" in text
    assert taskfs("validate").code == 0
    assert taskfs("audit").code == 0


def test_the_requester_completes_it_on_its_id_in_parts(repo: Path) -> None:
    task = str(opened("a parser for the logs", "--agent", "alice", "--to", "bob")["id"])
    first = {k: ENVELOPE[k] for k in ("objective", "outputFormat", "boundaries")}
    part = taskfs(
        "intake",
        "add",
        task,
        "--file",
        fields(repo, "a.yaml", **first),
        "--agent",
        "alice",
        "--json",
    )
    assert part.code == 0
    assert part.json["state"] == "intake"
    assert "objective" not in part.json["missing"]
    assert "contextID" in part.json["missing"]
    rest = {k: v for k, v in ENVELOPE.items() if k not in first and k not in ("from", "to")}
    done = taskfs(
        "intake",
        "add",
        task,
        "--file",
        fields(repo, "b.yaml", **rest),
        "--agent",
        "alice",
        "--json",
    )
    assert done.code == 0, done.stdout + done.stderr
    assert done.json["id"] == task
    assert done.json["state"] == "submitted"
    shown = taskfs("show", task, "--json").json
    assert shown["state"] == "submitted"
    assert shown["envelope"]["from"] == "alice"
    assert shown["envelope"]["to"] == "bob"
    assert shown["envelope"]["objective"] == ENVELOPE["objective"]
    # One commit held the last request, the envelope and its submitted status.
    files = git(repo, "show", "--name-only", "--format=", "HEAD").splitlines()
    assert any("/intake/" in f for f in files)
    assert f"tasks/{task}/envelope.yaml" in files
    # The task's log begins with the words it came from.
    timeline = taskfs("log", task, "--json").json["timeline"]
    assert timeline[0]["kind"] == "intake"
    assert timeline[0]["detail"] == "a parser for the logs"
    assert timeline[-1]["what"] == "submitted"
    # Now a task like any other: bob claims it.
    assert taskfs("claim", task, "--agent", "bob").code == 0
    assert taskfs("audit").code == 0


def test_new_with_the_intakes_id_submits_it_but_only_for_its_requester(repo: Path) -> None:
    task = str(
        opened("the login bug", "--agent", "alice", "--to", "builder", "--id", "login")["id"]
    )
    assert task == "login"
    envelope = {**ENVELOPE, "id": "login", "from": None, "to": "builder"}
    del envelope["from"]
    path = fields(repo, "env.yaml", **envelope)
    other = taskfs("new", path, "--agent", "mallory", "--json")
    assert other.code == 1
    assert other.codes == ["task_exists"]
    mine = taskfs("new", path, "--agent", "alice", "--json")
    assert mine.code == 0
    assert mine.json["id"] == "login"
    assert taskfs("show", "login", "--json").json["envelope"]["from"] == "alice"


def test_only_the_requester_adds_and_a_refusal_changes_nothing(repo: Path) -> None:
    task = str(opened("x", "--agent", "alice", "--to", "bob")["id"])
    before = head(repo)
    result = taskfs("intake", "add", task, "more words", "--agent", "bob", "--json")
    assert result.code == 1
    assert result.codes == ["agent_not_allowed"]
    assert head(repo) == before
    assert not git(repo, "status", "--porcelain", "tasks")


def test_the_recipient_proposes_and_only_the_requesters_acceptance_submits(repo: Path) -> None:
    task = str(opened("fix the login bug", "--agent", "alice", "--to", "builder")["id"])
    proposal = fields(repo, "p.yaml", **{k: v for k, v in ENVELOPE.items() if k not in ("from",)})
    refused = taskfs("intake", "propose", task, proposal, "--agent", "alice", "--json")
    assert refused.code == 1
    assert refused.codes == ["agent_not_allowed"]
    assert taskfs("intake", "accept", task, "--agent", "alice", "--json").codes == [
        "proposal_not_found"
    ]
    proposed = taskfs("intake", "propose", task, proposal, "--agent", "builder", "--json")
    assert proposed.code == 0
    assert proposed.json["state"] == "intake"
    assert proposed.json["proposal"]
    # The proposal submitted nothing: the request waits for its requester.
    assert taskfs("show", task, "--json").json["state"] == "intake"
    assert "taskfs intake accept" in taskfs("prime", "--agent", "alice").stdout
    assert taskfs("intake", "accept", task, "--agent", "builder", "--json").codes == [
        "agent_not_allowed"
    ]
    accepted = taskfs("intake", "accept", task, "--agent", "alice", "--json")
    assert accepted.code == 0
    assert accepted.json["state"] == "submitted"
    assert taskfs("show", task, "--json").json["envelope"]["from"] == "alice"
    assert taskfs("audit").code == 0


def test_a_party_cancels_it_and_it_is_no_task_to_move(repo: Path) -> None:
    task = str(opened("x", "--agent", "alice", "--to", "bob")["id"])
    assert taskfs("claim", task, "--agent", "bob", "--json").codes == ["intake_open"]
    # Whatever acts on a task says it is a request, never "no task (did you mean it?)".
    for command in (["check", task], ["send", task, "hi", "--agent", "bob"], ["messages", task]):
        assert taskfs(*command, "--json").codes == ["intake_open"], command
    assert taskfs("move", task, "canceled", "--agent", "eve", "--json").codes == [
        "agent_not_allowed"
    ]
    done = taskfs("move", task, "canceled", "--agent", "bob", "--reason", "not now", "--json")
    assert done.code == 0
    assert done.json["state"] == "canceled"
    assert taskfs("ls", "--json").json["tasks"][0]["state"] == "canceled"
    shown = taskfs("show", task, "--json").json
    assert shown["canceledBy"] == "bob"
    assert shown["reason"] == "not now"
    assert taskfs("intake", "add", task, "more", "--agent", "alice", "--json").codes == [
        "intake_closed"
    ]
    other = str(opened("y", "--agent", "alice")["id"])
    assert taskfs("intake", "cancel", other, "--agent", "alice", "--json").code == 0
    assert taskfs("audit").code == 0


def test_an_intake_owns_nothing_and_blocks_nothing(repo: Path) -> None:
    partial = {"filesAndInterfaces": ENVELOPE["filesAndInterfaces"], "objective": "same files"}
    doc = opened("--file", fields(repo, "p.yaml", **partial), "--agent", "alice", "--to", "builder")
    assert doc["state"] == "intake"
    # A task owning the same files is submitted and claimed beside it.
    task = submit(repo)
    assert [t["id"] for t in taskfs("ready", "--agent", "builder", "--json").json["tasks"]] == [
        task
    ]
    assert taskfs("claim", task, "--agent", "builder").code == 0
    owners = taskfs("owners", "src/auth/login.py", "--json").json["paths"][0]["owners"]
    assert [o["id"] for o in owners] == [task]


def test_bad_requests_are_named_and_write_nothing(repo: Path) -> None:
    before = head(repo)
    assert taskfs("intake", "open", "x", "--id", "-bad", "--agent", "a", "--json").codes == [
        "invalid_task_id"
    ]
    task = submit(repo)
    assert taskfs("intake", "open", "x", "--id", task, "--agent", "a", "--json").codes == [
        "task_exists"
    ]
    assert taskfs("intake", "open", "x", "--agent", "a", "--to", "b c", "--json").codes == [
        "invalid_agent"
    ]
    missing = taskfs("intake", "add", "nosuch", "x", "--agent", "a", "--json")
    assert missing.codes == ["task_not_found"]
    usage = taskfs("intake", "open", "--agent", "a", "--json")
    assert usage.code == 2
    assert usage.codes == ["usage"]
    assert git(repo, "rev-list", "--count", f"{before}..HEAD") == "1"  # the one submit


def test_audit_names_an_intake_file_written_by_someone_else(repo: Path) -> None:
    task = str(opened("x", "--agent", "alice", "--to", "bob")["id"])
    folder = repo / "tasks" / task / "intake"
    forged = folder / "20990101T000000.000000Z-aaaaaaaa.yaml"
    forged.write_text(
        yamlio.dump(
            {
                "intake": task,
                "kind": "request",
                "by": "mallory",
                "at": "2099-01-01T00:00:00Z",
                "text": "objective: mine",
            }
        )
    )
    commit_as(repo, "alice", "forged", str(forged.relative_to(repo)))
    findings = taskfs("audit", "--json").json["findings"]
    assert {f["code"] for f in findings} == {"intake_unauthorized", "author_mismatch"}


def test_an_envelope_without_from_and_no_agent_names_nobody(repo: Path) -> None:
    task = submit(repo, **{"from": None, "to": "builder"})
    assert "from" not in taskfs("show", task, "--json").json["envelope"]


def test_new_with_agent_fills_from_and_the_planner_answers_and_cancels(repo: Path) -> None:
    path = fields(repo, "e.yaml", **{k: v for k, v in ENVELOPE.items() if k != "from"})
    task = taskfs("new", path, "--agent", "planner", "--json").json["id"]
    assert taskfs("show", task, "--json").json["envelope"]["from"] == "planner"
    assert taskfs("claim", task, "--agent", "builder").code == 0
    asked = taskfs(
        "send", task, "which branch?", "--agent", "builder", "--status", "needs_input", "--json"
    )
    assert asked.code == 0, asked.stdout + asked.stderr
    answered = taskfs(
        "send", task, "main", "--agent", "planner", "--in-reply-to", asked.json["msg_id"], "--json"
    )
    assert answered.code == 0, answered.stdout + answered.stderr
    assert taskfs("show", task, "--json").json["state"] == "working"
    # Someone else going back to work on a question is said to answer, not to claim.
    assert taskfs("send", task, "why?", "--agent", "builder", "--status", "needs_input").code == 0
    stranger = taskfs("move", task, "working", "--agent", "eve", "--json")
    assert stranger.codes == ["agent_not_allowed"]
    assert "may not answer" in stranger.json["errors"][0]["message"]
    canceled = taskfs("send", task, "stop", "--agent", "planner", "--status", "canceled", "--json")
    assert canceled.code == 0
    assert taskfs("show", task, "--json").json["state"] == "canceled"
    # An envelope naming another sender is still refused.
    other = fields(repo, "o.yaml", **{**ENVELOPE, "filesAndInterfaces": ["b/**"]})
    assert taskfs("new", other, "--agent", "eve", "--json").codes == ["agent_not_allowed"]


def test_the_recipient_and_the_requester_see_it_in_inbox_prime_and_board(repo: Path) -> None:
    task = str(opened("rename the CLI flag", "--agent", "alice", "--to", "bob")["id"])
    box = taskfs("inbox", "--agent", "bob", "--json").json
    assert [r["id"] for r in box["requests"]] == [task]
    assert box["counts"]["requests"] == 1
    assert box["requests"][0]["text"] == "rename the CLI flag"  # its words, compact
    assert [r["id"] for r in taskfs("inbox", "--agent", "alice", "--json").json["requested"]] == [
        task
    ]
    assert taskfs("inbox", "--agent", "carol", "--json").json["counts"]["requests"] == 0
    primed = taskfs("prime", "--agent", "bob").stdout
    assert f"{task} from alice: rename the CLI flag" in primed
    assert "taskfs intake propose" in primed
    assert "agent_propose" in taskfs("prime", "--agent", "bob", "--mcp").stdout
    board = taskfs("board", "--html", str(repo / "board.html"), "--json").json
    assert board["columns"]["intake"] == [task]
    assert "rename the CLI flag" in (repo / "board.html").read_text()
