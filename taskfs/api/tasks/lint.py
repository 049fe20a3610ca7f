"""`taskfs lint`: warnings about contracts that are valid but weak (rules: taskfs.core.lint).

Envelopes are written once and never edited, so a warning is most useful before `new`: lint
takes envelope files as well as task ids. With neither it looks at the ledger's open tasks.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from taskfs import i18n
from taskfs.api.tasks.submit import Source, parse_source
from taskfs.core import layout, progress
from taskfs.core import lint as rules
from taskfs.core.envelope import Envelope
from taskfs.core.facts import TaskFacts
from taskfs.core.layout import ENVELOPE
from taskfs.core.lifecycle import TERMINAL
from taskfs.core.lineage import Lineage
from taskfs.errors import Problem, TaskfsError, fail, problem
from taskfs.store.all_tasks import load_all
from taskfs.store.index import summaries
from taskfs.store.repository import Repository, read_input
from taskfs.store.task_reader import load_envelope


class Linted(NamedTuple):
    warnings: tuple[Problem, ...]
    errors: tuple[Problem, ...]  # what could not be linted: files that are not envelopes
    checked: int

    def ok(self, strict: bool) -> bool:
        return not self.errors and not (strict and self.warnings)


def lint(repo: Repository | None, targets: Sequence[str]) -> Linted:
    """Lint the envelope files and task ids named, or every open task of the ledger."""
    tasks = load_all(repo) if repo is not None else {}
    contexts = {t.id: t.envelope.context_id for t in tasks.values()}
    settings = settings_of(repo) if repo is not None else rules.Settings()
    # What a dependency stands at is the ledger's answer, archived tasks included (`ready` and
    # `claim` ask the same), not the working tree's.
    ledger = summaries(repo) if repo is not None else None
    if not targets:
        if repo is None:
            raise fail("not_a_repository", path=str(Path.cwd()))
        open_tasks = [(t.id, t.envelope) for t in tasks.values() if t.state not in TERMINAL]
        return _lint_all(open_tasks, [], contexts, settings, ledger)
    subjects: list[tuple[str, Envelope]] = []
    errors: list[Problem] = []
    for target in targets:
        try:
            subjects += _target(repo, target, errors)
        except TaskfsError as exc:
            errors += exc.problems
    return _lint_all(subjects, errors, contexts, settings, ledger)


def lint_subjects(
    repo: Repository, subjects: Sequence[tuple[str, Envelope]], tasks: Mapping[str, TaskFacts]
) -> Linted:
    """Lint these contracts (each with the name it is reported under) against the ledger
    `tasks`: `review` lints the contracts its range added with this, as `lint RANGE` does."""
    contexts = {t.id: t.envelope.context_id for t in tasks.values()}
    return _lint_all(subjects, [], contexts, settings_of(repo), tasks)


def _target(
    repo: Repository | None, target: str, errors: list[Problem]
) -> list[tuple[str, Envelope]]:
    """A task id of the ledger, a range of commits (every contract it added), or an envelope
    file (whose problems go to `errors`)."""
    # os.path.exists is False for a name the system refuses to look at (too long): reading it
    # then names why (`file_unreadable`).
    from taskfs.api.review.added import is_range

    if repo is not None and not os.path.exists(target):
        if layout.is_task_id(target) and (repo.has_task(target) or not is_range(target)):
            return [(target, load_envelope(repo, target))]
        if is_range(target):
            from taskfs.api.review.added import contracts  # reads history: only for a range

            added = contracts(repo, target)
            for task in added:
                if task.envelope is None:
                    path = repo.task_rel(task.id, ENVELOPE)
                    errors.append(problem("file_invalid", path=path, reason=task.problem))
            return [(t.id, t.envelope) for t in added if t.envelope is not None]
    envelope, found = parse_source(Source(target, read_input(target)))
    errors += found
    return [(envelope.id or target, envelope)] if envelope is not None else []


def _lint_all(
    subjects: Sequence[tuple[str, Envelope]],
    errors: Sequence[Problem],
    contexts: Mapping[str, str],
    settings: rules.Settings,
    tasks: Mapping[str, TaskFacts] | None = None,
) -> Linted:
    # Tasks linted together know each other's contexts (a plan submitted in one batch).
    known = {**contexts, **{e.id: e.context_id for _, e in subjects if e.id}}
    states = None
    if tasks is not None:
        named = {dep for _, e in subjects for dep in e.depends_on}
        batch = {e.id: (e.id, "submitted") for _, e in subjects if e.id and e.id not in tasks}
        states = {**standing(tasks, named), **batch}
    warnings: list[Problem] = []

    def label() -> str:
        return i18n.say("checking {count} envelopes", count=len(subjects))

    with progress.step(label, len(subjects)) as advance:
        for subject, envelope in subjects:
            warnings += rules.lint_envelope(
                envelope, subject=subject, contexts=known, settings=settings, dependencies=states
            )
            advance(1)
    return Linted(tuple(warnings), tuple(errors), len(subjects))


def standing(
    tasks: Mapping[str, TaskFacts], ids: Iterable[str], lineage: Lineage | None = None
) -> dict[str, tuple[str, str]]:
    """For each of `ids` that is a task: the task standing for it now (itself, or the
    successor that completed or carries it on: `core.lineage`) and that one's state."""
    lineage = lineage or Lineage(tasks)
    out: dict[str, tuple[str, str]] = {}
    for task_id in ids:
        if task_id not in tasks:
            continue
        done = lineage.completed(task_id)
        now = done if done is not None else lineage.standing(task_id)
        out[task_id] = (now, tasks[now].state)
    return out


