"""`taskfs a2a send` and `follow`: delegate an envelope to a remote A2A agent and mirror its
task into this ledger.

The local task has the same id and contract, `from` the delegating agent, `to` the remote
agent (its card's name), and `x-a2a: {url: ...}` saying where it went. The remote task's
events become local ledger entries, committed as the remote agent (whose work they are):
its claim and every later transition, its questions (`needs_input`) and updates as messages,
its file artifacts as commits of the files it owns here. Its completion is not taken on
trust: the artifacts are committed, the acceptance check runs here, and the local task
completes only when that check passed.

A question is answered locally (`taskfs send ID --agent A --in-reply-to Q TEXT`); the
follower forwards the answer to the remote task. A local cancel is forwarded as CancelTask.
How far the remote stream was read is kept in the checkout's private state, so `follow`
resumes after a restart (a re-read event changes nothing: a transition the task already
made is skipped).

The bearer token for the remote agent comes from `$TASKFS_A2A_TOKEN`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from a2a.client import ClientCallContext, ClientConfig, create_client
from a2a.client.client import Client
from a2a.client.errors import A2AClientError
from a2a.types import a2a_pb2 as pb
from a2a.utils import errors as a2a_errors
from google.protobuf import json_format

from taskfs.a2a import mapping
from taskfs.api import context as api_context
from taskfs.api.evidence import checks as evidence
from taskfs.api.lifecycle import transitions
from taskfs.api.messages import sending as messages
from taskfs.api.messages import threads
from taskfs.api.sync import mirror
from taskfs.api.tasks import ids, queries, submit
from taskfs.core import yamlio
from taskfs.core.records import Artifact
from taskfs.errors import TaskfsError, fail

if TYPE_CHECKING:
    from taskfs.api.context import Repository

TOKEN_ENV = "TASKFS_A2A_TOKEN"
POLL_SECONDS = 0.3


@dataclass
class Outcome:
    """Where a mirrored task ended up."""

    id: str
    state: str
    remote_state: str | None = None
    evidence: str | None = None
    passed: bool | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.passed is not False and self.remote_state not in ("failed", "rejected")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "state": self.state,
            "remoteState": self.remote_state,
            "evidence": self.evidence,
            "passed": self.passed,
            "notes": self.notes,
        }


@contextlib.asynccontextmanager
async def connect(url: str) -> AsyncIterator[Client]:
    token = os.environ.get(TOKEN_ENV)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(60, read=None))
    try:
        try:
            made = await create_client(url, client_config=ClientConfig(httpx_client=http))
        except a2a_errors.A2AError as exc:
            raise fail("a2a_failed", url=url, reason=str(exc)) from None
        try:
            yield made
        finally:
            await made.close()
    finally:
        await http.aclose()


def remote_refusal(url: str, exc: a2a_errors.A2AError) -> TaskfsError:
    """A remote refusal, naming the remote's taskfs codes when it is a taskfs agent; a
    transport failure (unreachable, not A2A) is `a2a_failed`."""
    if isinstance(exc, A2AClientError):
        return fail("a2a_failed", url=url, reason=str(exc))
    data = exc.data if isinstance(exc.data, dict) else {}
    codes = str(data.get("taskfsCodes") or "")
    return fail("a2a_refused", url=url, reason=str(exc), codes=codes.split(",") if codes else [])


# -- send --------------------------------------------------------------------------------------


async def send(repo: Repository, agent: str, url: str, label: str, data: bytes) -> str:
    """Submit the envelope here addressed to the remote agent, then open the same task there.
    A remote refusal rejects the local task, naming the remote's codes."""
    async with connect(url) as client:
        card = await client.get_extended_agent_card(pb.GetExtendedAgentCardRequest())
        remote = card.name
        document = _local_document(label, data, agent, remote, url)
        if not document.get("id"):
            document["id"] = ids.fresh_id(repo)
        source = submit.Source(label, json.dumps(document).encode())
        task_id = submit.submit(repo, [source], agent)[0].id
        await _open_remote(repo, client, url, task_id)
    return task_id


def _local_document(label: str, data: bytes, agent: str, remote: str, url: str) -> dict[str, Any]:
    try:
        value = yamlio.load(data)
    except yamlio.YamlError as exc:
        raise fail("yaml_invalid", reason=exc.reason, source=label) from None
    if not isinstance(value, dict):
        raise fail("yaml_invalid", reason="the envelope is not a mapping", source=label)
    if value.get("to") not in (None, remote):
        raise fail("invalid_value", field="to", reason=f"the agent at {url} is {remote!r}")
    return {
        **value,
        "from": value.get("from", agent),
        "to": remote,
        mirror.MIRROR_KEY: {"url": url},
    }


