"""`ListTasks` over a real `taskfs a2a serve`, on the wire as A2A 1.0 clients send it: only the
caller's tasks (its sender, recipient or holder), newest status first, filtered, a page at a
time by cursor tokens, and refused in A2A's shapes naming taskfs's codes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.a2a.serving import rpc, serving, taskfs_code, write_tokens
from tests.helpers import ENVELOPE, taskfs_process

PLANNER = "planner-token-0123456789"
MALLORY = "mallory-token-0123456789"
BUILDER = "builder-token-0123456789"


@pytest.fixture
def tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    table = {PLANNER: "planner", MALLORY: "mallory", BUILDER: "builder"}
    path = write_tokens(tmp_path / "operator" / "a2a.yaml", table)
    monkeypatch.setenv("TASKFS_A2A_TOKENS", str(path))
    return path


def bearer(token: str) -> dict[str, str]:
    return {"A2A-Version": "1.0", "Authorization": f"Bearer {token}"}


def call(url: str, token: str, method: str, **params: Any) -> dict[str, Any]:
    answer = rpc(url, method, params, bearer(token)).json()
    assert "result" in answer, answer
    result: dict[str, Any] = answer["result"]
    return result


def refusal(url: str, token: str, method: str, **params: Any) -> dict[str, Any]:
    answer: dict[str, Any] = rpc(url, method, params, bearer(token)).json()
    assert "error" in answer, answer
    return answer


def open_task(url: str, token: str, task_id: str, context: str) -> None:
    envelope = {k: v for k, v in ENVELOPE.items() if k not in ("from", "to")}
    envelope.update(id=task_id, contextID=context, filesAndInterfaces=[f"src/{task_id}.py"])
    message = {"messageId": task_id, "role": "ROLE_USER", "parts": [{"data": envelope}]}
    task = call(url, token, "SendMessage", message=message)["task"]
    assert task["status"]["state"] == "TASK_STATE_SUBMITTED"


def listed(url: str, token: str, **params: Any) -> list[str]:
    return [t["id"] for t in call(url, token, "ListTasks", **params)["tasks"]]


def test_list_tasks_pages_through_the_callers_tasks_newest_first(repo: Path, tokens: Path) -> None:
    with serving(repo, "builder") as served:
        url = served.url
        for number in range(1, 6):
            open_task(url, PLANNER, f"t{number}", "listing" if number <= 3 else "other")
        open_task(url, MALLORY, "m1", "listing")
        text = {"messageId": "prose", "role": "ROLE_USER", "parts": [{"text": "Fix the login."}]}
        request = call(url, PLANNER, "SendMessage", message=text)["task"]
        assert request["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        mine = {"t1", "t2", "t3", "t4", "t5", request["id"]}

        # Page by page: every task once, the newest status first, an empty token at the end.
        seen: list[dict[str, Any]] = []
        token = ""
        while True:
            page = call(url, PLANNER, "ListTasks", pageSize=2, pageToken=token)
            assert page["totalSize"] == len(mine)
            assert page["pageSize"] == len(page["tasks"]) <= 2
            seen += page["tasks"]
            token = page["nextPageToken"]
            if not token:
                break
        assert [t["id"] for t in seen] == listed(url, PLANNER)
        assert {t["id"] for t in seen} == mine
        assert len(seen) == len(mine)
        stamps = [t["status"]["timestamp"] for t in seen]
        assert stamps == sorted(stamps, reverse=True)
        assert all("artifacts" not in t for t in seen)  # only with includeArtifacts

        # Only the caller's tasks: the sender's, the recipient's (the served agent's).
        assert set(listed(url, MALLORY)) == {"m1"}
        assert set(listed(url, BUILDER)) == mine | {"m1"}

        # Filters: the context, the state (a request waits for input), the status time.
        assert set(listed(url, PLANNER, contextId="listing")) == {"t1", "t2", "t3"}
        assert listed(url, PLANNER, status="TASK_STATE_INPUT_REQUIRED") == [request["id"]]
        claimed = taskfs_process("claim", "t2", "--agent", "builder", "--json", cwd=repo)
        assert claimed.code == 0, claimed.stderr
        assert listed(url, PLANNER)[0] == "t2"  # its status changed last
        assert listed(url, PLANNER, status="TASK_STATE_WORKING", contextId="listing") == ["t2"]
        working = call(url, PLANNER, "GetTask", id="t2")["status"]["timestamp"]
        assert listed(url, PLANNER, statusTimestampAfter=working) == ["t2"]
        assert listed(url, PLANNER, contextId="nothing-here") == []
        empty = call(url, PLANNER, "ListTasks", contextId="nothing-here")
        assert (empty["totalSize"], empty["pageSize"], empty["nextPageToken"]) == (0, 0, "")

        # historyLength limits each task's history; 0 shows none.
        said = taskfs_process("send", "t2", "which branch?", "--agent", "builder", cwd=repo)
        assert said.code == 0, said.stderr
        full = call(url, PLANNER, "ListTasks", contextId="listing", status="TASK_STATE_WORKING")
        assert len(full["tasks"][0]["history"]) == 1
        none = call(url, PLANNER, "ListTasks", contextId="listing", historyLength=0)
        assert all(not t.get("history") for t in none["tasks"])

        # Refusals are InvalidParams naming what was wrong.
        for params, field in (
            ({"pageSize": 0}, "pageSize"),
            ({"pageSize": 101}, "pageSize"),
            ({"pageToken": "not-a-token"}, "pageToken"),
            ({"status": "TASK_STATE_NAPPING"}, "status"),
            ({"historyLength": -1}, "historyLength"),
        ):
            answer = refusal(url, PLANNER, "ListTasks", **params)
            assert answer["error"]["code"] == -32602, params
            assert taskfs_code(answer) == "invalid_value"
            assert field in answer["error"]["message"]


def test_without_tokens_an_unnamed_caller_lists_every_task(repo: Path) -> None:
    with serving(repo, "builder") as served:
        for sender, task_id in (("planner", "p1"), ("mallory", "m1")):
            envelope = {**ENVELOPE, "id": task_id, "from": sender, "to": "builder"}
            envelope["filesAndInterfaces"] = [f"src/{task_id}.py"]
            message = {"messageId": task_id, "role": "ROLE_USER", "parts": [{"data": envelope}]}
            sent = rpc(served.url, "SendMessage", {"message": message}).json()
            assert sent["result"]["task"]["id"] == task_id
        anyone = rpc(served.url, "ListTasks", {}).json()["result"]
        named = {"A2A-Version": "1.0", "X-Taskfs-Agent": "planner"}
        planner = rpc(served.url, "ListTasks", {}, named).json()["result"]
    assert {t["id"] for t in anyone["tasks"]} == {"p1", "m1"}
    assert [t["id"] for t in planner["tasks"]] == ["p1"]
