"""`taskfs amend`: the sender's new version of a contract, and the holder's acceptance of it.

The rule is `taskfs.core.amendments`'s: before anyone claims the task, the sender's amendment is
in force at once; after a claim it waits for the holder's acceptance. Either way the new
envelope is checked as `new` checks one (every named error), may not change what no amendment
may (`id`, `from`, `parent`, the lineage links, and, once claimed, `to`), and is checked again
against the other tasks (ownership, dependency cycles, delegation) when it is written and when
it is accepted. The old version stays where it was: `envelope.yaml` and each earlier amendment
are never edited, and history keeps them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from taskfs import i18n
from taskfs.api.tasks.filing import record_bytes
from taskfs.api.tasks.rules import Admission
from taskfs.core import yamlio
from taskfs.core.amendments import AmendmentRecord, changed_keys, fixed_changes
from taskfs.core.envelope import Envelope, validate_envelope
from taskfs.core.layout import AMENDMENTS, format_time, stamped_name
from taskfs.core.lifecycle import HELD, TERMINAL
from taskfs.errors import Problem, TaskfsError, fail, problem
from taskfs.store import head_ledger
from taskfs.store.index import summaries
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task, load_task, submitted_envelope
from taskfs.store.writer import Writer


@dataclass(frozen=True)
class Amended:
    id: str
    file: str  # the amendment (or acceptance) file written
    state: str  # the task's state (an amendment moves nothing)
    in_force: bool  # whether the amendment is the contract in force now
    changed: tuple[str, ...]  # the envelope keys it changes
    commit: str


def amend(
    repo: Repository,
    task_id: str,
    agent: str,
    text: str,
    *,
    reason: str | None = None,
    now: datetime | None = None,
) -> Amended:
    """The sender's new version of task `task_id`'s envelope (`text`: the whole envelope as
    YAML; `id` and `from` may be left out): in force at once while nobody has claimed the
    task, pending the holder's acceptance after."""
    now = now or datetime.now(timezone.utc)
    with repo.writing() as writer:
        head_ledger.refuse_loose(repo, task_id)
        task = load_task(repo, task_id, strict=True)
        sender = submitted_envelope(repo, task_id).sender
        if agent != sender:
            raise fail(
                "agent_not_allowed",
                agent=agent,
                action="amend",
                action_text=i18n.say("amend task {id!r}", id=task_id),
                reason=i18n.said("only its sender ({sender}) amends it", sender=sender or "-"),
            )
        if task.state in TERMINAL:
            raise fail(
                "amendment_not_allowed",
                id=task_id,
                reason=i18n.said(
                    "it is {state}: a finished contract stays as it was", state=task.state
                ),
            )
        envelope = _parsed(task_id, text, sender)
        claimed = task.holder is not None
        before = task.envelope.to_document()
        after = envelope.to_document()
        fixed = fixed_changes(
            submitted_envelope(repo, task_id).to_document(), after, claimed=claimed
        )
        if fixed:
            raise fail(
                "amendment_not_allowed",
                id=task_id,
                reason=i18n.said(
                    "it changes {keys}, which an amendment may not change", keys=", ".join(fixed)
                ),
            )
        changed = tuple(changed_keys(before, after))
        if not changed:
            raise fail(
                "amendment_not_allowed",
                id=task_id,
                reason=i18n.said("it changes nothing in the contract in force"),
            )
        _admitted(repo, envelope)
        record = AmendmentRecord(
            task=task_id,
            kind="amendment",
            by=agent,
            at=format_time(now),
            envelope=after,
            reason=reason.strip() if reason and reason.strip() else None,
        )
        rel = _add(repo, writer, record, now, i18n.say("amend task {id!r}", id=task_id))
        verb = "amended" if not claimed else "amendment proposed"
        commit = writer.commit(_subject(task_id, agent, verb), agent, when=now)
    return Amended(task_id, rel, task.state, not claimed, changed, commit)


