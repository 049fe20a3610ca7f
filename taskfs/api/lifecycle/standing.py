"""What a claim's dependency rule reads: the ledger as committed files say it, where the read
model's rows could say otherwise (issue 35).

Three kinds of rows are words, not facts. An archived task's row is what its archive file says,
and an archive file is a file anyone could have committed: the task is read from the commit the
archive took it from (`archive_records.archived_truth`). A successor's link (`x-retriedFrom`,
`x-reassignedFrom`) is a key anyone may write into an envelope in the sender's name: it counts
only when the successor's submission verifies as its sender's act, by the very checks `audit`
replays (`authority.submission_problems`); otherwise the link is cleared. And a completion is a
status file anyone could have written: a dependency counts as completed only when its completion
stands (`taskfs.store.completions`: its holder's or sender's own act, signed where that agent
had a key when it was committed, or resting on a result of it that verifies so, on a passing
run of the task's command) and its run is signed by a runner trusted now, where runner keys
are trusted (`runs_trusted`). All of it is asked only of the tasks a claim's dependencies
lead to.

`ready` reads the first two as the claim does (`offered`, issue 36): the read model's rows note
which tasks it offers on such a word, and those are asked the same checks before they are
offered, so that `ready` never offers what a claim refuses for them. Whether a completion stands
is fixed once it is committed (the key rule is the key at the commit), so the read model keeps
it in the completed task's row (`Summary.stands`), made by the same rule (`stands_as_written`
for the completion a writer commits), and `ready` reads it from there (`core.lineage.done`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

from taskfs.core.lineage import Lineage
from taskfs.errors import TaskfsError
from taskfs.readmodel.ledger import Ledger
from taskfs.readmodel.projection import Summary
from taskfs.store.repository import Repository

TYPE_CHECKING = False
if TYPE_CHECKING:
    from taskfs.core.evidence import GateFacts


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

        trusted = runs_trusted(repo, done)
        with act_keys(repo, done) as key_of:
            for task_id in sorted(done):
                holds = task_id in trusted and completion_stands(repo, view[task_id], key_of)
                if holds != view[task_id].stands:  # the files decide, whatever the row says
                    changes[task_id] = view[task_id]._replace(stands=holds)
    return tasks.overlay(changes) if changes else tasks


def offered(repo: Repository, tasks: Ledger, found: list[Summary]) -> list[Summary]:
    """Those of `found` (what `ready` offers, as the read model's rows say) whose claim would
    not be refused for a dependency read from a word: the archived tasks and successors its
    dependencies lead to, read as `dependency_view` reads them for the claim, by the same
    `_words` (an archived task from the commit the archive took it from, as the row of it
    names that commit; a link only from a submission that verifies as its sender's), and its
    dependencies asked again as the claim asks them; nor for a completion it rests on whose run
    no runner trusted now signed, where runner keys are trusted (`runs_trusted`, as the claim
    asks it). Only the tasks whose readiness rests on a word are asked of words
    (`core.readiness.rests_on_words`: the store notes them); whether a completion stands
    otherwise is the rows' (`Summary.stands`, made by the claim's rule)."""
    from taskfs.core.readiness import rests_on_words, unfinished_dependencies
    from taskfs.store.archive_records import truth_at

    def truth(ids: list[str]) -> dict[str, Summary]:
        return truth_at(repo, {t: tasks.archived_commit(t) for t in ids})

    lineage = Lineage(tasks)
    kept: list[tuple[Summary, Ledger]] = []  # each with the ledger as its claim reads it
    for summary in found:
        view = tasks
        if rests_on_words(summary, tasks, lineage):
            changes, _successors = _words(repo, summary, tasks, truth)
            view = tasks.overlay(changes) if changes else tasks
            if unfinished_dependencies(summary, view):
                continue
        kept.append((summary, view))
    if not any(s.envelope.depends_on for s, _view in kept) or not runners_trusted(repo, tasks):
        return [summary for summary, _view in kept]
    # The completions each rests on (its dependencies' or their successors'), asked once each.
    completing = [
        (summary, {Lineage(view).completed(dep) for dep in summary.envelope.depends_on})
        for summary, view in kept
    ]
    done = {t for _s, ids in completing for t in ids if t is not None}
    trusted = runs_trusted(repo, done, tasks)
    return [summary for summary, ids in completing if ids <= trusted]


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


def completion_stands(
    repo: Repository, summary: Summary, key_of: Callable[[str, str], bytes | None]
) -> bool:
    """Whether the task's completion stands (`taskfs.store.completions`: its holder's or
    sender's own act, signed where that agent had a key when it was committed, on a passing
    run of the task's own command; what the read model's row keeps as `stands`), read from its
    files (an archived task's from the commit the archive took it from)."""
    from taskfs.store import completions
    from taskfs.store.archive_records import home

    return completions.stands(home(repo, summary.id), summary, key_of)


def stands_as_written(
    repo: Repository, summary: Summary, rel: str, document: dict[str, Any], run: GateFacts | None
) -> bool:
    """Whether a completion about to be committed at `rel`, holding `document`, stands
    (`taskfs.store.completions`, the rule the read model's row keeps and a claim asks): what the
    writer stores in the task's row with the commit. A file not committed yet is checked
    against the key that stands now, which the commit will hold; the run it names, as the
    completion gate read it (`run`: no evidence file is read again)."""
    from taskfs.store import completions
    from taskfs.store.key_history import act_keys

    fields = completions.ran(summary.id, run) if run is not None else None
    with act_keys(repo, [summary.id]) as key_of:
        return completions.judged(repo, summary, rel, document, key_of, run=fields)


def runs_trusted(
    repo: Repository, task_ids: Collection[str], tasks: Ledger | None = None
) -> set[str]:
    """Those of the completed tasks `task_ids` whose completion names a run signed by a runner
    trusted now (every one, where no runner key is trusted: `runners_trusted`, of `tasks`
    when given): the one part of a completion that is not fixed once it is committed (the
    operator's trust list lies outside the repository), asked at the time, by the claim and by
    `ready` alike."""
    if not task_ids or not runners_trusted(repo, tasks):
        return set(task_ids)
    from taskfs.api.evidence import gate as evidence_gate
    from taskfs.store import completions
    from taskfs.store.archive_records import home
    from taskfs.store.task_reader import load_evidence_file

    trust = evidence_gate.trust_root(repo)
    out: set[str] = set()
    for task_id in sorted(task_ids):
        where = home(repo, task_id)
        found = completions.completion(where, task_id)
        name = completions.run_of(found[1]) if found is not None else None
        if name is None:
            continue
        try:
            item = load_evidence_file(where, task_id, name, trust)
        except TaskfsError:
            continue
        if item.signature == "valid":
            out.add(task_id)
    return out


def runners_trusted(repo: Repository, tasks: Ledger | None = None) -> bool:
    """Whether evidence must be signed by a trusted runner here (`evidence_gate.trust_root`),
    asked without loading it: the operator keeps a trust list, or HEAD holds runner keys (as
    the read model's root says it, when `tasks` is read from it at HEAD)."""
    from taskfs.store import keys

    if keys.operator_trusted_runners(repo.root) is not None:
        return True
    if tasks is not None:
        return tasks.view.runners
    return bool(keys.committed_public_keys(repo.git, "runner"))


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
