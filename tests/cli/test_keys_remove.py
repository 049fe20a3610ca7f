"""`taskfs keys remove`: a peer revoked (interlink's `remove_peer`), recorded in the ledger and
noted by `audit`; what it signed before keeps verifying, nothing it signs after is taken."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_wire import import_lines, ok, peer_says, setup_peer_and_builder
from tests.helpers import git, taskfs
from tests.mcp.test_server import envelope


def test_a_revoked_peer_is_recorded_noted_and_refused_from_then_on(repo: Path) -> None:
    builder = setup_peer_and_builder()
    task = "afar"
    opening = peer_says(builder, text=envelope(**{"from": None, "to": None}), task_id=task)
    code, before = import_lines(opening, peer_says(builder, text="Any news?", task_id=task))
    assert code == 0, before
    assert ok("audit")["findings"] == []

    # The operator revokes it (a peer's key: interlink's remove_peer is the local side's act).
    done = ok("keys", "remove", "--agent", "planner", "--reason", "left the team")
    assert (done["name"], done["path"]) == ("planner", ".taskfs/keys/agent/planner.pub")
    assert done["record"] == f".taskfs/keys/revoked/agent/planner-{done['keyId']}.yaml"
    assert not (repo / done["path"]).exists()
    assert (repo / done["record"]).is_file()
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "log", "-1", "--format=%an") == "operator"
    assert "Taskfs-Key-Revoked: agent/planner" in git(repo, "log", "-1", "--format=%B")
    assert "planner" not in [k["name"] for k in ok("keys", "ls")["keys"]]

    # Audit notes the revocation; it finds nothing wrong.
    audit = ok("audit")
    assert audit["findings"] == []
    assert [n["code"] for n in audit["notes"]] == ["agent_key_revoked"]
    assert "left the team" in audit["notes"][0]["message"]
    # What planner signed before still verifies (under the revoked key, recorded).
    rows = ok("messages", task)["messages"]
    assert [(m["from"], m["verified"]) for m in rows if m["text"] == "Any news?"] == [
        ("planner", True)
    ]
    assert taskfs("validate", "--json").json["ok"] is True
    # From now on planner's messages are a stranger's, and none goes to planner.
    code, after = import_lines(peer_says(builder, text="Still there?", task_id=task))
    assert code == 1
    assert [line["code"] for line in after["lines"]] == ["sender_unknown"]
    sent = taskfs("send", task, "Hello?", "--agent", "builder", "--to", "planner", "--json")
    assert sent.codes == ["recipient_unknown"]

    again = taskfs("keys", "remove", "--agent", "planner", "--json")
    assert (again.code, again.codes) == (1, ["key_not_found"])


def test_a_key_deleted_by_hand_is_still_a_finding(repo: Path) -> None:
    setup_peer_and_builder()
    git(repo, "rm", "-q", ".taskfs/keys/agent/planner.pub")
    git(repo, "commit", "-q", "-m", "drop a key quietly")
    codes = [f["code"] for f in ok_audit(repo)["findings"]]
    assert codes == ["agent_key_changed"]


def ok_audit(repo: Path) -> dict[str, object]:
    result = taskfs("audit", "--json", cwd=repo)
    assert result.code == 1
    return dict(result.json)
