"""A2A opens work with a text message (the TCK's "Hello from TCK!"): taskfs keeps it as a
request waiting for input, names what the envelope lacks, and submits the task when the envelope
arrives on that task id (contract section 12). Through a real `taskfs a2a serve` and a2a-sdk's
own client."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from a2a.helpers.proto_helpers import new_data_part
from a2a.types import a2a_pb2 as pb
from a2a.utils import errors as a2a_errors
from google.protobuf import json_format

from tests.a2a.serving import client, serving
from tests.a2a.test_serve import MALLORY, PLANNER, tokens  # noqa: F401 (tokens: the fixture)
from tests.helpers import ENVELOPE, git, taskfs_process

T = TypeVar("T")


def run(coro: Awaitable[T]) -> T:
    return asyncio.run(coro)  # type: ignore[arg-type]


def said(text: str, task_id: str = "", context: str = "") -> pb.SendMessageRequest:
    return pb.SendMessageRequest(
        message=pb.Message(
            message_id="m-" + text[:8],
            task_id=task_id,
            context_id=context,
            role=pb.ROLE_USER,
            parts=[pb.Part(text=text)],
        )
    )


def sent(document: dict[str, Any], task_id: str) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(
        message=pb.Message(
            message_id="env", task_id=task_id, role=pb.ROLE_USER, parts=[new_data_part(document)]
        )
    )


def answer_data(task: pb.Task) -> dict[str, Any]:
    """What the status message names, as data (its second part)."""
    return dict(json_format.MessageToDict(task.status.message.parts[1].data))


@pytest.mark.usefixtures("tokens")
def test_a_text_message_waits_for_input_and_the_envelope_on_its_id_submits_it(repo: Path) -> None:
    with serving(repo, "builder") as served:
        run(_text_then_envelope(repo, served.url))


async def _text_then_envelope(repo: Path, url: str) -> None:
    async with client(url, PLANNER, streaming=False) as planner:
        got = [r async for r in planner.send_message(said("Hello from TCK!"))]
        task = got[0].task
        assert task.status.state == pb.TASK_STATE_INPUT_REQUIRED
        named = answer_data(task)
        assert "objective" in named["missing"]
        assert "contextID" in named["missing"]
        # A message's contextId is the request's contextID, as it is an envelope's.
        framed = [r async for r in planner.send_message(said("In a context", context="ctx-9"))]
        assert framed[0].task.context_id == "ctx-9"
        assert "contextID" not in answer_data(framed[0].task)["missing"]
        listed = await planner.list_tasks(pb.ListTasksRequest(context_id="ctx-9"))
        assert [t.id for t in listed.tasks] == [framed[0].task.id]
        assert named["schema"].endswith("envelope.schema.json")
        text = task.status.message.parts[0].text
        assert "objective_required" in text
        assert task.id in text
        assert [m.parts[0].text for m in task.history] == ["Hello from TCK!"]
        # GetTask sees it as it stands.
        again = await planner.get_task(pb.GetTaskRequest(id=task.id))
        assert again.status.state == pb.TASK_STATE_INPUT_REQUIRED
        # The missing fields, in two messages on the task's id, submit it under that id.
        first = {k: ENVELOPE[k] for k in ("objective", "outputFormat")}
        part = [r async for r in planner.send_message(sent(first, task.id))]
        assert part[0].task.status.state == pb.TASK_STATE_INPUT_REQUIRED
        assert "objective" not in answer_data(part[0].task)["missing"]
        rest = {k: v for k, v in ENVELOPE.items() if k not in (*first, "from", "to")}
        done = [r async for r in planner.send_message(sent(rest, task.id))]
        assert done[0].task.id == task.id
        assert done[0].task.status.state == pb.TASK_STATE_SUBMITTED
    shown = taskfs_process("show", task.id, "--json", cwd=repo).json
    assert shown["state"] == "submitted"
    assert shown["envelope"]["from"] == "planner"
    assert shown["envelope"]["to"] == "builder"
    assert taskfs_process("audit", cwd=repo).code == 0


@pytest.mark.usefixtures("tokens")
def test_a_request_is_canceled_and_kept_from_strangers(repo: Path) -> None:
    with serving(repo, "builder") as served:
        run(_cancel_and_strangers(repo, served.url))


async def _cancel_and_strangers(repo: Path, url: str) -> None:
    async with client(url, PLANNER, streaming=False) as planner:
        got = [r async for r in planner.send_message(said("please look at the flaky test"))]
        task_id = got[0].task.id
        async with client(url, MALLORY, streaming=False) as mallory:
            with pytest.raises(a2a_errors.TaskNotFoundError) as theirs:
                await mallory.get_task(pb.GetTaskRequest(id=task_id))
            assert theirs.value.data["taskfsCode"] == "agent_not_allowed"
            before = git(repo, "rev-parse", "HEAD")
            with pytest.raises(a2a_errors.A2AError):
                async for _ in mallory.send_message(sent({"objective": "mine"}, task_id)):
                    pass
            assert git(repo, "rev-parse", "HEAD") == before
        canceled = await planner.cancel_task(pb.CancelTaskRequest(id=task_id))
        assert canceled.status.state == pb.TASK_STATE_CANCELED
    shown = taskfs_process("show", task_id, "--json", cwd=repo).json
    assert shown["state"] == "canceled"
    assert shown["canceledBy"] == "planner"


@pytest.mark.usefixtures("tokens")
def test_a_streamed_text_message_yields_the_request_waiting_for_input(repo: Path) -> None:
    with serving(repo, "builder") as served:
        run(_streamed(served.url))


async def _streamed(url: str) -> None:
    async with client(url, PLANNER) as planner:
        got = [r async for r in planner.send_message(said("Hello over a stream"))]
        assert got
        assert got[-1].task.status.state == pb.TASK_STATE_INPUT_REQUIRED
