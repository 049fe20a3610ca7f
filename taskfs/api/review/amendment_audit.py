"""`audit`'s checks of amendments (`taskfs.core.amendments`): each amendment file written by one
who may write it, when it could be written, and committed by it.

An amendment is its task's sender's (the `from` of `envelope.yaml`), written while the task was
not in a terminal state; an acceptance is its holder's, of an amendment of the task, written
while it held the task open; a claim that names an amendment (the version it took) names one
its own commit held. A file committed with plain git can claim any `by`: each is compared with
the author of the commit that added it, as transitions are, and one unsigned where its `by`
had a key when it was committed is named too (`taskfs.core.ledger_kinds.AMENDMENT`). The
readers already count such a file for nothing; audit names it (`amendment_unauthorized`,
`author_mismatch`). An amendment edited or deleted after its commit is named with every other
ledger file's (`audit._history`).
"""

from __future__ import annotations

from taskfs.api.review.authority import Context, _state_at, standing_key
from taskfs.core import act_signing
from taskfs.core.amendments import Entry
from taskfs.core.layout import AMENDMENTS, STATUS
from taskfs.core.lifecycle import HELD, TERMINAL
from taskfs.errors import Problem, TaskfsError, problem
from taskfs.store.git.objects import Identity
from taskfs.store.task_reader import Task, submitted_envelope


def amendment_problems(context: Context, task: Task) -> list[Problem]:
    """What is wrong with the authority of the task's amendment files and with the version
    its claim names."""
    repo = context.repo
    try:
        sender = submitted_envelope(repo, task.id).sender
    except TaskfsError:
        return []  # the envelope's own problems are named by validate
    out: list[Problem] = []
    names = {e.name: e for e in task.amendments}
    for entry in task.amendments:
        rel = repo.task_rel(task.id, AMENDMENTS, entry.name)
        author = context.added.get(rel)
        why = _refusal(
            context, task, entry, sender, names=names, commit=author.commit if author else None
        )
        if why is not None:
            out.append(_unauthorized(task.id, rel, entry.record.by, entry.record.kind, why))
        key = standing_key(context, rel, entry.record.by)
        if key is not None and not act_signing.verifies(
            "amendment", entry.record.to_document(), key
        ):
            why = f"{entry.record.by!r} had a key when it was committed, and did not sign it"
            out.append(_unauthorized(task.id, rel, entry.record.by, entry.record.kind, why))
        expected = Identity.agent(entry.record.by)
        if author is not None and (author.name, author.email) != (expected.name, expected.email):
            out.append(
                problem(
                    "author_mismatch",
                    id=task.id,
                    path=rel,
                    by=entry.record.by,
                    commit=author.commit[:12],
                    author=f"{author.name} <{author.email}>",
                    expected=f"{expected.name} <{expected.email}>",
                )
            )
    out += _claimed_version(context, task)
    return out


def _refusal(
    context: Context,
    task: Task,
    entry: Entry,
    sender: str | None,
    *,
    names: dict[str, Entry],
    commit: str | None,
) -> str | None:
    """Why `entry` could not have been written by its `by` when it was, or None."""
    record = entry.record
    state = _state_at(context, task.id, commit) if commit is not None else task.state
    if record.kind == "amendment":
        if record.by != sender:
            return f"only its sender ({sender or 'none named'}) amends it"
        if state in TERMINAL:
            return f"it was written when the task was {state}"
        return None
    if record.by != task.holder:
        return f"only the agent holding it ({task.holder or 'nobody'}) accepts an amendment"
    taken = names.get(record.accepts or "")
    if taken is None or taken.record.kind != "amendment" or taken.record.by != sender:
        return f"it accepts {record.accepts!r}, which is no amendment of the task's sender"
    if state not in HELD:
        return f"it was written when the task was {state or 'not yet claimed'}"
    return None


def _claimed_version(context: Context, task: Task) -> list[Problem]:
    """A claim naming an amendment its own commit did not hold names a version it never saw."""
    repo = context.repo
    out = []
    for link in (*task.chain.links, *task.chain.superseded):
        named = link.record.amendment
        if named is None:
            continue
        rel = repo.task_rel(task.id, STATUS, link.name)
        added = context.added.get(rel)
        path = repo.task_rel(task.id, AMENDMENTS, named)
        if added is not None and not context.holds(added.commit, path):
            why = f"its claim names amendment {named!r}, which the claim's commit did not hold"
            out.append(_unauthorized(task.id, rel, link.record.by, "claim", why))
    return out


def _unauthorized(task_id: str, rel: str, by: str, kind: str, why: str) -> Problem:
    return problem(
        "amendment_unauthorized",
        id=task_id,
        path=rel,
        by=by,
        kind=kind,
        reason=why,
        rule="amendment",
    )
