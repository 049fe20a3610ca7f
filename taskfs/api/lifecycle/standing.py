"""What a claim's dependency rule reads: the ledger as committed files say it, where the read
model's rows could say otherwise (issue 35).

Three kinds of rows are words, not facts. An archived task's row is what its archive file says,
and an archive file is a file anyone could have committed: the task is read from the commit the
archive took it from (`archive_records.archived_truth`). A successor's link (`x-retriedFrom`,
`x-reassignedFrom`) is a key anyone may write into an envelope in the sender's name: it counts
only when the successor's submission verifies as its sender's act, by the very checks `audit`
replays (`authority.submission_problems`); otherwise the link is cleared. And a completion is a
status file anyone could have written: a dependency counts as completed only when its completion
was its holder's (or its sender's) to make, signed where that agent has a key (or resting on a
signed message of it), on a valid passing run (`evidence_gate.completion_flaw`); otherwise it
counts as still worked on. All of it is asked only of the tasks a claim's dependencies lead to.

`ready` reads the first two as the claim does (`offered`, issue 36): the read model's rows note
which tasks it offers on such a word, and those are asked the same checks before they are
offered, so that `ready` never offers what a claim refuses for them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from taskfs.core.lineage import Lineage
from taskfs.errors import TaskfsError
from taskfs.readmodel.ledger import Ledger
from taskfs.readmodel.projection import Summary
from taskfs.store.repository import Repository


def dependency_view(repo: Repository, task: Summary, tasks: Ledger) -> Ledger:
    """`tasks` as the claim of `task` must read them (see the module's account)."""
    depends = task.envelope.depends_on
    if not depends:
        return tasks
    from taskfs.store.archive_records import archived_truth

    changes, successors = _words(repo, task, tasks, lambda ids: archived_truth(repo, ids))
    view = tasks.overlay(changes) if changes else tasks
    done = [t for t in {*depends, *successors} if (s := view.get(t)) and s.state == "completed"]
    if done:
        from taskfs.store.key_history import act_keys

        with act_keys(repo, done) as key_of:
            for task_id in sorted(done):
                if not completion_holds(repo, view[task_id], key_of):
                    changes[task_id] = view[task_id]._replace(state="working")
    return tasks.overlay(changes) if changes else tasks


def offered(repo: Repository, tasks: Ledger, found: list[Summary]) -> list[Summary]:
    """Those of `found` (what `ready` offers, as the read model's rows say) whose claim would
    not be refused for a dependency read from a word: the archived tasks and successors its
    dependencies lead to, read as `dependency_view` reads them for the claim, by the same
    `_words` (an archived task from the commit the archive took it from, as the row of it
    names that commit; a link only from a submission that verifies as its sender's), and its
    dependencies asked again as the claim asks them. Only the tasks whose readiness rests on a
    word are asked (`core.readiness.rests_on_words`: the store notes them); the checks of
    completions are the claim's alone (each completed dependency's files and keys)."""
    from taskfs.core.readiness import rests_on_words, unfinished_dependencies
    from taskfs.store.archive_records import truth_at

    def truth(ids: list[str]) -> dict[str, Summary]:
        return truth_at(repo, {t: tasks.archived_commit(t) for t in ids})

    lineage = Lineage(tasks)
    out: list[Summary] = []
    for summary in found:
        if rests_on_words(summary, tasks, lineage):
            changes, _successors = _words(repo, summary, tasks, truth)
            view = tasks.overlay(changes) if changes else tasks
            if unfinished_dependencies(summary, view):
                continue
        out.append(summary)
    return out


def _words(
    repo: Repository,
    task: Summary,
    tasks: Ledger,
    truth: Callable[[list[str]], Mapping[str, Summary]],
) -> tuple[dict[str, Summary | None], list[str]]:
    """What a claim of `task` reads otherwise than the rows say of the archived tasks and
    successors its dependencies lead to (`truth`: the archived tasks as the commits the archives
    took them from held them), and the successors it reads."""
    depends = task.envelope.depends_on
    changes: dict[str, Summary | None] = {}
    consulted = {*depends, *(t for dep in depends for t in Lineage(tasks).line(dep))}
    archived = sorted(t for t in consulted if (s := tasks.get(t)) is not None and s.archived)
    if archived:
        found = truth(archived)
        changes.update({t: found.get(t) for t in archived})
    view = tasks.overlay(changes) if changes else tasks
    successors = sorted({t for dep in depends for t in Lineage(view).line(dep)})
    for task_id in _unvouched(repo, successors) if successors else []:
        summary = view[task_id]
        changes[task_id] = summary._replace(envelope=summary.envelope._replace(follows=None))
    return changes, successors


def completion_holds(
    repo: Repository, summary: Summary, key_of: Callable[[str, str], bytes | None]
) -> bool:
    """Whether the task's completion is what only its holder (or its sender, on the holder's
    result) could have written: by one of them, signed where that agent had a key when it was
    committed (`key_of`: audit's rule; or resting on a message of it that verifies), on a
    passing run of the task's own command (by a trusted runner where runner keys are trusted).
    Read from the files themselves, with YAML alone: a claim pays no model for a dependency's
    completion."""
    from taskfs.core.layout import EVIDENCE, STATUS
    from taskfs.store.archive_records import home

    where = home(repo, summary.id)
    names = [n for n in where.list_dir(summary.id, STATUS) if "-completed-" in n]
    if not names:
        return False
    rel = where.task_rel(summary.id, STATUS, max(names))
    document = _fields(where.read_bytes(rel))
    by, evidence = document.get("by"), document.get("evidence")
    if by not in (summary.holder, summary.envelope.sender) or not isinstance(evidence, str):
        return False
    if not _signed_by(where, summary.id, document, key_of(rel, str(by))):
        return False
    try:
        run = _fields(where.read_bytes(where.task_rel(summary.id, EVIDENCE, evidence)))
    except OSError:
        return False
    passed = (run.get("kind"), run.get("verdict")) == ("check", "pass")
    if not passed or run.get("command") != summary.envelope.command:
        return False
    return not _runners_trusted(repo) or _trusted_run(repo, where, summary.id, evidence)


def _fields(data: bytes) -> dict[str, Any]:
    from taskfs.core import yamlio

    try:
        value = yamlio.load(data)
    except yamlio.YamlError:
        return {}
    return value if isinstance(value, dict) else {}


def _runners_trusted(repo: Repository) -> bool:
    """Whether evidence must be signed by a trusted runner here (`evidence_gate.trust_root`)."""
    from taskfs.store import keys

    if keys.operator_trusted_runners(repo.root) is not None:
        return True
    return bool(keys.committed_public_keys(repo.git, "runner"))


def _trusted_run(repo: Repository, where: Repository, task_id: str, name: str) -> bool:
    """Where runner keys are trusted: whether the run's signature is a trusted runner's."""
    from taskfs.api.evidence import gate as evidence_gate
    from taskfs.store.task_reader import load_evidence_file

    try:
        item = load_evidence_file(where, task_id, name, evidence_gate.trust_root(repo))
    except TaskfsError:
        return False
    return item.signature == "valid"


def _signed_by(repo: Repository, task_id: str, document: dict[str, Any], key: bytes | None) -> bool:
    """Whether a status file is signed as its `by`'s acts are: under `key`, the key that stood
    for its `by` when the file was committed (`authority.standing_key`, audit's rule), or
    resting on a message of its `by` that verifies; True when no key stood."""
    from taskfs.core import act_signing

    by = str(document.get("by"))
    if key is None:
        return True
    if document.get("sig") is not None:
        return act_signing.verifies("status", document, key)
    message = document.get("message")
    if not isinstance(message, str):
        return False
    from taskfs.api.messages.threads import read_thread

    found = read_thread(repo, task_id).find(message)
    return found is not None and found.ok and found.record.sender == by


def vouched(repo: Repository, task_ids: list[str]) -> list[str]:
    """The tasks among `task_ids` whose submission is their sender's own act, in order."""
    refused = set(_unvouched(repo, task_ids)) if task_ids else set()
    return [t for t in task_ids if t not in refused]


def _unvouched(repo: Repository, task_ids: list[str]) -> list[str]:
    """The tasks among `task_ids` whose submission is not their sender's own act."""
    from taskfs.api.review import authority
    from taskfs.store.archive_records import archived_task
    from taskfs.store.task_reader import Task, load_task

    loaded: dict[str, Task] = {}
    for task_id in task_ids:
        found = load_task(repo, task_id) if repo.has_task(task_id) else archived_task(repo, task_id)
        if found is not None:
            loaded[task_id] = found
    refused = [t for t in task_ids if t not in loaded]
    with authority.opened(repo, loaded) as context:
        refused += [
            t for t, found in loaded.items() if authority.submission_problems(context, found)
        ]
    return refused
