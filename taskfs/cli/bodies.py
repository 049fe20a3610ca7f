"""The bodies of the hottest commands, free of click.

The click commands (`taskfs.cli.commands`) and the fast path that skips click
(`taskfs.cli.fast`) both read a command line into one value through the option table
(`taskfs.cli.options.Given`) and hand it to `answer`, so that a command prints the same document
whichever way its arguments were read, and an option means the same to both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from taskfs.api.context import acting_agent
from taskfs.cli import render
from taskfs.cli.options import Given
from taskfs.cli.output import act, open_repo
from taskfs.core import shapes
from taskfs.core.display import safe


def answer(given: Given) -> int:
    """The command `given` names, run on what it was given: the one body each command of the
    option table has, whichever path read its command line."""
    name = given.name
    if name == "ls":
        return ls(given)
    if name == "ready":
        return ready(given)
    if name == "show":
        return showing(given)
    if name == "claim":
        if given["push"]:
            from taskfs.cli.sync import claim_synced

            return claim_synced(given["task_id"], given["agent"], given["as_json"])
        return claim(given["task_id"], given["agent"], given["as_json"])
    if name == "new":
        return new(given["files"], given["agent"], given["as_json"])
    if name == "send":
        return send(given)
    if name == "check":
        from taskfs.cli import checking

        return checking.check(
            given["task_id"],
            timeout=given["timeout"],
            fresh=given["fresh"],
            request=given["request"],
            text=given["text"],
            sandbox=given["sandbox"],
            network=given["network"],
            agent=given["agent"],
            as_json=given["as_json"],
        )
    if name == "complete":
        return complete(given["task_id"], given["agent"], given["as_json"], given["artifacts"])
    target = given["state"] if name == "move" else TARGETS[name]
    return transition(
        given["task_id"],
        target,
        given["agent"],
        given.get("reason"),
        given["as_json"],
        artifacts=given.get("artifacts", ()),
    )


# The transitions besides `move`: the state each enters.
TARGETS = {"claim": "working", "refuse": "rejected", "complete": "completed"}


def ls(given: Given) -> int:
    from taskfs.api.tasks import listing

    return act(given["as_json"], lambda: listing.ls(open_repo(), given.filters()), render.task_list)


def ready(given: Given) -> int:
    from taskfs.api.tasks import listing

    as_json = given["as_json"]
    blocked: list[Any] = []

    def call() -> list[Any]:
        repo = open_repo()
        who = acting_agent(given["agent"], required=False)
        found = listing.ready(repo, who, given.filters())
        if not found and not as_json:  # nothing to claim: say what the rest waits for
            from taskfs.api.lifecycle.resume import blocked as waiting

            blocked.extend(waiting(repo, who))
        return found

    def show(tasks: list[Any]) -> tuple[dict[str, Any], Any]:
        doc, text = render.task_list(tasks)
        return doc, (render.nothing_ready(blocked) if not tasks else text)

    return act(as_json, call, show)


def transition(
    task_id: str,
    target: str,
    agent: str | None,
    reason: str | None,
    as_json: bool,
    *,
    artifacts: Sequence[Any] = (),
) -> int:
    from taskfs.api.lifecycle import transitions

    return act(
        as_json,
        lambda: transitions.transition(
            open_repo(),
            task_id,
            target,
            acting_agent(agent) or "",
            reason=reason,
            artifacts=artifacts,
        ),
        render.moved,
    )


def new(files: Sequence[str], agent: str | None, as_json: bool) -> int:
    """`new FILE...`: every envelope in one commit, or none; the lint's warnings beside."""
    import sys

    from taskfs.api.context import read_input
    from taskfs.api.tasks import submit
    from taskfs.errors import Problem, TaskfsError

    def call() -> list[submit.Submitted]:
        sources: list[submit.Source] = []
        problems: list[Problem] = []
        for label in files:
            try:
                data = read_input(label, sys.stdin.buffer)
                sources.append(submit.Source(label, data))
            except TaskfsError as exc:
                problems += exc.problems
        if problems:
            raise TaskfsError(problems)
        repo = open_repo()
        warnings = _lint_submitted(repo, sources)
        done = submit.submit(repo, sources, acting_agent(agent, required=False))
        warned.extend(warnings)
        return done

    warned: list[Problem] = []

    def show(results: list[submit.Submitted]) -> tuple[dict[str, Any], str]:
        # What was submitted is never edited: its weak points are said now, not at review.
        doc, text = render.submitted(results, single=len(files) == 1)
        doc["warnings"] = [w.to_json() for w in warned]
        for w in warned if not as_json else ():
            sys.stderr.write(safe(f"{w.data.get('subject')}: warning[{w.code}] {w.message}") + "\n")
        return doc, text

    return act(as_json, call, show)


def _lint_submitted(repo: Any, sources: list[Any]) -> list[Any]:
    from taskfs.api.tasks import lint as lint_api

    return list(lint_api.advice(repo, sources))


