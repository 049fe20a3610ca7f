"""`audit`'s checks of authority: who wrote each transition and message, and could they.

A status file committed with plain git can claim any `by`. So audit replays every transition
(winning or superseded) through the same rules the live gate applies (`lifecycle.
check_transition`: only a party moves a task, `claim` is for the `to`, `completed` for the
holder; and a claim's dependencies, as the commit that added it held the ledger) and names
every refusal they give, whatever its code, so that a rule added to the live gate is named in
history too. It compares each transition's `by` with the author of the commit that added it
(taskfs commits each transition as `NAME <NAME@taskfs>`), checks its signature against the
agent key that stood in that commit, and names siblings that were not concurrent
(`forks.late_siblings`). Messages are checked against the key that stood when they were
committed, not today's. What audit cannot replay (a claim's ownership conflicts as they stood,
evidence gone stale before a completion) is said in docs/trust.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace

from taskfs.api.intake.composed import composes
from taskfs.core import forks, readiness
from taskfs.core import messages as message_rules
from taskfs.core.chain import Link
from taskfs.core.layout import ENVELOPE, EVIDENCE, MESSAGES, STATUS
from taskfs.core.lifecycle import Parties, State, check_transition
from taskfs.core.lineage import Lineage
from taskfs.core.records import MessageRecord, StatusRecord
from taskfs.core.transition_signing import verifies
from taskfs.errors import Problem, TaskfsError, problem
from taskfs.store.git.history import Author
from taskfs.store.git.objects import Identity
from taskfs.store.keys import KeysAt
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task

# Who `new` records when a batch names several senders and no --agent (api/tasks/submit.py).
ANONYMOUS = "anonymous"


@dataclass(frozen=True)
class Context:
    """What the checks share: the commit that added each ledger file, and keys as they stood."""

    repo: Repository
    added: Mapping[str, Author]
    keys: KeysAt
    require_signed: bool
    is_ancestor: Callable[[str, str], bool]
    tasks: Mapping[str, Task]
    holds: Callable[[str, str], bool]  # (commit, path): whether the commit's tree holds it


@contextmanager
def opened(repo: Repository, tasks: Mapping[str, Task]) -> Iterator[Context]:
    """The checks' context for `tasks` alone, read from git's objects through one `git
    cat-file` (what a decision asks of a few tasks: a claim's successors): the commits that
    added their files, and the agent keys as they stood (`key_history`)."""
    from taskfs.store import key_history

    folders = [repo.task_rel(task_id) for task_id in tasks]
    with repo.git.reader() as reader:
        history = repo.git.path_history(key_history.AGENT_KEYS)
        ghosts = key_history.agent_keys(repo, history, reader, repo.git.is_ancestor).ghosts
        yield Context(
            repo,
            repo.git.file_additions(folders) if folders else {},
            key_history.keys_at(repo, reader, repo.git.is_ancestor, history, ghosts),
            repo.config.require_signed_transitions,
            repo.git.is_ancestor,
            tasks,
            lambda commit, path: reader.read(f"{commit}:{path}") is not None,
        )


def submission_problems(context: Context, task: Task) -> list[Problem]:
    """Why the task's submission (its first status file) is not its sender's own act: what
    audit names of it (`transition_unauthorized`, `author_mismatch`). A lineage link counts
    only from a submission with none (`taskfs.core.lineage`)."""
    first = next((link for link in task.chain.links if link.record.prev is None), None)
    if first is None or first.record.state != "submitted" or task.envelope.sender is None:
        return [problem("transition_unauthorized", id=task.id, reason="it has no submission")]
    rel = context.repo.task_rel(task.id, STATUS, first.name)
    found = _authority(context, task, first, {first.name: first}, rel)
    if first.record.by != task.envelope.sender:
        found.append(_unauthorized(task, first, rel, "(nothing)", "its sender did not submit it"))
    from taskfs.store.envelope_seal import unsealed

    edited = unsealed(context.repo, task.id)
    if edited is not None:
        found.append(edited)
    author = context.added.get(rel)
    if author is None:
        return [*found, problem("ledger_file_uncommitted", path=rel)]
    return [
        *found,
        *_authorship(context, task, first, rel, author),
        *_signature(context, task, first, rel, set()),
    ]


def transition_problems(context: Context, task: Task) -> list[Problem]:
    links = [*task.chain.links, *task.chain.superseded]
    by_name = {link.name: link for link in links}
    used: set[str] = set()  # messages that already vouched for a transition
    out: list[Problem] = []
    # A refusal the chain's reader names already (an edge of the winning chain) is not named
    # twice.
    named = {(p.code, p.data.get("path")) for p in task.problems}
    for link in links:
        rel = context.repo.task_rel(task.id, STATUS, link.name)
        out += [
            found
            for found in _authority(context, task, link, by_name, rel)
            if (found.code, rel) not in named
        ]
        author = context.added.get(rel)
        if author is None:
            continue  # not committed: audit names it ledger_file_uncommitted
        out += _authorship(context, task, link, rel, author)
        out += _signature(context, task, link, rel, used)
    out += _late(context, task, links)
    return out


def _authority(
    context: Context, task: Task, link: Link, by_name: Mapping[str, Link], rel: str
) -> list[Problem]:
    """Every refusal the live rule gives the transition `link`, each with its path."""
    record = link.record
    before = by_name.get(record.prev) if record.prev else None
    if record.prev is None:
        sender = task.envelope.sender
        if record.state == "submitted" and sender and record.by not in (sender, ANONYMOUS):
            why = f"the envelope is from {sender!r}, so only {sender!r} submits it"
            return [_unauthorized(task, link, rel, "(nothing)", why)]
        return []
    if before is None:
        return []  # chain_broken names a prev that is no status file of the task
    current: State = before.record.state
    holder = _holder(before, by_name)
    parties = Parties(
        task.envelope.sender,
        task.envelope.recipient,
        holder,
        _answering_owner(context.repo, task, record, current),
        record.state == "completed" and _accepted_result(context, task, record, holder),
    )
    found = check_transition(
        task.id, current, record.state, agent=record.by, parties=parties, reason=record.reason
    )
    if not (found and found[0].code == "transition_not_allowed"):  # as the live gate goes on
        found += _claim_gates(context, task, current, record.state, rel)
    return [
        _unauthorized(task, link, rel, current, str(item.data.get("reason", "")))
        if item.code == "agent_not_allowed"  # audit's name for it: the agent is in the past
        else replace(item, data={**item.data, "path": rel})
        for item in found
    ]


def _claim_gates(
    context: Context, task: Task, current: State, target: State, rel: str
) -> list[Problem]:
    """The live claim gate's dependency rule, asked of the ledger as the commit that added the
    claim held it (`transitions.gates`: a claim needs its dependencies completed)."""
    depends = task.envelope.depends_on
    added = context.added.get(rel)
    if not (current == "submitted" and target == "working" and depends and added):
        return []
    states = {}
    for dep in depends:
        state = _state_at(context, dep, added.commit)
        if state is not None:
            states[dep] = state
    # A dependency that ended without completing is met by a successor down its line
    # (`core.lineage`, as the live gate reads it) that had completed in that commit, and whose
    # submission is its sender's own act (`submission_problems`).
    lineage = Lineage(context.tasks, lambda t: _vouched_submission(context, t))
    for dep in depends:
        if states.get(dep) != "completed" and any(
            _state_at(context, later, added.commit) == "completed" for later in lineage.line(dep)
        ):
            states[dep] = "completed"
    return readiness.dependencies_refused(task.id, depends, states)


def _vouched_submission(context: Context, task_id: str) -> bool:
    task = context.tasks.get(task_id)
    return task is not None and not submission_problems(context, task)


def _state_at(context: Context, task_id: str, commit: str) -> str | None:
    """The state task `task_id` was in at `commit`: `completed` when the commit holds one of
    its completions (one on a branch that lost a fork too: a fork settled later does not make
    a claim wrong), else the state of the latest status file it holds; None when it holds
    none. An archived task is read from the commit its archive took it from (never from the
    archive's row: `archive_records.archived_truth`), as of `commit`."""
    task = context.tasks.get(task_id)
    if task is None:  # archived by now, perhaps already at `commit` (`taskfs archive`)
        from taskfs.store.archive_records import archived_in, archived_task, archived_truth

        archived = archived_in(context.repo, task_id)
        if archived is not None and (archived == commit or context.is_ancestor(archived, commit)):
            truth = archived_truth(context.repo, [task_id]).get(task_id)
            return truth.state if truth is not None else None
        task = archived_task(context.repo, task_id)
    if task is None:
        return None
    links = sorted([*task.chain.links, *task.chain.superseded], key=lambda link: link.name)
    held = [
        link.record.state
        for link in links
        if context.holds(commit, context.repo.task_rel(task_id, STATUS, link.name))
    ]
    return "completed" if "completed" in held else (held[-1] if held else None)


def _answering_owner(
    repo: Repository, task: Task, record: StatusRecord, current: State
) -> str | None:
    """The chain's owner, when this transition is its answer to the task's open question (the
    one edge the live gate lets it make: `taskfs.api.messages.chain_owner`); otherwise None."""
    if not (current == "input_required" and record.state == "working" and record.message):
        return None
    from taskfs.api.messages.chain_owner import chain_owner

    owner = chain_owner(repo, task)
    return owner if owner == record.by else None


def _accepted_result(
    context: Context, task: Task, record: StatusRecord, holder: str | None
) -> bool:
    """Whether a completion by the task's sender rests on its holder's result, as the live
    gate requires (`taskfs.api.lifecycle.acceptance`): the status names a `result` of the
    holder's about this task, signed under the key the holder had when it was committed, and
    the evidence the completion rests on was committed after it."""
    from taskfs.api.messages.threads import read_thread

    sender = task.envelope.sender
    if holder is None or record.by != sender or record.by == holder:
        return False
    if record.message is None or record.evidence is None:
        return False
    repo = context.repo
    try:
        thread = read_thread(
            repo, task.id, trusted=message_rules.SenderTrust({}, False), pending=set()
        )
    except TaskfsError:
        return False
    found = thread.find(record.message)
    if found is None:
        return False
    result = found.record
    if (result.status, result.sender, result.task_id) != ("result", holder, task.id):
        return False
    rel = repo.task_rel(task.id, MESSAGES, found.stored.name)
    key = standing_key(context, rel, holder)
    if key is None or (result.sig is None and result.signature is None):
        return False
    if message_rules.authenticity(result, message_rules.SenderTrust({holder: key}, False)):
        return False
    said, ran = (
        context.added.get(rel),
        context.added.get(repo.task_rel(task.id, EVIDENCE, record.evidence)),
    )
    if said is None or ran is None or said.commit == ran.commit:
        return False
    return context.is_ancestor(said.commit, ran.commit)


def _holder(link: Link, by_name: Mapping[str, Link]) -> str | None:
    """Who had claimed the task once `link` was written: the `by` of the claim on its branch."""
    seen: set[str] = set()
    current: Link | None = link
    while current is not None and current.name not in seen:
        seen.add(current.name)
        prev = by_name.get(current.record.prev) if current.record.prev else None
        claim = current.record.state == "working"
        if claim and prev is not None and prev.record.state == "submitted":
            return current.record.by
        current = prev
    return None


def _unauthorized(task: Task, link: Link, rel: str, current: str, reason: str) -> Problem:
    return problem(
        "transition_unauthorized",
        id=task.id,
        path=rel,
        by=link.record.by,
        from_state=current,
        to_state=link.record.state,
        reason=reason,
    )


def _authorship(
    context: Context, task: Task, link: Link, rel: str, author: Author
) -> list[Problem]:
    expected = Identity.agent(link.record.by)
    if (author.name, author.email) == (expected.name, expected.email):
        return []
    if _on_behalf(context, task, link.record, author):
        return []
    return [
        problem(
            "author_mismatch",
            id=task.id,
            path=rel,
            by=link.record.by,
            commit=author.commit[:12],
            author=f"{author.name} <{author.email}>",
            expected=f"{expected.name} <{expected.email}>",
        )
    ]


def _signature(context: Context, task: Task, link: Link, rel: str, used: set[str]) -> list[Problem]:
    record = link.record
    key = standing_key(context, rel, record.by)
    if key is None:
        if record.sig is not None:
            why = f"it is signed, but no key of {record.by!r} stood when it was committed"
        elif context.require_signed:
            why = "it is unsigned, and this repository requires signed transitions"
        else:
            return []
    elif record.sig is None and _vouched(context, record, used):
        return []
    elif record.sig is None:
        why = f"it is unsigned, though {record.by!r} had a registered key when it was committed"
    elif not verifies(record.to_document(), key):
        why = f"its signature does not verify under the key {record.by!r} had then"
    else:
        return []
    return [_unauthorized(task, link, rel, _state_of(task, record.prev) or "(nothing)", why)]


def _on_behalf(context: Context, task: Task, record: StatusRecord, author: Author) -> bool:
    """A completion the watcher committed for the holder (`taskfs.api.evidence.requests.
    complete_on_behalf`): authored by the watcher, resting on the `result` message its `by`
    sent asking for the check. Everything else about it (the holder's right, the evidence,
    the signature or the message that vouches for it) is checked as for any transition."""
    from taskfs.core.ledger_kinds import WATCHER

    watcher = Identity.agent(WATCHER)
    if (author.name, author.email) != (watcher.name, watcher.email):
        return False
    if record.state != "completed" or record.message is None:
        return False
    asked = _thread_message(context, task.id, record.message)
    return (
        asked is not None
        and asked.status == "result"
        and asked.sender == record.by
        and asked.task_id == task.id
    )


def _thread_message(context: Context, task_id: str, msg_id: str) -> MessageRecord | None:
    """The message of a task's thread with that id (found by the id its file holds)."""
    from taskfs.api.messages.threads import read_thread

    try:
        thread = read_thread(
            context.repo, task_id, trusted=message_rules.SenderTrust({}, False), pending=set()
        )
    except TaskfsError:
        return None
    found = thread.find(msg_id)
    return found.record if found is not None else None


# The state a lifecycle message asks for (core.messages.effect); None: a claim or an answer.
_MESSAGE_TARGET = {"needs_input": "input_required", "failed": "failed", "canceled": "canceled"}


def _vouched(context: Context, transition: StatusRecord, used: set[str]) -> bool:
    """Whether a transition made by a message rests on that message, signed by its `by` and
    asking for exactly this state, vouching for no other transition: a peer signs its message
    on its own machine, and the transition the message makes here cannot be signed by it."""
    from taskfs.api.messages.threads import read_thread

    msg_id = transition.message
    if msg_id is None or msg_id in used:
        return False
    # A message id is opaque (interlink's): the message is found in the task's own folder by
    # the id its file holds, never by its file name.
    try:
        thread = read_thread(
            context.repo,
            transition.task,
            trusted=message_rules.SenderTrust({}, False),
            pending=set(),
        )
    except TaskfsError:
        return False
    found = thread.find(msg_id)
    if found is None:
        return False
    rel = context.repo.task_rel(transition.task, "messages", found.stored.name)
    record = found.record
    target = _MESSAGE_TARGET.get(record.status or "", "working")
    if record.status == "result" and transition.state == "completed":
        # A result asks for the check; the watcher completes on it where its policy says so.
        target = "completed"
    if transition.state == "submitted" and transition.prev is None:
        # A task's opening (interlink's first message) asks for the task it carries: its
        # text is the envelope committed with it, byte for byte.
        opens = _opens(context, transition.task, record) or composes(
            context.repo, transition.task, record
        )
        target = "submitted" if opens else "(no opening)"
    key = standing_key(context, rel, transition.by)
    if (
        record.sender != transition.by
        or record.task_id != transition.task
        or target != transition.state
        or (record.signature is None and record.sig is None)
        or key is None
        or message_rules.authenticity(
            record, message_rules.SenderTrust({transition.by: key}, False)
        )
    ):
        return False
    used.add(msg_id)
    return True


def _opens(context: Context, task_id: str, record: MessageRecord) -> bool:
    """Whether `record` is the opening of `task_id`: no status, and its text is the task's
    envelope as committed (the opening's text made of it, or, in openings signed before that,
    the same bytes), or the envelope it was made from on import."""
    if record.status is not None or record.in_reply_to is not None:
        return False
    try:
        committed = context.repo.read_bytes(context.repo.task_rel(task_id, ENVELOPE))
    except OSError:
        return False
    if record.text.encode("utf-8") == committed:
        return True
    from taskfs.core import yamlio
    from taskfs.core.interlink import opening_text

    try:
        if record.text == opening_text(committed):
            return True
    except yamlio.YamlError:
        return False
    from taskfs.api.messages.opened import opened_envelope  # the import's own rule

    return opened_envelope(context.repo, record) == committed


def _state_of(task: Task, name: str | None) -> str | None:
    for link in (*task.chain.links, *task.chain.superseded):
        if link.name == name:
            return link.record.state
    return None


def _late(context: Context, task: Task, links: Iterable[Link]) -> list[Problem]:
    repo = context.repo
    commit_of = {
        link.name: author.commit
        for link in links
        if (author := context.added.get(repo.task_rel(task.id, STATUS, link.name)))
    }
    out = []
    for loss in forks.late_siblings(links, commit_of, context.is_ancestor):
        out.append(late_problem(repo, task.id, loss, _state_of(task, loss.link.record.prev)))
    return out


def late_problem(repo: Repository, task_id: str, loss: forks.Loss, before: str | None) -> Problem:
    """A sibling written after the transition it forks: `transition_not_allowed`."""
    earlier = loss.winner.name if loss.winner else "another transition"
    why = (
        f" ({loss.link.name} forks {earlier}, which the commit that added it already held: a "
        "transition follows the task's latest one and cannot overturn it)"
    )
    return problem(
        "transition_not_allowed",
        id=task_id,
        path=repo.task_rel(task_id, STATUS, loss.link.name),
        from_state=before or "(nothing)",
        to_state=loss.link.record.state,
        by=loss.link.record.by,
        why_text=why,
    )


# -- messages ---------------------------------------------------------------------------------


def standing_key(context: Context, rel: str, name: str) -> bytes | None:
    """The key bytes a signature in ledger file `rel` by agent `name` is verified against
    (`key_history.key_of`, the rule the decisions ask too)."""
    from taskfs.store.key_history import key_of

    return key_of(context.added, context.keys, rel, name)


def message_problems(context: Context, task_id: str) -> list[Problem]:
    """Messages whose signature does not hold under the key that stood when they were
    committed (`signature_invalid`), or unsigned although their sender had a key then."""
    from taskfs.api.messages.threads import read_thread

    thread = read_thread(
        context.repo, task_id, trusted=message_rules.SenderTrust({}, False), pending=set()
    )
    out: list[Problem] = []
    for checked in thread.messages:
        record = checked.record
        key = standing_key(context, checked.stored.rel, record.sender)
        trust = message_rules.SenderTrust({record.sender: key} if key else {}, False)
        for found in message_rules.authenticity(record, trust):
            out.append(problem(found.code, **{**found.data, "path": checked.stored.rel}))
    return out