async def _open_remote(repo: Repository, client: Client, url: str, task_id: str) -> None:
    task = queries.show(repo, task_id)
    document = task.envelope.to_document()
    for key in ("from", "to", mirror.MIRROR_KEY):
        document.pop(key, None)
    part = pb.Part(media_type=mapping.ENVELOPE_MEDIA_TYPE)
    json_format.ParseDict(json.loads(json.dumps(document, default=str)), part.data)
    request = pb.SendMessageRequest(
        message=pb.Message(message_id=f"{task_id}-open", role=pb.ROLE_USER, parts=[part]),
        configuration=pb.SendMessageConfiguration(return_immediately=True),
    )
    try:
        await _first(client, request)
    except a2a_errors.A2AError as exc:
        refusal = remote_refusal(url, exc)
        if refusal.codes == ["a2a_refused"]:
            reason = refusal.problems[0].english
            transitions.transition(
                repo, task_id, "rejected", task.envelope.recipient or "", reason=reason
            )
        raise refusal from None


async def _first(client: Client, request: pb.SendMessageRequest) -> pb.StreamResponse | None:
    """Send a message and take the first answer (the task as it is): the follower reads the
    rest from its own subscription."""
    stream = client.send_message(request)
    try:
        async for response in stream:
            return response
    finally:
        await stream.aclose()  # type: ignore[attr-defined]
    return None


# -- follow ------------------------------------------------------------------------------------


class Follower:
    """Mirrors one remote task into the local one of the same id."""

    def __init__(self, repo: Repository, task_id: str, agent: str | None) -> None:
        self.repo = repo
        self.task_id = task_id
        url = mirror.mirrored_url(repo, task_id)
        if url is None:
            raise fail("usage", reason=f"task {task_id!r} was not delegated over A2A (no x-a2a)")
        self.url = url
        task = queries.show(repo, task_id)
        self.remote = task.envelope.recipient or ""
        self.sender = agent or threads.submitter(task) or ""
        self.remote_state: str | None = None
        self.arrived: dict[str, tuple[str, bytes | None]] = {}
        self.outcome = Outcome(task_id, task.state)

    def local_state(self) -> str:
        return str(queries.show(self.repo, self.task_id).state)

    async def run(self) -> Outcome:
        async with connect(self.url) as client:
            await self._ensure_remote(client)
            while True:
                if self.local_state() == "canceled" and self.remote_state not in mapping.TERMINAL:
                    await self._cancel_remote(client)
                    break
                await self._read(client)
                if self.remote_state in mapping.TERMINAL:
                    break
                if self.remote_state in mapping.INTERRUPTED:
                    await self._forward_answer(client)
        self.outcome.state = self.local_state()
        self.outcome.remote_state = self.remote_state
        return self.outcome

    async def _ensure_remote(self, client: Client) -> None:
        try:
            await client.get_task(pb.GetTaskRequest(id=self.task_id))
        except a2a_errors.TaskNotFoundError as exc:
            if (exc.data or {}).get("taskfsCode") != "task_not_found":
                raise remote_refusal(self.url, exc) from None
            await _open_remote(self.repo, client, self.url, self.task_id)  # it never arrived
        except a2a_errors.A2AError as exc:
            raise remote_refusal(self.url, exc) from None

    async def _read(self, client: Client) -> None:
        """Apply the remote events after the cursor, until the remote task is finished or
        waits for us; a local cancel meanwhile is sent there."""
        reader = asyncio.create_task(self._consume(client))
        while not reader.done():
            await asyncio.wait({reader}, timeout=POLL_SECONDS)
            if not reader.done() and self.local_state() == "canceled":
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reader
                await self._cancel_remote(client)
                return
        reader.result()

    async def _cancel_remote(self, client: Client) -> None:
        try:
            task = await client.cancel_task(pb.CancelTaskRequest(id=self.task_id))
        except a2a_errors.A2AError as exc:
            raise remote_refusal(self.url, exc) from None
        self.remote_state = mapping.FROM_A2A.get(task.status.state)
        self.outcome.notes.append("canceled here: canceled there too")

    async def _consume(self, client: Client) -> None:
        cursor = mirror.load_cursor(self.repo, self.task_id)
        context = (
            ClientCallContext(service_parameters={"Last-Event-ID": cursor}) if cursor else None
        )
        stream = client.subscribe(pb.SubscribeToTaskRequest(id=self.task_id), context=context)
        try:
            async for response in stream:
                if response.HasField("task"):
                    self.remote_state = mapping.FROM_A2A.get(response.task.status.state)
                    continue
                event_id = self._apply(response)
                if event_id is not None:
                    mirror.save_cursor(self.repo, self.task_id, event_id)
                if self.remote_state in mapping.TERMINAL or (
                    self.remote_state in mapping.INTERRUPTED
                    and response.HasField("status_update")
                    and _meta(response.status_update.metadata).get("kind") == "transition"
                ):
                    break
        except a2a_errors.A2AError as exc:
            raise remote_refusal(self.url, exc) from None
        finally:
            await stream.aclose()  # type: ignore[attr-defined]

    def _apply(self, response: pb.StreamResponse) -> str | None:
        """Mirror one event; the id to remember (None: read it again after a restart)."""
        if response.HasField("artifact_update"):
            artifact = response.artifact_update.artifact
            if artifact.name != mapping.EVIDENCE_ARTIFACT:
                self.arrived[artifact.name] = _declared(artifact)
            return None  # artifacts are read again until the completion that uses them
        update = response.status_update
        meta = _meta(update.metadata)
        state = mapping.FROM_A2A.get(update.status.state)
        if meta.get("kind") == "message":
            self._message(update.status.message)
        else:
            self.remote_state = state
            self._transition(str(state), meta)
        return str(meta.get("eventId") or "") or None

    def _message(self, message: pb.Message) -> None:
        meta = _meta(message.metadata)
        if message.role != pb.ROLE_AGENT or meta.get("from") != self.remote:
            return  # ours, forwarded: already in this ledger
        status = meta.get("status")
        local = {"needs_input": "needs_input", "update": "update"}.get(str(status))
        if status in ("failed", "canceled"):
            return  # the transition that follows carries it
        text = mapping.message_text(message) or "(no text)"
        self._try(lambda: messages.send(self.repo, self.task_id, self.remote, text, status=local))

    def _transition(self, state: str, meta: dict[str, Any]) -> None:
        current = self.local_state()
        if state in ("submitted", current):
            return
        if state == "completed":
            self._complete()
            return
        reason = f"{self.remote} over A2A: {meta.get('reason')}" if meta.get("reason") else None
        self._try(
            lambda: transitions.transition(
                self.repo, self.task_id, state, self.remote, reason=reason
            )
        )

    def _complete(self) -> None:
        files = {location: data for location, data in self.arrived.values() if data is not None}
        if files:
            changed, _commit = mirror.record_work(self.repo, self.task_id, self.remote, files)
            self.outcome.notes += [f"arrived: {path}" for path in changed]
        checked = evidence.check(self.repo, self.task_id, agent=self.sender)
        self.outcome.evidence = checked.evidence
        self.outcome.passed = checked.passed
        if not checked.passed:
            self.outcome.notes.append(
                "the remote agent completed the task, but its acceptance check failed here: "
                "the task stays open"
            )
            return
        artifacts = [Artifact(name=name, location=loc) for name, (loc, _d) in self.arrived.items()]
        transitions.transition(
            self.repo, self.task_id, "completed", self.remote, artifacts=artifacts
        )

    def _try(self, call: Any) -> None:
        """A mirrored step the local task has already taken (after a restart) changes nothing."""
        try:
            call()
        except TaskfsError as exc:
            if not set(exc.codes) <= {"transition_not_allowed"}:
                raise

    async def _forward_answer(self, client: Client) -> None:
        """Wait for the local answer to the remote's question, then send it there. The answer
        is looked for until it is there: its transition can be seen a moment before the
        message file that carries it, and the remote task waits for nothing else."""
        while True:
            state = self.local_state()
            if state == "canceled":
                await self._cancel_remote(client)
                return
            answer = None
            if state not in ("input_required", "auth_required"):
                answer = self._local_answer()
                if answer is not None or state in mapping.TERMINAL:
                    break
            await asyncio.sleep(POLL_SECONDS)
        if answer is None:
            return
        request = pb.SendMessageRequest(
            message=pb.Message(
                message_id=answer[0],
                task_id=self.task_id,
                role=pb.ROLE_USER,
                parts=[pb.Part(text=answer[1])],
            )
        )
        try:
            await _first(client, request)
        except a2a_errors.A2AError as exc:
            raise remote_refusal(self.url, exc) from None

    def _local_answer(self) -> tuple[str, str] | None:
        thread = threads.messages(self.repo, self.task_id).messages
        questions = [
            c.record.msg_id
            for c in thread
            if c.record.status == "needs_input" and c.record.sender == self.remote
        ]
        if not questions:
            return None
        for checked in reversed(thread):
            if checked.record.in_reply_to == questions[-1]:
                return checked.record.msg_id, checked.record.text
        return None