def accept(
    repo: Repository,
    task_id: str,
    agent: str,
    *,
    amendment: str | None = None,
    now: datetime | None = None,
) -> Amended:
    """The holder takes a pending amendment (the latest, or the one named) as the contract it
    works to; checked again against the other tasks first."""
    now = now or datetime.now(timezone.utc)
    with repo.writing() as writer:
        head_ledger.refuse_loose(repo, task_id)
        task = load_task(repo, task_id, strict=True)
        if task.holder == agent and task.state in TERMINAL:
            reason = i18n.said(
                "it is {state}: an amendment its holder did not accept before it ended lapsed",
                state=task.state,
            )
            raise fail("amendment_not_allowed", id=task_id, reason=reason)
        if task.holder != agent or task.state not in HELD:
            raise fail(
                "agent_not_allowed",
                agent=agent,
                action="accept",
                action_text=i18n.say("accept an amendment of task {id!r}", id=task_id),
                reason=i18n.said(
                    "only the agent holding it ({holder}) accepts an amendment, while it works "
                    "on it",
                    holder=task.holder or "-",
                ),
            )
        pending = list(task.version.pending) if task.version is not None else []
        chosen = next((e for e in pending if e.name == amendment), None) if amendment else None
        if chosen is None and amendment is None and pending:
            chosen = pending[-1]
        if chosen is None:
            raise fail("amendment_not_found", id=task_id, name=amendment or "")
        envelope = _envelope_of(task_id, chosen.record.envelope or {})
        _admitted(repo, envelope)
        record = AmendmentRecord(
            task=task_id, kind="accepted", by=agent, at=format_time(now), accepts=chosen.name
        )
        action = i18n.say("accept an amendment of task {id!r}", id=task_id)
        rel = _add(repo, writer, record, now, action)
        commit = writer.commit(_subject(task_id, agent, "amendment accepted"), agent, when=now)
    changed = tuple(changed_keys(task.envelope.to_document(), envelope.to_document()))
    return Amended(task_id, rel, task.state, True, changed, commit)


def pending(task: Task) -> list[str]:
    """The names of the task's amendments that wait for its holder's acceptance."""
    return [e.name for e in task.version.pending] if task.version is not None else []


def waiting(repo: Repository, task_id: str, *, ended: bool = False) -> list[Problem]:
    """The warning an act on task `task_id` carries while amendments wait for its holder's
    answer: `amendment_pending` (a check: the holder may still accept the latest, or decline it
    by finishing to the version it claimed), or, once the act ended the task, `amendment_lapsed`
    (a completion declined them: they can no longer be accepted). None when none waits."""
    task = load_task(repo, task_id)
    waits = task.version.pending if task.version is not None else ()
    if not waits:
        return []
    latest = waits[-1]
    changed = changed_keys(task.envelope.to_document(), latest.record.envelope or {})
    return [
        problem(
            "amendment_lapsed" if ended else "amendment_pending",
            id=task_id,
            file=latest.name,
            by=latest.record.by,
            holder=task.holder,
            changed=changed,
            keys_text=", ".join(changed) or "-",
            amendments=[e.name for e in waits],
        )
    ]


def _parsed(task_id: str, text: str, sender: str | None) -> Envelope:
    """The amendment's envelope, with the task's id and sender filled in where left out;
    every named error when it is not one."""
    try:
        value = yamlio.load(text.encode("utf-8", "surrogateescape"))
    except yamlio.YamlError as exc:
        raise fail("yaml_invalid", reason=exc.reason) from None
    if not isinstance(value, dict):
        raise fail("yaml_invalid", reason=i18n.said("an amendment is a whole envelope"))
    value.setdefault("id", task_id)
    if sender is not None:
        value.setdefault("from", sender)
    return _envelope_of(task_id, value)


def _envelope_of(task_id: str, document: dict[str, object]) -> Envelope:
    envelope, problems = validate_envelope({**document, "id": document.get("id", task_id)})
    if envelope is None:
        raise TaskfsError(problems)
    if envelope.id != task_id:
        raise fail("invalid_value", field="id", reason=i18n.said("it amends {id!r}", id=task_id))
    return envelope


def _admitted(repo: Repository, envelope: Envelope) -> None:
    """Refuse an envelope the other tasks do not admit in place of the task's own: ownership
    overlaps nothing orders, a dependency cycle, a broken delegation chain."""
    assert envelope.id is not None
    problems = Admission(repo, summaries(repo, verify=[envelope.id])).problems(envelope)
    if problems:
        raise TaskfsError(problems)


def _add(
    repo: Repository, writer: Writer, record: AmendmentRecord, now: datetime, action: str
) -> str:
    """Add the file, signed by its writer where it has a key: taskfs writes nothing unsigned in
    the name of an agent whose key stands (`signature_required`)."""
    from taskfs.api.lifecycle.signing import sign_act

    rel = repo.task_rel(record.task, AMENDMENTS, stamped_name(now))
    document = sign_act(repo, record.by, "amendment", record.to_document(), action)
    writer.add(rel, record_bytes(document))
    return rel


def _subject(task_id: str, agent: str, what: str) -> str:
    return (
        f"taskfs: {task_id} {what} by {agent}\n\n"
        f"Taskfs-Task: {task_id}\nTaskfs-Amendment: {what}\nTaskfs-Agent: {agent}\n"
    )
