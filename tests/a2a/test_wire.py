"""A2A 1.0's wire rules over a real `taskfs a2a serve`: the `A2A-Version` header, the fields a
message must have, the media types it may carry, and every refusal in the spec's shape (its
JSON-RPC code, and taskfs's code in the error's data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.a2a.serving import rpc, serving, taskfs_code
from tests.helpers import ENVELOPE, taskfs_process

V1 = {"A2A-Version": "1.0"}
PLANNER = {**V1, "X-Taskfs-Agent": "planner"}  # a loopback caller names itself


def message(**changes: Any) -> dict[str, Any]:
    sent = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "Fix the login."}]}
    sent.update(changes)
    return {k: v for k, v in sent.items() if v is not None}


def envelope_message(task_id: str) -> dict[str, Any]:
    data = {**ENVELOPE, "id": task_id, "filesAndInterfaces": [f"src/{task_id}.py"]}
    return message(messageId=task_id, parts=[{"data": data}])


def error_of(answer: httpx.Response) -> tuple[int, str]:
    body = answer.json()
    assert "error" in body, body
    return body["error"]["code"], taskfs_code(body)


def test_the_version_header_is_read_as_a2a_1_0_says(repo: Path) -> None:
    with serving(repo, "builder") as served:
        url = served.url
        # No header is 0.3, and 1.1 is not 1.0: neither is spoken by the 1.0 methods.
        for headers, named in (({}, "0.3"), ({"A2A-Version": "1.1"}, "1.1")):
            answer = rpc(url, "GetTask", {"id": "t1"}, headers)
            assert error_of(answer) == (-32009, "a2a_version_unsupported")
            assert f"'{named}'" in answer.json()["error"]["message"]
        streamed = rpc(url, "SubscribeToTask", {"id": "t1"}, {})
        assert error_of(_event(streamed)) == (-32009, "a2a_version_unsupported")
        # A patch number is ignored; the request parameter may name the version instead.
        assert "result" in rpc(url, "SendMessage", {"message": envelope_message("t1")}).json()
        assert "result" in rpc(url, "GetTask", {"id": "t1"}, {"A2A-Version": "1.0.7"}).json()
        call = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t1"}}
        by_parameter = httpx.post(url + "?A2A-Version=1.0", json=call, timeout=30).json()
        assert by_parameter["result"]["id"] == "t1"
        # The 0.3 method names still answer without a header, as 0.3.
        old = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": "t1"}}
        assert httpx.post(url, json=old, timeout=30).json()["result"]["id"] == "t1"


def test_a_message_is_refused_in_a2a_shapes_naming_taskfs_codes(repo: Path) -> None:
    commits = _commits(repo)
    with serving(repo, "builder") as served:
        url = served.url
        for sent, field in (
            (message(messageId=None), "messageId"),
            (message(role=None), "role"),
            (message(role="ROLE_AGENT"), "role"),
            (message(parts=None), "parts"),
            (message(parts=[{"mediaType": "text/plain"}]), "parts"),
        ):
            answer = rpc(url, "SendMessage", {"message": sent}, V1)
            assert error_of(answer) == (-32602, "invalid_value"), sent
            assert field in answer.json()["error"]["message"]
        for part in (
            {"raw": "dGVzdA==", "mediaType": "application/octet-stream"},
            {"url": "https://example.com/spec.pdf"},
            {"text": "<p>hi</p>", "mediaType": "text/html"},
        ):
            answer = rpc(url, "SendMessage", {"message": message(parts=[part])}, V1)
            assert error_of(answer) == (-32005, "media_type_unsupported"), part
            assert "Content type not supported" in answer.json()["error"]["message"]
        bad_history = {"message": message(), "configuration": {"historyLength": -1}}
        assert error_of(rpc(url, "SendMessage", bad_history, V1)) == (-32602, "invalid_value")
        assert _commits(repo) == commits  # nothing refused was kept

        # A task the caller cannot see is not found, as a stream's one error event too.
        missing = rpc(url, "SubscribeToTask", {"id": "no-such-task"}, V1)
        assert missing.headers["content-type"].startswith("text/event-stream")
        assert error_of(_event(missing)) == (-32001, "task_not_found")
        assert "Task not found" in _event(missing).json()["error"]["message"]
        assert error_of(rpc(url, "GetTask", {"id": "no-such-task"}, V1))[0] == -32001

        # A finished task takes no more messages and no fresh subscription.
        assert "result" in rpc(url, "SendMessage", {"message": envelope_message("t1")}, V1).json()
        assert error_of(rpc(url, "GetTask", {"id": "t1", "historyLength": -1}, V1)) == (
            -32602,
            "invalid_value",
        )
        assert "result" in rpc(url, "CancelTask", {"id": "t1"}, PLANNER).json()
        again = rpc(url, "CancelTask", {"id": "t1"}, PLANNER)
        assert error_of(again) == (-32002, "transition_not_allowed")
        late = message(messageId="late", taskId="t1")
        refused = rpc(url, "SendMessage", {"message": late}, PLANNER)
        assert error_of(refused) == (-32004, "task_finished")
        subscribed = rpc(url, "SubscribeToTask", {"id": "t1"}, PLANNER)
        assert error_of(_event(subscribed)) == (-32004, "task_finished")

        # A request canceled twice is not cancelable the second time.
        opened = rpc(url, "SendMessage", {"message": message(messageId="prose")}, V1).json()
        request = opened["result"]["task"]["id"]
        assert "result" in rpc(url, "CancelTask", {"id": request}, V1).json()
        twice = rpc(url, "CancelTask", {"id": request}, V1)
        assert error_of(twice) == (-32002, "intake_closed")

        # What the card does not declare is refused with the spec's own codes.
        card = rpc(url, "GetExtendedAgentCard", {}, V1).json()
        assert card["error"]["code"] == -32004
        push = {"taskId": "t1", "url": "https://example.com/hook"}
        assert rpc(url, "CreateTaskPushNotificationConfig", push, V1).json()["error"]["code"] == (
            -32003
        )
    shown = taskfs_process("show", "t1", "--json", cwd=repo)
    assert shown.json["state"] == "canceled"


def _event(response: httpx.Response) -> httpx.Response:
    """The one `error` event of a stream, as a response of its own (for `error_of`)."""
    assert response.headers["content-type"].startswith("text/event-stream")
    lines = response.text.splitlines()
    assert "event: error" in lines, response.text
    data = next(line.removeprefix("data: ") for line in lines if line.startswith("data: "))
    return httpx.Response(200, content=json.dumps(json.loads(data)).encode())


def _commits(repo: Path) -> int:
    from tests.helpers import git

    return int(git(repo, "rev-list", "--count", "HEAD"))