def lint_sources(repo: Repository, sources: Sequence[Source]) -> tuple[Problem, ...]:
    """The warnings about envelopes about to be submitted (`new`), read from their bytes: run
    before the submission, so that `new` adds no time after its files are written.

    The ledger is consulted only for the contexts of the tasks the envelopes depend on (the
    one rule that looks past an envelope): those envelopes are read, never the whole ledger."""
    subjects = []
    for source in sources:
        envelope, _problems = parse_source(source)
        if envelope is not None:
            subjects.append((envelope.id or source.label, envelope))
    envelopes = [e for _, e in subjects]
    contexts = _dependency_contexts(repo, envelopes)
    settings = settings_of(repo)
    warnings = _lint_all(subjects, [], contexts, settings).warnings
    states = _dependency_states(repo, envelopes)
    if states is None:
        return warnings
    batch = {e.id: (e.id, "submitted") for e in envelopes if e.id}
    known = {**states, **batch}
    return warnings + tuple(
        w
        for subject, envelope in subjects
        for w in rules.dependency_warnings(envelope, subject, known, settings)
    )


def advice(repo: Repository, sources: Sequence[Source]) -> tuple[Problem, ...]:
    """`lint_sources` for a submission (`new`, MCP's `agent_send`): a lint that cannot run
    gives no warning and never stops the submission."""
    try:
        return lint_sources(repo, sources)
    except Exception:
        return ()


def _dependency_contexts(repo: Repository, envelopes: Sequence[Envelope]) -> dict[str, str]:
    """The contextID of each task of the ledger named in a `dependsOn` of `envelopes`; a
    dependency that is missing or unreadable has none (`new` names it, not the lint)."""
    contexts: dict[str, str] = {}
    for dep in {d for e in envelopes for d in e.depends_on}:
        if not layout.is_task_id(dep):
            continue
        try:
            contexts[dep] = load_envelope(repo, dep).context_id
        except TaskfsError:
            continue
    return contexts


def _dependency_states(
    repo: Repository, envelopes: Sequence[Envelope]
) -> dict[str, tuple[str, str]] | None:
    """`standing` for the tasks `envelopes` depend on, asked of the ledger as the claim asks it
    (`summaries`: archived tasks too, a completed one counting as completed); None when
    nothing is named."""
    deps = {d for e in envelopes for d in e.depends_on if layout.is_task_id(d)}
    if not deps:
        return None
    return standing(summaries(repo), deps)


def settings_of(repo: Repository) -> rules.Settings:
    """The repository's lint settings (`lint:`), remembered beside the ledger cache by the
    digest of the settings file's bytes they were validated from (sealed:
    `taskfs.readmodel.cache`): `new` lints every envelope it takes, and validating the
    settings' model costs it more than the lint itself. Only settings that passed validation
    are remembered."""
    from taskfs.readmodel import cache

    identity = repo.settings_identity
    git_dir = str(repo.git_dir)
    if identity is not None:
        kept = cache.recall(git_dir, "settings", "lint", identity[2])
        remembered = _remembered(kept)
        if remembered is not None:
            return remembered
    settings = repo.config.lint.settings()
    if identity is not None:
        kept = (tuple(sorted(settings.disable)), settings.objective_min_words)
        cache.remember(git_dir, "settings", "lint", identity[2], kept)
    return settings


def _remembered(kept: object) -> rules.Settings | None:
    if type(kept) is not tuple or len(kept) != 2:
        return None
    disable, words = kept
    if type(words) is not int or type(disable) is not tuple:
        return None
    if not all(type(code) is str for code in disable):
        return None
    return rules.Settings(frozenset(disable), words)
