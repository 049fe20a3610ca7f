"""Completing work someone else holds: the sender accepts the holder's result.

`completed` is the holder's act. A peer (an interlink agent, whose key lives on its own
machine) holds a task here through its signed messages, but no transition can be signed in its
name here; so the completion of a peer's work is its sender's signed act, allowed on exactly
these facts, which the live gate (`transitions.stage_transition`) and `audit`
(`review.authority`) both check:

1. the holder sent a signed `result` about the task (its latest one counts), committed here;
2. the completion rests on passing evidence (the evidence gate's own rules: the envelope's
   command, the owned files as they are, and, where runner keys are trusted, signed by one),
   committed after that result (its commit descends from the result's);
3. the completion's status file names that result (`message`), and the sender signs it.

The holder may still complete the task itself, as always.
"""

from __future__ import annotations

from taskfs.api.messages.threads import CheckedMessage, read_thread
from taskfs.store.git import Git
from taskfs.store.repository import Repository


def holder_result(repo: Repository, task_id: str, holder: str | None) -> CheckedMessage | None:
    """The holder's latest signed `result` about the task that verifies and is committed."""
    if holder is None:
        return None
    found = [
        c
        for c in read_thread(repo, task_id).messages
        if c.ok
        and c.in_place
        and c.delivery != "pending"
        and c.record.status == "result"
        and c.record.sender == holder
        and (c.record.sig is not None or c.record.signature is not None)
    ]
    return found[-1] if found else None


def recorded_after(git: Git, result_rel: str, evidence_rel: str) -> bool:
    """Whether the evidence file was committed after the result (a later commit descending
    from the one that added the result)."""
    added = git.file_additions([result_rel, evidence_rel])
    result, evidence = added.get(result_rel), added.get(evidence_rel)
    if result is None or evidence is None or result.commit == evidence.commit:
        return False
    return git.is_ancestor(result.commit, evidence.commit)
