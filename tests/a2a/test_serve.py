"""`taskfs a2a serve` driven by a2a-sdk's own client, over real HTTP, against a real ledger.

The server runs as a subprocess on a free loopback port; the worker acts through the taskfs
command line in the same repository, as any agent in the checkout would.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from a2a.helpers.proto_helpers import new_data_part
from a2a.types import a2a_pb2 as pb
from a2a.utils import errors as a2a_errors
from google.protobuf import json_format

from taskfs.core import yamlio
from tests.a2a.serving import client, resume_from, rpc, serving, taskfs_code, write_tokens
from tests.helpers import ENVELOPE, git, taskfs_process

PLANNER = "planner-token-0123456789"
MALLORY = "mallory-token-0123456789"
T = TypeVar("T")


@pytest.fixture
def tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = write_tokens(
        tmp_path / "operator" / "a2a.yaml", {PLANNER: "planner", MALLORY: "mallory"}
    )
    monkeypatch.setenv("TASKFS_A2A_TOKENS", str(path))
    return path


def envelope(**changes: Any) -> dict[str, Any]:
    data = {k: v for k, v in ENVELOPE.items() if k not in ("from", "to")}
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


def opening(document: dict[str, Any]) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(
        message=pb.Message(message_id="open", role=pb.ROLE_USER, parts=[new_data_part(document)])
    )


def answer(task_id: str, text: str) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(
        message=pb.Message(
            message_id="answer", task_id=task_id, role=pb.ROLE_USER, parts=[pb.Part(text=text)]
        )
    )


def event_id(response: pb.StreamResponse) -> str | None:
    """The ledger id a stream event carries (None for the task snapshot)."""
    for name in ("status_update", "artifact_update"):
        if response.HasField(name):  # type: ignore[arg-type]
            meta = json_format.MessageToDict(getattr(response, name).metadata)
            return str(meta["eventId"])
    return None


def state_of(response: pb.StreamResponse) -> str | None:
    if response.HasField("status_update"):
        return pb.TaskState.Name(response.status_update.status.state)
    return None


def cli(repo: Path, *args: str) -> Any:
    return taskfs_process(*args, "--json", cwd=repo)


async def off_loop(fn: Callable[[], T]) -> T:
    return await asyncio.to_thread(fn)


async def collect(stream: Any, into: list[pb.StreamResponse]) -> None:
    async for response in stream:
        into.append(response)


async def until(check: Callable[[], bool], what: str, seconds: float = 60) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while not check():
        if loop.time() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def ids(responses: list[pb.StreamResponse]) -> list[str]:
    return [i for i in (event_id(r) for r in responses) if i is not None]


async def full_stream(url: str, task_id: str, first: str) -> list[str]:
    """Every event id of a finished task: its first, and a stream resumed after it (A2A
    takes no fresh subscription to a finished task; a cut stream resumes, finished or not)."""
    got: list[pb.StreamResponse] = []
    async with client(url, PLANNER) as planner:
        request = pb.SubscribeToTaskRequest(id=task_id)
        await collect(planner.subscribe(request, context=resume_from(first)), got)
        with pytest.raises(a2a_errors.UnsupportedOperationError) as fresh:
            await collect(planner.subscribe(request), [])
        assert fresh.value.data["taskfsCode"] == "task_finished"
    assert got[0].HasField("task")
    return [first, *ids(got)]


def run(coro: Awaitable[T]) -> T:
    return asyncio.run(coro)  # type: ignore[arg-type]


# -- the card -----------------------------------------------------------------------------


def test_the_card_says_what_the_agent_accepts(repo: Path, tokens: Path) -> None:
    with serving(repo, "builder") as served:
        card = httpx.get(served.url + ".well-known/agent-card.json", timeout=30).json()
    assert card["name"] == "builder"
    assert card["capabilities"]["streaming"] is True
    assert card["supportedInterfaces"][0]["url"] == served.url
    extension = card["capabilities"]["extensions"][0]
    required = extension["params"]["schema"]["required"]
    for key in ("objective", "filesAndInterfaces", "acceptanceCheck", "contextID"):
        assert key in required
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "bearer"
    assert "filesAndInterfaces" in card["skills"][0]["description"]


# -- a task from an envelope to completion ------------------------------------------------


def test_a_task_opened_over_a2a_is_worked_through_the_ledger(repo: Path, tokens: Path) -> None:
    with serving(repo, "builder") as served:
        run(_delegation(repo, served.url))


async def _delegation(repo: Path, url: str) -> None:
    first: list[pb.StreamResponse] = []
    async with client(url, PLANNER) as planner:
        opened = asyncio.create_task(collect(planner.send_message(opening(envelope())), first))
        await until(lambda: len(first) >= 2, "the task and its submitted status")
        assert first[0].HasField("task")
        task_id = first[0].task.id
        assert state_of(first[1]) == "TASK_STATE_SUBMITTED"
        shown = (await off_loop(lambda: cli(repo, "show", task_id))).json
        assert shown["envelope"]["from"] == "planner"  # the caller its token names
        assert shown["envelope"]["to"] == "builder"

        # The worker claims it and asks a question: the stream stops at input-required.
        assert (await off_loop(lambda: cli(repo, "claim", task_id, "--agent", "builder"))).code == 0
        asked = await off_loop(
            lambda: cli(
                repo,
                "send",
                task_id,
                "Which branch?",
                "--agent",
                "builder",
                "--status",
                "needs_input",
            )
        )
        assert asked.code == 0, asked.stderr
        question = asked.json["msg_id"]
        await asyncio.wait_for(opened, 60)
        states = [state_of(r) for r in first[1:]]
        assert states == [
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_INPUT_REQUIRED",  # the question, carried by a status update
            "TASK_STATE_INPUT_REQUIRED",
        ]
        said = first[3].status_update.status.message
        assert said.message_id == question
        assert said.role == pb.ROLE_AGENT
        assert said.parts[0].text == "Which branch?"

        # The answer, in the same task, is `taskfs send` in reply to the open question.
        second: list[pb.StreamResponse] = []
        answered = asyncio.create_task(
            collect(planner.send_message(answer(task_id, "main, please")), second)
        )
        await until(lambda: len(second) >= 2, "the answer's working status")
        assert state_of(second[1]) == "TASK_STATE_WORKING"
        thread = (await off_loop(lambda: cli(repo, "messages", task_id))).json["messages"]
        reply = thread[-1]
        assert (reply["from"], reply["in_reply_to"]) == ("planner", question)

        # A completion without evidence is refused and never reaches the stream.
        (repo / "src" / "auth").mkdir(parents=True)
        (repo / "src" / "auth" / "login.py").write_text(
            "def login(password):\n    return bool(password)\n"
        )
        git(repo, "add", "src/auth/login.py")
        git(repo, "commit", "-q", "-m", "builder: refuse empty passwords")
        artifact = ["--artifact", "login=src/auth/login.py"]
        refused = await off_loop(
            lambda: cli(repo, "complete", task_id, "--agent", "builder", *artifact)
        )
        assert refused.code == 1
        assert refused.codes == ["completion_requires_evidence"]
        checked = await off_loop(lambda: cli(repo, "check", task_id, "--agent", "builder"))
        assert checked.code == 0, checked.stdout + checked.stderr
        done = await off_loop(
            lambda: cli(repo, "complete", task_id, "--agent", "builder", *artifact)
        )
        assert done.code == 0, done.stderr
        await asyncio.wait_for(answered, 60)

        tail = second[2:]
        assert tail[0].artifact_update.artifact.name == "acceptance-evidence"
        evidence = json_format.MessageToDict(tail[0].artifact_update.artifact.parts[0].data)
        assert evidence["verdict"] == "pass"
        declared = tail[1].artifact_update.artifact
        assert declared.name == "login"
        assert declared.parts[1].raw == (repo / "src/auth/login.py").read_bytes()
        assert state_of(tail[2]) == "TASK_STATE_COMPLETED"
        assert len(tail) == 3

        got = await planner.get_task(pb.GetTaskRequest(id=task_id))
        assert got.status.state == pb.TASK_STATE_COMPLETED
        assert [a.name for a in got.artifacts] == ["acceptance-evidence", "login"]
        assert [m.message_id for m in got.history] == [question, reply["msg_id"]]

        # Both streams together are the ledger's events, in order, each once.
        everything = await full_stream(url, task_id, ids(first)[0])
        assert ids(first) + ids(second) == [
            i for i in everything if i != reply["msg_id"]
        ]  # the answerer's own message starts its stream: it is not sent back to it
        assert len(set(everything)) == len(everything)
        log = (await off_loop(lambda: cli(repo, "log", task_id))).json
        assert [e for e in everything if e.startswith("status/") and "#" not in e] == [
            "status/" + row["file"] for row in log["history"]
        ]


def test_a_task_is_canceled_with_cancel_task(repo: Path, tokens: Path) -> None:
    with serving(repo, "builder") as served:
        run(_cancel(repo, served.url))


async def _cancel(repo: Path, url: str) -> None:
    async with client(url, PLANNER, streaming=False) as planner:
        responses = [r async for r in planner.send_message(opening(envelope(id="second-task")))]
        assert responses[0].task.status.state == pb.TASK_STATE_SUBMITTED
        canceled = await planner.cancel_task(pb.CancelTaskRequest(id="second-task"))
        assert canceled.status.state == pb.TASK_STATE_CANCELED
        shown = (await off_loop(lambda: cli(repo, "show", "second-task"))).json
        assert shown["state"] == "canceled"
        with pytest.raises(a2a_errors.TaskNotCancelableError) as again:
            await planner.cancel_task(pb.CancelTaskRequest(id="second-task"))
        assert again.value.data["taskfsCode"] == "transition_not_allowed"


# -- kill -9 and resume ---------------------------------------------------------------------


def test_a_stream_resumes_after_the_server_is_killed_without_loss_or_repetition(
    repo: Path, tokens: Path
) -> None:
    with serving(repo, "builder") as served:
        before, task_id = run(_until_claimed(repo, served.url))
        served.kill()
    # While no server runs, the work goes on in the ledger.
    assert (
        cli(repo, "send", task_id, "halfway", "--agent", "builder", "--status", "update").code == 0
    )
    assert cli(repo, "check", task_id, "--agent", "builder").code == 1  # nothing built yet
    with serving(repo, "builder") as served:
        after = run(_resume(repo, served.url, task_id, ids(before)[-1]))
        everything = run(full_stream(served.url, task_id, ids(before)[0]))
    assert ids(before) + ids(after) == everything
    assert len(set(everything)) == len(everything)


async def _until_claimed(repo: Path, url: str) -> tuple[list[pb.StreamResponse], str]:
    got: list[pb.StreamResponse] = []
    async with client(url, PLANNER) as planner:
        streaming = asyncio.create_task(collect(planner.send_message(opening(envelope())), got))
        await until(lambda: len(got) >= 2, "the submitted status")
        task_id = got[0].task.id
        assert (await off_loop(lambda: cli(repo, "claim", task_id, "--agent", "builder"))).code == 0
        await until(lambda: len(got) >= 3, "the working status")
        streaming.cancel()
    return got, task_id


async def _resume(repo: Path, url: str, task_id: str, last: str) -> list[pb.StreamResponse]:
    got: list[pb.StreamResponse] = []
    async with client(url, PLANNER) as planner:
        stream = planner.subscribe(pb.SubscribeToTaskRequest(id=task_id), context=resume_from(last))
        following = asyncio.create_task(collect(stream, got))
        await until(lambda: len(got) >= 3, "the snapshot and the missed events")
        assert got[0].HasField("task")
        refused = await off_loop(
            lambda: cli(repo, "refuse", task_id, "--agent", "builder", "--reason", "x")
        )
        assert refused.codes == ["transition_not_allowed"]
        failed = await off_loop(
            lambda: cli(
                repo, "move", task_id, "failed", "--agent", "builder", "--reason", "no time"
            )
        )
        assert failed.code == 0
        await asyncio.wait_for(following, 60)  # failed is final: the subscription ends
    assert state_of(got[-1]) == "TASK_STATE_FAILED"
    return got


# -- refusals ---------------------------------------------------------------------------------


def test_refusals_are_a2a_errors_naming_taskfs_codes(repo: Path, tokens: Path) -> None:
    with serving(repo, "builder") as served:
        run(_refusals(repo, served.url))


async def _refusals(repo: Path, url: str) -> None:
    async with client(url, PLANNER, streaming=False) as planner:
        # An envelope that lacks a field is kept as a request (contract section 12), waiting
        # for input, its status message naming each problem.
        kept = [
            r async for r in planner.send_message(opening(envelope(objective=None, objectve="x")))
        ]
        status = kept[0].task.status
        assert status.state == pb.TASK_STATE_INPUT_REQUIRED
        named = json_format.MessageToDict(status.message.parts[1].data)
        assert {p["code"] for p in named["problems"]} == {"objective_required", "unknown_field"}
        assert "objective_required" in status.message.parts[0].text
        commits = git(repo, "rev-list", "--count", "HEAD")
        with pytest.raises(a2a_errors.InvalidParamsError) as elsewhere:
            async for _ in planner.send_message(opening(envelope(to="someone-else"))):
                pass
        assert elsewhere.value.data["taskfsCode"] == "invalid_value"
        with pytest.raises(a2a_errors.UnsupportedOperationError) as forged:
            async for _ in planner.send_message(opening(envelope(**{"from": "mallory"}))):
                pass
        assert forged.value.data["taskfsCode"] == "agent_not_allowed"
        assert git(repo, "rev-list", "--count", "HEAD") == commits  # nothing committed
        got = [r async for r in planner.send_message(opening(envelope(id="planners")))]
        assert got[0].task.id == "planners"
        with pytest.raises(a2a_errors.TaskNotFoundError) as missing:
            await planner.get_task(pb.GetTaskRequest(id="no-such-task"))
        assert missing.value.data["taskfsCode"] == "task_not_found"
    # Who is calling is the transport's question: HTTP 401, the JSON-RPC error as its body.
    wrong = {"A2A-Version": "1.0", "Authorization": "Bearer not-a-token-at-all"}
    for sent in (wrong, {"A2A-Version": "1.0"}):
        refused = await off_loop(partial(rpc, url, "GetTask", {"id": "planners"}, sent))
        assert refused.status_code == 401
        assert refused.headers["WWW-Authenticate"] == "Bearer"
        assert refused.json()["error"]["code"] == -32600
        assert taskfs_code(refused.json()) == "token_invalid"
    async with client(url, MALLORY) as mallory:
        with pytest.raises(a2a_errors.TaskNotFoundError) as theirs:
            await mallory.get_task(pb.GetTaskRequest(id="planners"))
        assert theirs.value.data["taskfsCode"] == "agent_not_allowed"
        with pytest.raises(a2a_errors.TaskNotFoundError) as follow:
            async for _ in mallory.subscribe(pb.SubscribeToTaskRequest(id="planners")):
                pass
        assert follow.value.data["taskfsCode"] == "agent_not_allowed"
        with pytest.raises(a2a_errors.TaskNotFoundError):
            await mallory.cancel_task(pb.CancelTaskRequest(id="planners"))
    async with client(url, PLANNER) as planner:
        stream = planner.subscribe(
            pb.SubscribeToTaskRequest(id="planners"), context=resume_from("status/9999-x.yaml")
        )
        with pytest.raises(a2a_errors.InvalidParamsError) as unknown:
            await collect(stream, [])
        assert unknown.value.data["taskfsCode"] == "event_not_found"
    assert (await off_loop(lambda: cli(repo, "show", "planners"))).json["state"] == "submitted"


def test_a_token_file_inside_the_repository_is_refused(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside = write_tokens(repo / ".a2a.yaml", {PLANNER: "planner"})
    monkeypatch.setenv("TASKFS_A2A_TOKENS", str(inside))
    result = _serve_once(repo, "--agent", "builder", "--port", "0")
    assert result.returncode == 1
    assert "error[tokens_unsafe]" in result.stderr


def test_without_tokens_it_listens_on_loopback_only(repo: Path) -> None:
    result = _serve_once(repo, "--agent", "builder", "--host", "0.0.0.0", "--port", "0")
    assert result.returncode == 1
    assert "error[bind_refused]" in result.stderr
    with serving(repo, "builder") as served:
        assert served.url.startswith("http://127.0.0.1:")
        run(_loopback(repo, served.url))


async def _loopback(repo: Path, url: str) -> None:
    async with client(url, None, streaming=False) as local:
        got = [r async for r in local.send_message(opening(envelope(**{"from": "planner"})))]
    shown = (await off_loop(lambda: cli(repo, "show", got[0].task.id))).json
    assert shown["envelope"]["from"] == "planner"


def _serve_once(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "taskfs", "a2a", "serve", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_sdk_is_off_every_other_commands_start_up_path(repo: Path) -> None:
    probe = (
        "import contextlib, io, sys\nfrom taskfs.cli.app import run\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    run(['show', '--help'])\n"
        "print([m for m in ('a2a', 'starlette', 'uvicorn', 'httpx', 'taskfs.a2a') "
        "if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_older_clients_use_the_0_3_method_names(repo: Path, tokens: Path) -> None:
    with serving(repo, "builder") as served:
        run(_opened(served.url, "for-old-clients"))
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tasks/get",
            "params": {"id": "for-old-clients"},
        }
        headers = {"Authorization": f"Bearer {PLANNER}"}
        answer = httpx.post(served.url, json=call, headers=headers, timeout=30).json()
        refused = httpx.post(
            served.url, json=call, headers={"Authorization": f"Bearer {MALLORY}"}, timeout=30
        ).json()
    assert answer["result"]["id"] == "for-old-clients"
    assert answer["result"]["status"]["state"] == "submitted"
    assert "agent_not_allowed" in json.dumps(refused["error"])


async def _opened(url: str, task_id: str) -> None:
    """Opened from YAML in a text part, as a person would paste an envelope file."""
    text = yamlio.dump(envelope(id=task_id))
    request = pb.SendMessageRequest(
        message=pb.Message(message_id="yaml", role=pb.ROLE_USER, parts=[pb.Part(text=text)])
    )
    async with client(url, PLANNER, streaming=False) as planner:
        got = [r async for r in planner.send_message(request)]
    assert got[0].task.id == task_id
    assert got[0].task.metadata["taskfs"]["from"] == "planner"
