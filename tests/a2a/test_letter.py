"""A2A 1.0 to the letter, over a real `taskfs a2a serve`: a `contextId` that is not its
task's is refused (section 3.4.3), a blocking `SendMessage` waits until the task is finished
or interrupted (section 3.2.2, as the card says), a 0.3 method name under `A2A-Version: 1.0`
is JSON-RPC's `MethodNotFound`, and a request's opening words stay in the history of the task
it became."""

from __future__ import annotations

import concurrent.futures
import time
from pathlib import Path
from typing import Any

import httpx

from tests.a2a.serving import rpc, serving, taskfs_code
from tests.helpers import ENVELOPE, git, taskfs_process

V1 = {"A2A-Version": "1.0"}
PLANNER = {**V1, "X-Taskfs-Agent": "planner"}  # a loopback caller names itself


def message(**changes: Any) -> dict[str, Any]:
    sent = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "Fix the login."}]}
    sent.update(changes)
    return {k: v for k, v in sent.items() if v is not None}


def envelope_part(task_id: str) -> dict[str, Any]:
    return {"data": {**ENVELOPE, "id": task_id, "filesAndInterfaces": [f"src/{task_id}.py"]}}


def commits(repo: Path) -> int:
    return int(git(repo, "rev-list", "--count", "HEAD"))


def error_of(answer: httpx.Response) -> tuple[int, str]:
    body = answer.json()
    assert "error" in body, body
    return body["error"]["code"], taskfs_code(body)


def exists(repo: Path, task_id: str) -> bool:
    return taskfs_process("show", task_id, "--json", cwd=repo).code == 0


def until(predicate: Any, deadline: float = 60) -> None:
    end = time.monotonic() + deadline
    while not predicate():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.1)


def test_a_context_id_that_is_not_the_tasks_is_refused(repo: Path) -> None:
    with serving(repo, "builder") as served:
        url = served.url
        opened = rpc(url, "SendMessage", {"message": message(parts=[envelope_part("t1")])}, PLANNER)
        assert opened.json()["result"]["task"]["contextId"] == "auth-hardening"
        request = rpc(url, "SendMessage", {"message": message(contextId="c1")}, PLANNER)
        asked = request.json()["result"]["task"]
        assert (asked["status"]["state"], asked["contextId"]) == ("TASK_STATE_INPUT_REQUIRED", "c1")
        before = commits(repo)
        for task_id, wrong in (("t1", "c1"), (asked["id"], "auth-hardening")):
            sent = message(messageId="m2", taskId=task_id, contextId=wrong, parts=[{"text": "x"}])
            answer = rpc(url, "SendMessage", {"message": sent}, PLANNER)
            assert error_of(answer) == (-32602, "invalid_value")
            assert answer.json()["error"]["data"][0]["metadata"]["taskfsErrors"].count("contextId")
        assert commits(repo) == before  # nothing was written
        # Its own context, or none, is taken.
        for task_id, context in (("t1", "auth-hardening"), ("t1", None), (asked["id"], "c1")):
            sent = message(messageId="m3", taskId=task_id, contextId=context, parts=[{"text": "y"}])
            assert "result" in rpc(url, "SendMessage", {"message": sent}, PLANNER).json()


def test_a_blocking_send_message_waits_until_the_task_is_interrupted_or_finished(
    repo: Path,
) -> None:
    with serving(repo, "builder") as served, concurrent.futures.ThreadPoolExecutor(2) as pool:
        url = served.url
        card = httpx.get(url + ".well-known/agent-card.json", timeout=30).json()
        extension = card["capabilities"]["extensions"][0]
        assert extension["params"]["sendMessageWaits"] is True

        def blocking(task_id: str) -> httpx.Response:
            sent = message(messageId=task_id, parts=[envelope_part(task_id)])
            # no configuration: returnImmediately is false, A2A's default
            call = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": sent}}
            return httpx.post(url, json=call, headers=PLANNER, timeout=120)

        asked = pool.submit(blocking, "t1")
        until(lambda: exists(repo, "t1"))
        # Submitted, then claimed: still in progress, so the call still waits.
        assert taskfs_process("claim", "t1", "--agent", "builder", cwd=repo).code == 0
        question = ("send", "t1", "Which branch?", "--agent", "builder", "--status", "needs_input")
        assert taskfs_process(*question, cwd=repo).code == 0
        task = asked.result(timeout=120).json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert task["status"]["message"]["parts"][0]["text"] == "Which branch?"

        refused = pool.submit(blocking, "t2")
        until(lambda: exists(repo, "t2"))
        no = ("refuse", "t2", "--agent", "builder", "--reason", "not mine")
        assert taskfs_process(*no, cwd=repo).code == 0
        assert refused.result(timeout=120).json()["result"]["task"]["status"]["state"] == (
            "TASK_STATE_REJECTED"
        )
        # returnImmediately answers the task as it is at once.
        sent = message(messageId="t3", parts=[envelope_part("t3")])
        at_once = {"message": sent, "configuration": {"returnImmediately": True}}
        task = rpc(url, "SendMessage", at_once, PLANNER).json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_SUBMITTED"


def test_a_0_3_method_under_a2a_version_1_0_is_method_not_found(repo: Path) -> None:
    with serving(repo, "builder") as served:
        url = served.url
        rpc(url, "SendMessage", {"message": message(parts=[envelope_part("t1")])}, PLANNER)
        before = commits(repo)
        old_send = {"message": {**message(parts=[envelope_part("t2")]), "kind": "message"}}
        for method, params in (("tasks/get", {"id": "t1"}), ("message/send", old_send)):
            answer = rpc(url, method, params, PLANNER)
            assert error_of(answer) == (-32601, "a2a_method_not_found")
            # another version than 0.3 and 1.0 is not spoken at all
            answer = rpc(url, method, params, {**PLANNER, "A2A-Version": "2.0"})
            assert error_of(answer) == (-32009, "a2a_version_unsupported")
        assert commits(repo) == before
        # Without the header, or under 0.3, they are 0.3's methods.
        for headers in ({"X-Taskfs-Agent": "planner"}, {**PLANNER, "A2A-Version": "0.3"}):
            shown = rpc(url, "tasks/get", {"id": "t1"}, headers).json()
            assert shown["result"]["id"] == "t1"


def test_a_requests_opening_words_stay_in_the_history_of_the_task_it_became(
    repo: Path,
) -> None:
    with serving(repo, "builder") as served:
        url = served.url
        opening = message(parts=[{"text": "Empty passwords get in: please fix the login."}])
        asked = rpc(url, "SendMessage", {"message": opening}, PLANNER).json()["result"]["task"]
        task_id = asked["id"]
        whole = message(messageId="m2", taskId=task_id, parts=[envelope_part(task_id)])
        task = rpc(url, "SendMessage", {"message": whole}, PLANNER).json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_SUBMITTED"
        for shown in (task, rpc(url, "GetTask", {"id": task_id}, PLANNER).json()["result"]):
            first = shown["history"][0]
            assert first["role"] == "ROLE_USER"
            assert first["parts"][0]["text"] == "Empty passwords get in: please fix the login."
            assert first["taskId"] == task_id
        # historyLength counts it like any message: the most recent are kept.
        everything = rpc(url, "GetTask", {"id": task_id}, PLANNER).json()["result"]["history"]
        one = rpc(url, "GetTask", {"id": task_id, "historyLength": 1}, PLANNER).json()["result"]
        assert one["history"] == everything[-1:]
