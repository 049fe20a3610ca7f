"""`audit`'s checks of intakes (contract section 12): each intake file written by the one who
may write it, and committed by it.

A request is its requester's (the first request names the requester), a proposal its
recipient's (anyone but the requester when it names no recipient), a cancellation a party's.
An intake file committed with plain git can claim any `by`: each is compared with the author
of the commit that added it, as transitions are (`taskfs.api.review.authority`).
"""

from __future__ import annotations

from taskfs.api.review.authority import Context, message_problems, standing_key
from taskfs.core import act_signing
from taskfs.core.intake import Entry
from taskfs.core.layout import INTAKE, MESSAGES
from taskfs.errors import Problem, TaskfsError, problem
from taskfs.store.git.objects import Identity
from taskfs.store.intake_reader import load_intake


def intake_problems(context: Context, task_ids: list[str]) -> list[Problem]:
    """What is wrong with the authority of the intakes in the folders `task_ids`."""
    out: list[Problem] = []
    repo = context.repo
    for task_id in task_ids:
        if not repo.list_dir(task_id, INTAKE):
            continue
        if not repo.has_task(task_id) and repo.list_dir(task_id, MESSAGES):
            # A request's messages (a peer's signed opening, this agent's answer): their
            # signatures, as a task's are (a task's messages are checked with its transitions).
            out += message_problems(context, task_id)
        try:
            intake, _unreadable = load_intake(repo, task_id)  # validate names unreadable files
        except TaskfsError:
            continue
        for entry in intake.entries:
            rel = repo.task_rel(task_id, INTAKE, entry.name)
            why = intake.refusal(entry) or _found_in(context, entry)
            if why is not None:
                out.append(
                    problem(
                        "intake_unauthorized",
                        id=task_id,
                        path=rel,
                        by=entry.record.by,
                        kind=entry.record.kind,
                        reason=why,
                    )
                )
            key = standing_key(context, rel, entry.record.by)
            signed = (
                act_signing.verifies("intake", entry.record.to_document(), key) if key else True
            )
            if not signed and entry.record.message is None:
                out.append(
                    problem(
                        "intake_unauthorized",
                        id=task_id,
                        path=rel,
                        by=entry.record.by,
                        kind=entry.record.kind,
                        reason=f"{entry.record.by!r} had a key when it was committed, and did not "
                        "sign it",
                        rule="intake",
                    )
                )
            author = context.added.get(rel)
            expected = Identity.agent(entry.record.by)
            if author is not None and (author.name, author.email) != (
                expected.name,
                expected.email,
            ):
                out.append(
                    problem(
                        "author_mismatch",
                        id=task_id,
                        path=rel,
                        by=entry.record.by,
                        commit=author.commit[:12],
                        author=f"{author.name} <{author.email}>",
                        expected=f"{expected.name} <{expected.email}>",
                    )
                )
    return out


def _found_in(context: Context, entry: Entry) -> str | None:
    """Why a request's `discoveredFrom` link could not have been written by its `by`: only a
    party to the task it names (its sender, recipient or holder) files a follow-up of it."""
    source = entry.record.discovered_from
    if source is None:
        return None
    task = context.tasks.get(source)
    if task is None:
        return None  # archived, or not (yet) in this clone: nothing to hold it to
    from taskfs.store.task_reader import submitted_envelope

    parties = {task.envelope.sender, task.envelope.recipient, task.holder}
    try:
        first = submitted_envelope(context.repo, source)
        parties |= {first.sender, first.recipient}
    except TaskfsError:
        pass
    if entry.record.by not in parties:
        return f"it says it was found in {source!r}, to which {entry.record.by!r} is no party"
    return None
