"""`taskfs archive`: terminal tasks older than an age leave the working tree in one audited
commit (contract section 12, issue 31).

The commit removes each task's folder whole and adds the archive's files naming them (the
format is `taskfs.readmodel.archive`), authored by the acting agent, who must be one the
repository's settings allow (`archive.by`; the operator, when no agent is named). History keeps
the tasks: `show`, `log`, `ls --archived`, the rules (a dependency on an archived completed task
stays satisfied) and every clone that pulls the commit read them from there. `audit` checks each
archive commit: only terminal tasks, only by someone allowed.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import NamedTuple

from taskfs import i18n
from taskfs.core import progress
from taskfs.core.ages import parse_age
from taskfs.core.layout import ARCHIVE_DIR, CONFIG_PATH, format_time, stamped_name
from taskfs.core.lifecycle import TERMINAL
from taskfs.errors import fail
from taskfs.readmodel import archive as records
from taskfs.readmodel.ledger import Ledger
from taskfs.readmodel.projection import Summary
from taskfs.store import head_ledger
from taskfs.store.index import summaries
from taskfs.store.repository import Repository
from taskfs.store.writer import Writer


class Archived(NamedTuple):
    ids: tuple[str, ...]  # the tasks taken out of the working tree
    commit: str | None  # None: nothing was old enough
    files: tuple[str, ...]  # the archive's files the commit added
    skipped: tuple[str, ...]  # old enough, but left in place (why: `skipped_why`)
    older_than: str
    # Each skipped id's reason: `uncommitted` (its folder holds files no commit holds) or
    # `request` (an ended intake request: the archive takes tasks only).
    skipped_why: dict[str, str] = {}  # noqa: RUF012 (a NamedTuple's default, never mutated)


def archive(
    repo: Repository,
    agent: str | None,
    older_than: str | None = None,
    *,
    now: datetime | None = None,
) -> Archived:
    """Archive every terminal task whose last transition is older than `older_than` (default:
    the repository's `archive.olderThan`), as `agent` (the operator when None)."""
    actor = agent if agent is not None else records.OPERATOR
    settings = repo.config.archive
    if actor not in settings.by:
        allowed = ", ".join(settings.by) or "nobody"
        raise fail(
            "agent_not_allowed",
            agent=actor,
            action="archive",
            action_text=i18n.say("archive tasks"),
            reason=i18n.said(
                "the settings allow only {agents} to archive; to allow {agent}, add it to the "
                "list archive.by in {path} and commit that",
                agents=allowed,
                agent=actor,
                path=CONFIG_PATH,
            ),
            rule="archive",
            setting="archive.by",
            path=CONFIG_PATH,
        )
    age_text = settings.older_than if older_than is None else older_than
    try:
        age = parse_age(age_text)
    except ValueError as exc:
        raise fail("invalid_value", field="older-than", reason=str(exc)) from None
    now = now or datetime.now(timezone.utc)
    with repo.writing() as writer:
        ledger = summaries(repo)
        chosen = [s for s in ledger.many(ledger.terminal_ids()) if records.eligible(s, now - age)]
        # A folder holding a file no commit holds would lose it: it stays until committed.
        loose = set(head_ledger.loose(repo, [s.id for s in chosen])) if chosen else set()
        chosen = [s for s in chosen if s.id not in loose]
        why = dict.fromkeys(loose, "uncommitted")
        why.update((task_id, "request") for task_id in _ended_requests(repo, ledger, now - age))
        skipped = tuple(sorted(why))
        if not chosen:
            return Archived((), None, (), skipped, age_text, why)
        files = _add_records(repo, writer, chosen, actor=actor, age_text=age_text, now=now)
        for summary in chosen:
            writer.retire(repo.task_rel(summary.id))
            writer.project(records.as_archived(summary))
        ids = tuple(s.id for s in chosen)

        def committing() -> str:
            return i18n.say("archiving {count} tasks", count=len(ids))

        with progress.step(committing, len(ids), counted=False):
            commit = writer.commit(_message(ids, actor, age_text), actor, when=now)
    return Archived(ids, commit, files, skipped, age_text, why)


def _ended_requests(repo: Repository, ledger: Ledger, cutoff: datetime) -> list[str]:
    """The requests (intakes) canceled before `cutoff`: the archive leaves them and says so."""
    from taskfs.store.intake_reader import load_intake

    out = []
    for summary in ledger.many(ledger.intake_ids()):
        if summary.state not in TERMINAL or summary.archived:
            continue  # an open request, or one that became a task (read as a task)
        canceled = load_intake(repo, summary.id)[0].canceled
        ended_at = canceled.record.at if canceled is not None else None
        if records.ended_request(summary, ended_at, cutoff):
            out.append(summary.id)
    return out


def _add_records(
    repo: Repository,
    writer: Writer,
    chosen: list[Summary],
    *,
    actor: str,
    age_text: str,
    now: datetime,
) -> tuple[str, ...]:
    texts = records.documents(
        chosen, by=actor, at=format_time(now), older_than=age_text, commit=repo.git.head()
    )
    files = []
    for text in texts:
        rel = f"{ARCHIVE_DIR}/{stamped_name(now)}"
        writer.add(rel, _signed(repo, actor, text).encode())
        files.append(rel)
    return tuple(files)


def _signed(repo: Repository, actor: str, text: str) -> str:
    """The archive file's text, with `actor`'s signature where it has a key (as every act of
    an agent with a key: `taskfs.api.lifecycle.signing.sign_act`)."""
    import json

    from taskfs.api.lifecycle.signing import sign_act
    from taskfs.core import yamlio

    document = yamlio.load(text.encode())
    assert isinstance(document, dict)
    signed = sign_act(repo, actor, "archive", document, "archive tasks")
    return text if "sig" not in signed else f"{text}sig: {json.dumps(signed['sig'])}\n"


def _message(ids: tuple[str, ...], actor: str, age_text: str) -> str:
    shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    return (
        f"taskfs: archive {len(ids)} task{'s' if len(ids) != 1 else ''} by {actor}\n\n"
        f"Terminal tasks older than {age_text}: {shown}.\n\n"
        f"Taskfs-Archive: {len(ids)}\n"
        f"Taskfs-Agent: {actor}\n"
    )
