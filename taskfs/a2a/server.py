"""`taskfs a2a serve`: the repository as an A2A agent, on a2a-sdk's JSON-RPC server.

The SDK parses the wire, checks the protocol version and streams server-sent events; this
module's request handler turns each call into the `taskfs.api` call the command line makes,
as the authenticated caller:

- `SendMessage` without a task id opens a task from the envelope its data part carries
  (`taskfs new`, `from` the caller, `to` this agent); with a task id it is a message in that
  task (`taskfs send`), the answer to the open question when the task waits for input. A
  `contextId` other than the task's is refused (A2A 1.0 section 3.4.3). It waits, as A2A 1.0
  asks unless `configuration.returnImmediately` (section 3.2.2), until the task is finished or
  interrupted (input or auth required), then answers the task as it is then; a caller that
  hangs up is not waited for.
- A task opened from a request (an intake) keeps the request's words at the head of its
  `history`.
- `GetTask` shows the task; `CancelTask` sends a `canceled` message.
- `SendStreamingMessage` and `SubscribeToTask` stream the task's committed ledger events in
  ledger order, each with the ledger's id as `metadata.eventId`. A client resumes by sending
  the last id it received in the `Last-Event-ID` header (server-sent events' own name for
  it): the stream starts with the task as it is, then every event after that one. A
  `SendStreamingMessage` stream ends when the task is finished or waits for the caller
  (input or auth required); a `SubscribeToTask` stream only when it is finished.

A refusal is an A2A error whose data names taskfs's codes (`taskfs.a2a.mapping.a2a_error`).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.types import a2a_pb2 as pb
from a2a.utils import errors as a2a_errors

from taskfs.a2a import door, mapping
from taskfs.a2a import params as params_of
from taskfs.a2a.card import agent_card
from taskfs.api import context as api_context
from taskfs.api.doors.tokens import ANONYMOUS, Tokens, load_tokens
from taskfs.api.intake import requests
from taskfs.api.messages import sending as messages
from taskfs.api.sync import events
from taskfs.api.tasks import visible
from taskfs.core import yamlio
from taskfs.core.intake import fields_of
from taskfs.core.layout import is_agent_name
from taskfs.errors import TaskfsError, fail, problem

if TYPE_CHECKING:
    from taskfs.api.context import Repository

T = TypeVar("T")
RESUME_HEADER = "last-event-id"


class LedgerHandler(RequestHandler):
    """A2A's requests, answered from and written to the ledger at `root` as agent `agent`."""

    def __init__(self, root: Path, agent: str, tokens: Tokens, poll: float = 0.2) -> None:
        self.root = root
        self.agent = agent
        self.tokens = tokens
        self.poll = poll
        self._writes = asyncio.Lock()

    # -- plumbing ---------------------------------------------------------------------

    def _repo(self) -> Repository:
        return api_context.open(self.root).repo

    def _caller(self, context: ServerCallContext) -> str:
        try:
            return self.tokens.caller(_headers(context))
        except TaskfsError as exc:
            raise mapping.a2a_error(exc.problems) from None

    async def _run(self, fn: Callable[[], T], *, cancel: bool = False, write: bool = False) -> T:
        try:
            if write:
                async with self._writes:
                    return await asyncio.to_thread(fn)
            return await asyncio.to_thread(fn)
        except TaskfsError as exc:
            raise mapping.a2a_error(exc.problems, cancel=cancel) from None
        except a2a_errors.A2AError:
            raise
        except Exception as exc:
            found = problem("internal_error", reason=f"{type(exc).__name__}: {exc}")
            raise mapping.a2a_error([found]) from None

    def events_for(self, task_id: str, caller: str) -> events.TaskEvents:
        """The task's events, for a caller who is a party to it."""
        repo = self._repo()
        found = events.task_events(repo, task_id)
        if not self._sees(visible.parties(found.task), caller):
            raise mapping.not_yours(task_id, caller)
        return found

    def _sees(self, parties: frozenset[str], caller: str) -> bool:
        """Whether the caller may see a task: a party to it, or anyone on a loopback server
        without tokens that did not name itself."""
        return caller in parties or self._everyone(caller)

    def _everyone(self, caller: str) -> bool:
        return caller == ANONYMOUS and not self.tokens.configured

    def snapshot(self, found: events.TaskEvents, history: int | None = None) -> pb.Task:
        repo = self._repo()
        contents = mapping.completion_contents(
            found, lambda commit, location: events.artifact_content(repo, commit, location)
        )
        opening = _opening(repo, found.task.id)
        return mapping.to_task(found, contents, history, opening=opening)

    # -- opening a task, or writing in one ----------------------------------------------

    def _open(self, message: pb.Message, caller: str) -> str:
        """A task from the envelope the message carries, or, when it carries none that is
        whole (a text message, a partial envelope), a request kept as an intake and answered
        `input-required` with what it lacks (contract section 12)."""
        text = mapping.request_text(message)
        if not text.strip():
            raise fail("yaml_invalid", reason="the message carries neither text nor an envelope")
        fields = fields_of(text)
        if fields is not None:
            if fields.get("to") not in (None, self.agent):
                raise fail("invalid_value", field="to", reason=f"this A2A agent is {self.agent!r}")
            if message.context_id and not fields.get("contextID"):
                fields["contextID"] = message.context_id
            text = yamlio.dump(fields)
        acting = caller
        if caller == ANONYMOUS and not self.tokens.configured and fields:
            # Loopback without tokens: the envelope's `from` names the sender.
            named = fields.get("from")
            acting = named if isinstance(named, str) and is_agent_name(named) else caller
        result = requests.request(
            self._repo(),
            acting,
            text,
            to=self.agent,
            door="a2a",
            context=message.context_id or None,
        )
        return result.id

    def _request(self, message: pb.Message, caller: str, intake: requests.Answer) -> None:
        """More of the caller's request on its open intake (the envelope, or what it lacks)."""
        _same_context(message, mapping.intake_context_of(intake.intake))
        text = mapping.request_text(message)
        if not text.strip():
            raise fail("invalid_value", field="parts", reason="send the envelope or a text part")
        requests.request(self._repo(), caller, text, task_id=message.task_id, door="a2a")

    def _intake(self, task_id: str, caller: str) -> requests.Answer | None:
        """The intake `task_id` when it is one that is not a task (for a party to it)."""
        repo = self._repo()
        if not requests.is_request(repo, task_id):
            return None
        answer = requests.read(repo, task_id)
        if not self._sees(visible.intake_parties(answer.intake), caller):
            raise mapping.not_yours(task_id, caller)
        return answer

    def _write(self, message: pb.Message, caller: str) -> str:
        """A message in an existing task: the answer to its open question when it waits for
        one, plain conversation otherwise. Returns the message's id."""
        found = self.events_for(message.task_id, caller)
        _same_context(message, found.task.envelope.context_id)
        if found.task.state in mapping.TERMINAL:
            raise fail("task_finished", id=message.task_id, state=found.task.state)
        text = mapping.message_text(message)
        if not text.strip():
            raise fail("invalid_value", field="parts", reason="send the message as a text part")
        question = mapping.open_question(found)
        sent = messages.send(self._repo(), message.task_id, caller, text, in_reply_to=question)
        return sent.record.msg_id

    async def _send(
        self, params: pb.SendMessageRequest, context: ServerCallContext
    ) -> tuple[str, str | None]:
        caller = self._caller(context)
        message = params.message
        await self._run(lambda: _check_sent(params))
        intake = None
        if message.task_id:
            intake = await self._run(lambda: self._intake(message.task_id, caller))
        if intake is not None:
            await self._run(lambda: self._request(message, caller, intake), write=True)
            return message.task_id, None
        if message.task_id:
            sent = await self._run(lambda: self._write(message, caller), write=True)
            return message.task_id, sent
        task_id = await self._run(lambda: self._open(message, caller), write=True)
        return task_id, None

    # -- the A2A methods -------------------------------------------------------------------

    async def on_message_send(
        self, params: pb.SendMessageRequest, context: ServerCallContext
    ) -> pb.Task | pb.Message:
        task_id, _sent = await self._send(params, context)
        caller = self._caller(context)
        if not params.configuration.return_immediately:
            await self._until_turn(task_id, caller, context)
        return await self._task(task_id, caller, params_of.sent_history(params))

    async def _until_turn(self, task_id: str, caller: str, context: ServerCallContext) -> None:
        """A blocking SendMessage's wait (A2A 1.0 section 3.2.2): until the task is finished
        or interrupted (input or auth required; an open request waits for input), or the
        caller hung up. The ledger is read again only when its head moved."""
        disconnected = context.state.get("disconnected")
        repo = self._repo()
        seen: str | None = None
        while True:
            head = events.head(repo)
            if head != seen:
                state = await self._run(lambda: self._state(task_id, caller))
                if state in mapping.TERMINAL or state in mapping.INTERRUPTED:
                    return
                seen = head
            if disconnected is not None and await disconnected():
                return
            await asyncio.sleep(self.poll)

    def _state(self, task_id: str, caller: str) -> str:
        if self._intake(task_id, caller) is not None:
            return "input_required"  # a request waits for its requester's envelope
        return self.events_for(task_id, caller).task.state

    async def _task(self, task_id: str, caller: str, history: int | None = None) -> pb.Task:
        return await self._run(lambda: self.shown(task_id, caller, history))

    def shown(self, task_id: str, caller: str, history: int | None = None) -> pb.Task:
        """The task as A2A shows it; an intake as one waiting for input."""
        answer = self._intake(task_id, caller)
        if answer is not None:
            return mapping.intake_task(answer.intake, answer.problems, history)
        return self.snapshot(self.events_for(task_id, caller), history)

    async def on_message_send_stream(
        self, params: pb.SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any]:
        task_id, sent = await self._send(params, context)
        caller = self._caller(context)
        if await self._run(lambda: self._intake(task_id, caller)):
            yield await self._task(task_id, caller)  # waits for the caller's envelope
            return
        after = _headers(context).get(RESUME_HEADER) or sent
        async for event in self._follow(task_id, caller, after, until_turn=True):
            yield event

    async def on_subscribe_to_task(
        self, params: pb.SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any]:
        caller = self._caller(context)
        if await self._run(lambda: self._intake(params.id, caller)):
            yield await self._task(params.id, caller)  # a request has no ledger events yet
            return
        after = _headers(context).get(RESUME_HEADER) or None
        if after is None:
            await self._run(lambda: self._unfinished(params.id, caller))
        async for event in self._follow(params.id, caller, after, until_turn=False):
            yield event

    def _unfinished(self, task_id: str, caller: str) -> None:
        """A2A subscribes to a task that is not finished; one that is is read with GetTask
        (a stream that was cut resumes with its Last-Event-ID, finished or not)."""
        state = self.events_for(task_id, caller).task.state
        if state in mapping.TERMINAL:
            raise fail("task_finished", id=task_id, state=state)

    async def on_get_task(self, params: pb.GetTaskRequest, context: ServerCallContext) -> pb.Task:
        caller = self._caller(context)
        wanted = params.history_length if params.HasField("history_length") else None
        history = await self._run(lambda: params_of.history_length(wanted))
        return await self._task(params.id, caller, history)

    async def on_cancel_task(
        self, params: pb.CancelTaskRequest, context: ServerCallContext
    ) -> pb.Task:
        caller = self._caller(context)
        intake = await self._run(lambda: self._intake(params.id, caller))
        if intake is None:
            await self._run(lambda: self.events_for(params.id, caller))
        reason = ""
        if params.HasField("metadata"):
            reason = str(dict(params.metadata).get("reason") or "")
        reason = reason or f"canceled by {caller} over A2A"

        def cancel() -> None:
            if intake is not None:
                requests.cancel(self._repo(), params.id, caller, reason=reason)
            else:
                messages.send(self._repo(), params.id, caller, reason, status="canceled")

        await self._run(cancel, cancel=True, write=True)
        return await self._task(params.id, caller)

    async def on_list_tasks(
        self, params: pb.ListTasksRequest, context: ServerCallContext
    ) -> pb.ListTasksResponse:
        caller = self._caller(context)
        return await self._run(lambda: self._list(params, caller))

    def _list(self, params: pb.ListTasksRequest, caller: str) -> pb.ListTasksResponse:
        """A page of the tasks the caller is a party to, the latest status first."""
        asked = params_of.listing(params)
        page = visible.page(
            self._repo(),
            None if self._everyone(caller) else caller,
            context=asked.context,
            states=asked.states,
            since=asked.since,
            size=asked.size,
            token=asked.token,
        )
        shown = [self.shown(listed.id, caller, asked.history) for listed in page.tasks]
        return pb.ListTasksResponse(
            tasks=shown,
            next_page_token=page.next_token,
            page_size=len(shown),
            total_size=page.total,
        )

    async def on_create_task_push_notification_config(
        self, params: pb.TaskPushNotificationConfig, context: ServerCallContext
    ) -> pb.TaskPushNotificationConfig:
        raise a2a_errors.PushNotificationNotSupportedError

    async def on_get_task_push_notification_config(
        self, params: pb.GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> pb.TaskPushNotificationConfig:
        raise a2a_errors.PushNotificationNotSupportedError

    async def on_list_task_push_notification_configs(
        self, params: pb.ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> pb.ListTaskPushNotificationConfigsResponse:
        raise a2a_errors.PushNotificationNotSupportedError

    async def on_delete_task_push_notification_config(
        self, params: pb.DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        raise a2a_errors.PushNotificationNotSupportedError

    async def on_get_extended_agent_card(
        self, params: pb.GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> pb.AgentCard:
        # The card declares no extended card (A2A 1.0 section 3.3.4).
        raise a2a_errors.UnsupportedOperationError(
            "Operation not supported: this agent's card declares no extended agent card"
        )

    # -- following the ledger ------------------------------------------------------------

    async def _follow(
        self, task_id: str, caller: str, after: str | None, *, until_turn: bool
    ) -> AsyncGenerator[Any]:
        """The task as it is, then each ledger event after `after` as it is committed."""
        repo = self._repo()
        seen: str | None = None
        first = True
        while True:
            head = events.head(repo)
            if first or head != seen:
                read = _Read(self, task_id, caller, after, first)
                batch = await self._run(read)
                if batch.snapshot is not None:
                    yield batch.snapshot
                first = False
                for item in batch.items:
                    yield item
                after = batch.last or after
                seen = batch.found.head
                state = batch.found.events[-1].state if batch.found.events else "submitted"
                if state in mapping.TERMINAL or (until_turn and state in mapping.INTERRUPTED):
                    return
            await asyncio.sleep(self.poll)

    def contents(self, fresh: tuple[events.LedgerEvent, ...]) -> dict[str, bytes | None]:
        repo = self._repo()
        out: dict[str, bytes | None] = {}
        for event in fresh:
            if event.status is not None:
                for item in event.status.record.artifacts or ():
                    out[item.location] = events.artifact_content(repo, event.commit, item.location)
        return out


@dataclass
class _Batch:
    found: events.TaskEvents
    snapshot: pb.Task | None
    items: list[mapping.Event]
    last: str | None


class _Read:
    """One look at the ledger for a stream: what to send since `after`."""

    def __init__(
        self, handler: LedgerHandler, task_id: str, caller: str, after: str | None, first: bool
    ) -> None:
        self.handler, self.task_id, self.caller = handler, task_id, caller
        self.after, self.first = after, first

    def __call__(self) -> _Batch:
        found = self.handler.events_for(self.task_id, self.caller)
        fresh = found.after(self.after)
        snapshot = self.handler.snapshot(found) if self.first else None
        contents = self.handler.contents(fresh)
        items = [item for event in fresh for item in mapping.stream_events(found, event, contents)]
        return _Batch(found, snapshot, items, fresh[-1].id if fresh else None)


def _same_context(message: pb.Message, context: str) -> None:
    """A message names its task's context or none (A2A 1.0 section 3.4.3: an agent MUST
    reject a `contextId` that is not its task's)."""
    if message.context_id and message.context_id != context:
        reason = (
            f"task {message.task_id!r} is in context {context!r}, not {message.context_id!r}: "
            "send its contextId, or none"
        )
        raise fail("invalid_value", field="contextId", reason=reason)


def _opening(repo: Repository, task_id: str) -> list[pb.Message]:
    """The words of the request a task was opened from, when it was (an intake), as A2A
    history: the requester's opening text stays the head of the task's history."""
    if not requests.has_request(repo, task_id):
        return []
    return mapping.intake_history(requests.read(repo, task_id).intake)


def _check_sent(params: pb.SendMessageRequest) -> None:
    params_of.check_message(params.message)
    params_of.sent_history(params)


def _headers(context: ServerCallContext) -> dict[str, str]:
    headers = context.state.get("headers") or {}
    return {str(k).lower(): str(v) for k, v in dict(headers).items()}


def serve(root: Path, agent: str, host: str, port: int) -> int:
    """Serve until interrupted. Refusals before serving (tokens, host) are named errors."""
    from taskfs.api.doors import listening
    from taskfs.api.doors.guard import Guard

    tokens = load_tokens(root)
    sock, base = listening.listen(tokens, host, port, door="a2a")
    url = base + "/"
    handler = LedgerHandler(root, agent, tokens)
    app = Guard(door.app(handler, agent_card(agent, url, tokens), tokens), tokens.policy, _refused)
    sys.stdout.write(url + "\n")
    sys.stdout.flush()
    sys.stderr.write(f"taskfs a2a: serving agent {agent} at {url}\n")
    if not tokens.configured:
        sys.stderr.write("taskfs a2a: callers name themselves with the X-Taskfs-Agent header\n")
    sys.stderr.flush()
    listening.run(app, sock)
    return 0


def _refused(refusal: Any) -> bytes:
    """A request the doors' guard refused, as an A2A JSON-RPC error naming taskfs's code."""
    from a2a.server.request_handlers.response_helpers import build_error_response

    error = mapping.a2a_error([refusal.problem])
    return json.dumps(build_error_response(None, error)).encode()
