"""`audit`'s checks of read marks (the row `read` of `taskfs.core.ledger_kinds`): a mark is its
`by`'s, the addressee of every message it names, authored as `by`, and signed by `by` where it
had a key when the mark was committed. A mark written by anyone else shows a message as read
that its addressee never saw."""

from __future__ import annotations

from taskfs.api.review.authority import Context, standing_key
from taskfs.core import act_signing
from taskfs.core.layout import READS
from taskfs.errors import Problem, problem
from taskfs.store.git.objects import Identity


def read_problems(context: Context, task_id: str) -> list[Problem]:
    """What is wrong with the authority of the read marks in task `task_id`'s folder."""
    from taskfs.api.messages.threads import read_thread
    from taskfs.core import messages as message_rules
    from taskfs.store.messages import read_files

    repo = context.repo
    if not repo.list_dir(task_id, READS):
        return []
    marks, _unreadable = read_files(repo, task_id)  # validate names unreadable files
    thread = read_thread(repo, task_id, trusted=message_rules.SenderTrust({}, False), pending=set())
    addressed = {c.record.msg_id: c.record.recipient for c in thread.messages if c.in_place}
    out: list[Problem] = []
    for rel, mark in marks:
        for msg_id in mark.msg_ids:
            if addressed.get(msg_id, mark.by) != mark.by:
                why = f"it is addressed to {addressed[msg_id]!r}"
                out.append(_unauthorized(rel, mark.by, msg_id, why))
        author = context.added.get(rel)
        expected = Identity.agent(mark.by)
        if author is not None and (author.name, author.email) != (expected.name, expected.email):
            out.append(
                problem(
                    "author_mismatch",
                    id=task_id,
                    path=rel,
                    by=mark.by,
                    commit=author.commit[:12],
                    author=f"{author.name} <{author.email}>",
                    expected=f"{expected.name} <{expected.email}>",
                    rule="read",
                )
            )
        key = standing_key(context, rel, mark.by)
        if key is not None and not act_signing.verifies("read", mark.to_document(), key):
            why = f"{mark.by!r} had a key when it was committed, and did not sign it"
            out.append(_unauthorized(rel, mark.by, ", ".join(mark.msg_ids), why))
    return out


def _unauthorized(rel: str, by: str, msg_id: str, why: str) -> Problem:
    return problem("read_unauthorized", path=rel, by=by, msg_id=msg_id, reason=why, rule="read")
