"""The agents' commands: send, messages, conversation, inbox, read, deliver, bind, prime, mcp.

Each parses, calls one library function, and renders; the rules live in `taskfs.api`.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from taskfs import i18n
from taskfs.api.context import acting_agent
from taskfs.api.views import agents as views
from taskfs.cli import bodies
from taskfs.cli.group import agent_option, cli, json_option, listen_options
from taskfs.cli.ids import TASK_ID
from taskfs.cli.options import Given, clicked
from taskfs.cli.output import act, open_repo, refuse
from taskfs.core import shapes

session_option = click.option(
    "--session",
    envvar="TASKFS_SESSION",
    help="Only what this session of yours should see (default: $TASKFS_SESSION).",
)


@cli.command()
@clicked("send")
def send(given: Given) -> int:
    """Send a message about a task (TEXT, or - for stdin), with its transition if it asks one."""
    return bodies.answer(given)


@cli.command()
@click.argument("task_id", type=TASK_ID)
@json_option
def messages(task_id: str, as_json: bool) -> int:
    """The messages about a task, each with its delivery and whether it verifies."""
    from taskfs.api.messages import threads as api

    def show(thread: Any) -> tuple[dict[str, Any], str]:
        rows = [views.message(c) for c in thread.messages]
        problems = [p.to_json() for p in thread.problems]
        doc = shapes.document(True, id=thread.task_id, messages=rows, problems=problems)
        lines = [_message_text(c) for c in thread.messages]
        lines += [f"problem[{p.code}]: {p.message}" for p in thread.problems]
        return doc, "\n".join(lines) or "no messages"

    return act(as_json, lambda: api.messages(open_repo(), task_id), show)


def _message_text(checked: Any) -> str:
    record = checked.record
    kind = record.status or "message"
    reply = f" re {record.in_reply_to}" if record.in_reply_to else ""
    refused = "".join(f"  REFUSED[{p.code}]" for p in checked.problems)
    head = (
        f"{record.at}  {record.msg_id}  {record.sender} -> {record.recipient}  "
        f"[{kind}]{reply}  {checked.delivery}{refused}"
    )
    body = "\n".join(f"    {line}" for line in record.text.splitlines())
    return f"{head}\n{body}" if body else head


@cli.command()
@click.argument("peer")
@agent_option
@session_option
@json_option
def conversation(peer: str, agent: str | None, session: str | None, as_json: bool) -> int:
    """The messages between you and PEER, about any task, oldest first."""
    from taskfs.api.messages import threads as api

    def call() -> list[Any]:
        me = acting_agent(agent) or ""
        return api.conversation(open_repo(), me, acting_agent(peer) or "", session=session or None)

    def show(found: list[Any]) -> tuple[dict[str, Any], str]:
        doc = shapes.document(True, peer=peer, messages=[views.message(c) for c in found])
        return doc, "\n".join(_message_text(c) for c in found) or "no messages"

    return act(as_json, call, show)


@cli.command()
@agent_option
@session_option
@click.option("--mark-read", is_flag=True, help="Then mark every unread message to you read.")
@click.option(
    "--full", is_flag=True, help="Every record whole (the default is compact: id, task, text)."
)
@json_option
def inbox(
    agent: str | None, session: str | None, mark_read: bool, full: bool, as_json: bool
) -> int:
    """What waits for you, with counts: tasks to claim, questions, results, unread messages."""
    from taskfs.api.messages import delivery
    from taskfs.api.messages import inbox as api

    held: list[str] = []
    waiting: list[str] = []
    standing: list[Any] = []

    def call() -> Any:
        me = acting_agent(agent) or ""
        repo = open_repo()
        box = api.inbox(repo, me, session=session or None)
        from taskfs.api.lifecycle.resume import held_lines, standing_of, waiting_lines

        if as_json:
            standing.append(standing_of(repo, box))
        else:
            held.extend(held_lines(repo, box))
            waiting.extend(waiting_lines(repo, box))
        if mark_read and box.markable:
            delivery.mark_read(repo, me, box.markable)
        return box

    def show(box: Any) -> tuple[dict[str, Any], str]:
        from taskfs.api.lifecycle.resume import row, unread_lines
        from taskfs.api.views import sent as sent_views
        from taskfs.api.views.checks import said_lines

        doc = shapes.document(True, **views.inbox(box, full=full, **_standing(standing)))
        lines = [box.badge_text(), *held]
        claim, answer, review = i18n.say("claim"), i18n.say("answer"), i18n.say("review")
        lines += [
            row(claim, i18n.say("{id}  from {agent}", id=t.id, agent=t.envelope.sender or "-"))
            for t in box.claimable
        ]
        lines += waiting
        lines += [
            row(answer, i18n.say("{id}  from {agent}", id=c.record.msg_id, agent=c.record.sender))
            for c in box.questions
        ]
        lines += [
            row(review, i18n.say("{id}  from {agent}", id=c.record.msg_id, agent=c.record.sender))
            for c in box.results
        ]
        lines += [
            row(i18n.say("refused"), f"{c.record.msg_id}  {','.join(p.code for p in c.problems)}")
            for c in box.refused
        ]
        lines += [row(i18n.say("lost"), lost.text()) for lost in box.superseded]
        for pending in box.amendments:
            what = i18n.say(
                "{id}: {agent} amended the contract ({keys}); accept: taskfs amend {id} --accept",
                id=pending.task_id,
                agent=pending.by,
                keys=", ".join(pending.changed),
            )
            lines.append(row(i18n.say("amended"), what))
        for check in box.checks:
            ran = i18n.say(
                "{id}: the check {agent} ran failed (exit {code})",
                id=check.task_id,
                agent=check.by,
                code=check.exit_code,
            )
            lines.append(row(i18n.say("check"), ran))
            lines += [f"    {line}" for line in said_lines(check.output)]
        lines += [
            row(
                i18n.say("ended"),
                i18n.say(
                    "{line}; retry: taskfs retry {id} [--to AGENT]",
                    line=sent_views.line(t),
                    id=t.id,
                ),
            )
            for t in box.ended
        ]
        lines += [
            row(
                i18n.say("quiet"),
                i18n.say(
                    "{line}; ask, or hand it on: taskfs reassign {id} --to AGENT",
                    line=sent_views.line(t),
                    id=t.id,
                ),
            )
            for t in box.quiet
        ]
        lines += [_requested(i) for i in box.requests] + [_asked(i) for i in box.requested]
        lines += unread_lines(box)
        return doc, "\n".join(lines)

    if mark_read:  # it writes: answered afresh, never from what was stored
        return act(as_json, call, show)
    from taskfs.cli import answered

    asked = answered.request("inbox", agent=agent, session=session, full=full, json=as_json)
    return answered.storing(asked, lambda: act(as_json, call, show), _tasks_rel())


def _requested(intake: Any) -> str:
    """A request to this agent, in the text inbox."""
    from taskfs.api.lifecycle.resume import row

    return row(
        i18n.say("request"),
        i18n.say(
            "{id}  from {agent}: {count} problem(s); propose an envelope: taskfs intake propose "
            "{id} FILE",
            id=intake.id,
            agent=intake.requester,
            count=len(intake.missing()),
        ),
    )


def _asked(intake: Any) -> str:
    """A request this agent made, in the text inbox."""
    from taskfs.api.lifecycle.resume import row

    if intake.pending_proposal():
        how = i18n.say("accept the proposal: taskfs intake accept {id}", id=intake.id)
    else:
        how = i18n.say(
            "{count} problem(s): taskfs show {id}", count=len(intake.missing()), id=intake.id
        )
    return row(
        i18n.say("request"),
        i18n.say(
            "{id}  yours, to {agent}: {how}",
            id=intake.id,
            agent=intake.recipient or i18n.say("anyone"),
            how=how,
        ),
    )


@cli.command(name="read")
@click.argument("msg_ids", nargs=-1, required=True)
@agent_option
@json_option
def read_command(msg_ids: tuple[str, ...], agent: str | None, as_json: bool) -> int:
    """Mark messages addressed to you as read (a committed reads/ file)."""
    from taskfs.api.messages import delivery as api

    def show(marked: Any) -> tuple[dict[str, Any], str]:
        doc = shapes.document(
            True, marked=list(marked.marked), already=list(marked.already), commit=marked.commit
        )
        return doc, "\n".join(f"{m}: read" for m in (*marked.marked, *marked.already))

    return act(
        as_json, lambda: api.mark_read(open_repo(), acting_agent(agent) or "", msg_ids), show
    )


@cli.command()
@click.argument("paths", nargs=-1)
@json_option
def deliver(paths: tuple[str, ...], as_json: bool) -> int:
    """Act on message files written into messages/ but not committed: check, move, commit."""
    from taskfs.api.messages import delivery as api

    def show(results: list[Any]) -> tuple[dict[str, Any], str]:
        rows = [views.delivered(r) for r in results]
        errors = [{**p.to_json(), "path": r.path} for r in results for p in r.problems]
        doc = shapes.document(not errors, delivered=rows, errors=errors)
        lines = []
        for result in results:
            if result.problems:
                lines += [f"{result.path}: refused[{p.code}] {p.message}" for p in result.problems]
            else:
                lines.append(f"{result.path}: {'already sent' if result.already else 'sent'}")
        return doc, "\n".join(lines) or "nothing to deliver"

    return act(as_json, lambda: api.deliver(open_repo(), paths), show)


@cli.command()
@click.argument("task_id", type=TASK_ID)
@agent_option
@json_option
def bind(task_id: str, agent: str | None, as_json: bool) -> int:
    """The envelope bound to your capabilities: toolsAllowed within the capability ledger."""
    from taskfs.api.capabilities import bind as capabilities

    def show(bound: Any) -> tuple[dict[str, Any], str]:
        from taskfs import i18n

        doc = shapes.document(True, **views.bound(bound))
        requested = bound.envelope.tools_allowed
        if bound.tools_granted:
            said = ", ".join(bound.tools_granted)
        elif not requested:
            said = i18n.say("no tools granted: the envelope requests none (toolsAllowed)")
        elif bound.ledger is None:
            said = i18n.say("no tools granted: there is no capability ledger here")
        else:
            said = i18n.say(
                "no tools granted: none of {requested} is yours in {ledger}",
                requested=", ".join(requested),
                ledger=bound.ledger,
            )
        return doc, f"{bound.id} for {bound.agent}: {said}"

    return act(
        as_json,
        lambda: capabilities.bind(open_repo(), task_id, acting_agent(agent) or ""),
        show,
    )


@cli.command()
@agent_option
@click.option(
    "--hook",
    type=click.Choice(("claude", "codex")),
    help="Run as that host's session-start hook: read its JSON on stdin, never fail.",
)
@click.option("--mcp", is_flag=True, help="Name the MCP tools (agent_*) instead of commands.")
@json_option
def prime(agent: str | None, hook: str | None, mcp: bool, as_json: bool) -> int:
    """A short text telling an agent how to work with taskfs here (for start-up hooks)."""
    from taskfs.api.hosts import prime as api

    if hook is not None:
        from taskfs.cli.hook import prime_hook

        return prime_hook(hook, agent, sys.stdin, sys.stdout)

    def show(text: str) -> tuple[dict[str, Any], str]:
        return shapes.document(True, text=text), text.rstrip("\n")

    from taskfs.cli import answered

    asked = answered.request("prime", agent=agent, mcp=mcp, json=as_json)
    return answered.storing(
        asked,
        lambda: act(
            as_json,
            lambda: api.prime(open_repo(), acting_agent(agent, required=False), mcp=mcp),
            show,
        ),
        _tasks_rel(),
    )


def _tasks_rel() -> str | None:
    """Where the tasks folder is, when the command runs in a checkout taskfs opens (its
    answer is stored then: `taskfs.cli.answered`)."""
    from taskfs.cli.output import repo_if_any

    repo = repo_if_any()
    return repo.tasks_rel if repo is not None else None


@cli.command()
@agent_option
@session_option
@click.option(
    "--http", "http", is_flag=True, help="Serve over streamable HTTP (--host, --port), not stdio."
)
@listen_options(9471)
def mcp(agent: str | None, session: str | None, http: bool, host: str, port: int) -> int:
    """Serve the agent_* and interlink tools over the Model Context Protocol on stdio (or HTTP)."""
    from click.core import ParameterSource

    from taskfs.errors import TaskfsError, fail

    try:
        acting_agent(agent, required=False)
        where = click.get_current_context().get_parameter_source
        if not http and any(where(n) is not ParameterSource.DEFAULT for n in ("host", "port")):
            raise fail("usage", reason="--host and --port are where --http listens: add --http")
        # Imported here: the SDK takes a second and more to load, which other commands never pay.
        from taskfs.mcp.server import serve

        return serve(agent, session or None, (host, port) if http else None)
    except TaskfsError as exc:
        refuse(False, exc.problems)
        return 2 if "usage" in exc.codes else 1


def _standing(found: list[Any]) -> dict[str, Any]:
    return {"standing": found[0]} if found else {}