def send(given: Given) -> int:
    """`send ID TEXT`: a message about a task, with the transition it asks for."""
    import sys

    from taskfs.api.context import read_message_text
    from taskfs.api.messages import sending as messages

    text = given["text"]

    def call() -> messages.Sent:
        body = read_message_text(sys.stdin.buffer) if text == "-" else text
        return messages.send(
            open_repo(),
            given["task_id"],
            acting_agent(given["agent"]) or "",
            body,
            status=given["status"],
            in_reply_to=given["in_reply_to"],
            to=acting_agent(given["to"], required=False),
            session=given["session"],
        )

    def show(sent: messages.Sent) -> tuple[dict[str, Any], str]:
        from taskfs import i18n
        from taskfs.api.views import agents as views

        doc = shapes.document(True, **views.sent(sent))
        moved = f" ({sent.transition[0]} -> {sent.transition[1]})" if sent.transition else ""
        record = sent.record
        said = i18n.say("{msg_id}: sent to {to}", msg_id=record.msg_id, to=record.recipient)
        return doc, said + moved

    return act(given["as_json"], call, show)


def claim(task_id: str, agent: str | None, as_json: bool) -> int:
    """`claim`: submitted -> working; a task the agent already holds is said so, exit 0."""
    from taskfs.api.lifecycle import claiming

    def show(result: Any) -> tuple[dict[str, Any], str]:
        if isinstance(result, claiming.Held):
            doc = shapes.document(True, id=result.id, state=result.state, already=True)
            return doc, f"{result.id}: already yours ({result.state}); nothing changed"
        return render.moved(result)

    return act(
        as_json, lambda: claiming.claim(open_repo(), task_id, acting_agent(agent) or ""), show
    )


def complete(task_id: str, agent: str | None, as_json: bool, artifacts: Sequence[Any]) -> int:
    """`complete`: working -> completed; a completion the agent already made, the same way, is
    said so, exit 0 (`completing`)."""
    from taskfs.api.lifecycle import completing

    return act(
        as_json,
        lambda: completing.complete(
            open_repo(), task_id, acting_agent(agent) or "", artifacts=artifacts
        ),
        render.moved,
    )


def showing(given: Given) -> int:
    """`show ID`: markdown for a pull request, else the task as `show` reads it."""
    if given["fmt"] == "markdown":
        from taskfs.cli.review import show_markdown

        return show_markdown(given["task_id"], given["as_json"])
    return show(given["task_id"], given["as_json"])


def show(task_id: str, as_json: bool) -> int:
    """`show ID` (text or `--json`) through the full reader; a task found valid is stored
    ready-made (`taskfs.readmodel.show`) for the next `show` to print without reading it."""
    import time

    from taskfs.api.tasks import queries
    from taskfs.api.views import documents as views
    from taskfs.readmodel import show as answers

    repo = None
    before: tuple[Any, ...] = ()
    signed_before: tuple[Any, ...] = ()
    key: bytes | None = None
    archived = False
    stamp = time.time_ns()
    born: list[dict[str, Any]] = []  # the request it came from, if any
    amended: list[dict[str, Any]] = []  # its amendments, if any
    found: list[dict[str, Any]] = []  # the follow-ups found while working on it

    def call() -> Any:
        nonlocal repo, before, signed_before, key, archived
        repo = open_repo()
        from taskfs.api.intake import linked, requests
        from taskfs.api.views.intake import origin

        if requests.is_request(repo, task_id):  # a request, not a task yet
            return requests.read(repo, task_id)
        where = (str(repo.root), str(repo.git_dir), repo.tasks_rel, task_id)
        before = answers.identity(*where, False)
        signed_before = answers.identity(*where, True)
        key = queries.stored_key(repo, task_id)
        archived = queries.is_archived(repo, task_id)
        task = queries.show(repo, task_id)
        home = queries.home(repo, task_id)
        intake = linked.origin(home, task_id)
        born.extend([origin(intake)] if intake is not None else [])
        amended.extend(queries.amendments(home, task))
        found.extend(queries.follow_ups(repo, task_id))
        return task

    def shown(task: Any) -> tuple[dict[str, Any], str]:
        import json

        from taskfs.api.intake.requests import Answer

        if isinstance(task, Answer):
            return render.intake(task)
        doc, text = render.show(task, born[0] if born else None, amended, found)
        if archived:  # read from the archive's commit
            doc["archived"] = True
            text = text.replace(f"# {task_id}: ", f"# {task_id} (archived): ", 1)
        if repo is not None and not task.problems:
            signed = any(row["signature"] != "unsigned" for row in views.evidence(task))
            answers.store(
                str(repo.root),
                str(repo.git_dir),
                repo.tasks_rel,
                task_id,
                signed=signed,
                before=signed_before if signed else before,
                stamp=stamp,
                document=json.dumps(doc, ensure_ascii=False),
                text=text,
                key=key,
            )
        return doc, text

    return act(as_json, call, shown)