def _meta(struct: Any) -> dict[str, Any]:
    return dict(json_format.MessageToDict(struct)) if struct is not None else {}


def _declared(artifact: pb.Artifact) -> tuple[str, bytes | None]:
    location = str(_meta(artifact.metadata).get("location") or artifact.name)
    content = next((p.raw for p in artifact.parts if p.HasField("raw")), None)
    return location, content


async def follow(repo: Repository, task_ids: list[str], agent: str | None) -> list[Outcome]:
    """Follow each mirrored task (every open one when none is named) to its end."""
    wanted = task_ids or [
        t
        for t in mirror.mirrored_tasks(repo)
        if queries.show(repo, t).state not in mapping.TERMINAL
    ]
    followers = [Follower(repo, task_id, agent) for task_id in wanted]
    return list(await asyncio.gather(*(f.run() for f in followers)))


def run_send(
    root: Path, agent: str, url: str, label: str, data: bytes, *, detach: bool
) -> list[Outcome]:
    async def both() -> list[Outcome]:
        repo = api_context.open(root).repo
        task_id = await send(repo, agent, url, label, data)
        if detach:
            return [Outcome(task_id, queries.show(repo, task_id).state)]
        return await follow(repo, [task_id], agent)

    return asyncio.run(both())


def run_follow(root: Path, task_ids: list[str], agent: str | None) -> list[Outcome]:
    return asyncio.run(follow(api_context.open(root).repo, task_ids, agent))
