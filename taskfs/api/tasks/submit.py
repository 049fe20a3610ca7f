"""Submitting envelopes: `init`, `new` and `validate`.

`new` is the one way a task enters the ledger; the CLI, the MCP server and the watcher's
intake all call `submit`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, NamedTuple

from taskfs import i18n
from taskfs.api.lifecycle import signing as transition_keys
from taskfs.api.tasks import ids, rules
from taskfs.api.tasks.filing import record_bytes
from taskfs.core import progress, yamlio
from taskfs.core.config import Config
from taskfs.core.envelope import Envelope, envelope_json_schema, validate_envelope
from taskfs.core.layout import (
    CONFIG_PATH,
    ENVELOPE,
    INTAKE,
    MESSAGES,
    SCHEMA_DIR,
    STATUS,
    find_worktree,
    format_time,
    stamped_name,
    status_name,
)
from taskfs.core.records import StatusRecord
from taskfs.errors import Problem, TaskfsError, fail, problem
from taskfs.readmodel.projection import Facts, Summary, text_of
from taskfs.store import fs, keys
from taskfs.store.git import Git
from taskfs.store.repository import Repository
from taskfs.store.writer import Writer

if TYPE_CHECKING:
    from taskfs.api.messages.openings import OpeningSigner

ENVELOPE_SCHEMA = f"{SCHEMA_DIR}/envelope.schema.json"


class Source(NamedTuple):
    """An envelope as it arrived: where from (a path, `-`, a tool call) and its bytes."""

    label: str
    data: bytes


class Submitted(NamedTuple):
    id: str
    state: str = "submitted"


# -- init ------------------------------------------------------------------------------


class Initialised(NamedTuple):
    root: Path
    created: tuple[str, ...]
    commit: str | None
    # The usual build outputs `.gitignore` does not name (`core.ignores`): added with
    # `gitignore`, else offered.
    unignored: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()  # those it added
    appended: tuple[str, ...] = ()  # files that were there, added to (`.gitignore`)


def init(start: Path, agent: str, *, gitignore: bool = False) -> Initialised:
    """Make `start` a taskfs repository (and a git repository if it is none); idempotent.
    With `gitignore`, add the usual build outputs `.gitignore` lacks (bytecode and caches
    under an owned folder otherwise keep a check's tree from being clean), in the same commit."""
    from taskfs.core import ignores
    from taskfs.schemas import schema_text  # every model's schema: only `init` needs them

    root = find_worktree(start)
    if root is None:
        root = start.resolve()
        root.mkdir(parents=True, exist_ok=True)
        Git.init(root)
    repo = Repository.open(root)
    created = []
    wanted = {
        CONFIG_PATH: _config_text(repo.config),
        ENVELOPE_SCHEMA: schema_text(envelope_json_schema()),
        f"{repo.tasks_rel}/.gitkeep": "",
    }
    with repo.writing() as writer:
        for rel, text in wanted.items():
            path = root / rel
            if rel == CONFIG_PATH and path.exists():
                continue
            if path.exists() and path.read_text(encoding="utf-8", errors="replace") == text:
                continue
            fs.replace(path, text.encode())
            created.append(rel)
        ignore = root / ".gitignore"
        before = ignore.read_text(encoding="utf-8", errors="replace") if ignore.exists() else ""
        lacking = tuple(ignores.missing(before))
        added: tuple[str, ...] = ()
        appended: list[str] = []
        if gitignore and lacking:
            lead = before if not before or before.endswith("\n") else before + "\n"
            text = lead + "# build outputs (taskfs init --gitignore)\n" + "\n".join(lacking) + "\n"
            (appended if ignore.exists() else created).append(".gitignore")
            fs.replace(ignore, text.encode())
            added, lacking = lacking, ()
        changed = [*created, *appended]
        commit = writer.commit_existing(changed, "taskfs: init", agent) if changed else None
    return Initialised(root, tuple(created), commit, lacking, added, tuple(appended))


def _config_text(config: Config) -> str:
    return "# taskfs repository settings (committed, so every clone agrees)\n" + yamlio.dump(
        config.to_document()
    )


# -- reading envelopes -----------------------------------------------------------------


PARSED_KEPT = 2048  # envelopes: a `new` of a thousand lints and submits each from one read


def parse_source(source: Source) -> tuple[Envelope | None, list[Problem]]:
    """An envelope from raw bytes, or every problem with it (each tagged with its source)."""
    envelope, problems = _parsed(source, i18n.languages())
    return envelope, list(problems)


@functools.lru_cache(maxsize=PARSED_KEPT)
def _parsed(
    source: Source, _languages: tuple[str, ...]
) -> tuple[Envelope | None, tuple[Problem, ...]]:
    # `new` lints what it submits before submitting it: the same bytes are read once (an
    # envelope is immutable, and so is what is wrong with it, in the language it is said in),
    # for a batch of a thousand envelopes too (with 32 kept, each was read twice).
    try:
        value = yamlio.load(source.data)
    except yamlio.YamlError as exc:
        return None, (_at(problem("yaml_invalid", reason=exc.reason), source.label),)
    envelope, problems = validate_envelope(value)
    return envelope, tuple(_at(p, source.label) for p in problems)


def _at(found: Problem, label: str) -> Problem:
    return replace(found, data={**found.data, "source": label})


# -- new -------------------------------------------------------------------------------


def submit(repo: Repository, sources: Sequence[Source], agent: str | None) -> list[Submitted]:
    """Validate every envelope, then write them all in one commit, or none of them."""
    if not sources:
        raise fail("usage", reason="name at least one envelope file (or - for stdin)")
    parsed: list[tuple[Source, Envelope]] = []
    problems: list[Problem] = []

    def reading() -> str:
        return i18n.say("reading {count} envelopes", count=len(sources))

    with progress.step(reading, len(sources)) as advance:
        for source in sources:
            envelope, found = parse_source(source)
            problems += found
            if envelope is not None:
                parsed.append((source, envelope))
            advance(1)
    if problems:
        raise TaskfsError(problems)
    actor = _actor(agent, [env for _, env in parsed], sources)
    if agent is not None:
        # A sender left out is the acting agent: a task with no sender could be neither
        # answered, canceled nor handed on by the one who sent it.
        parsed = [(src, env if env.sender else env.with_sender(agent)) for src, env in parsed]
    with repo.writing() as writer:
        return submit_within(repo, writer, parsed, actor)


def submit_within(
    repo: Repository,
    writer: Writer,
    parsed: Sequence[tuple[Source, Envelope]],
    actor: str,
    *,
    trailers: Sequence[str] = (),
    opened: str | None = None,
    discovered_from: str | None = None,
) -> list[Submitted]:
    """`submit`'s checks and writes, under a writer the caller holds: the commit holds
    whatever the caller added to `writer` too (an intake's last request). `opened`: the
    message that made the (single) task, as `write_new_tasks` takes it; `discovered_from`:
    the task its request was found in (a follow-up), for the read model's row."""
    batch = _assign_ids(repo, parsed, actor)
    rules.check_new_tasks(repo, batch)
    write_new_tasks(
        repo,
        writer,
        batch,
        actor,
        trailers=trailers,
        opened=opened,
        discovered_from=discovered_from,
    )
    return [Submitted(e.id or "") for e in batch]


def write_new_tasks(
    repo: Repository,
    writer: Writer,
    batch: Sequence[Envelope],
    actor: str,
    *,
    in_place: Collection[str] = (),
    trailers: Sequence[str] = (),
    opened: str | None = None,
    discovered_from: str | None = None,
) -> str:
    """Write each envelope of `batch` (already checked, ids assigned) and its `submitted`
    status, in one commit by `actor`. A task named in `in_place` already has its envelope
    file at its place (dropped there, not yet committed): that file is committed as it is.

    The task's opening, interlink's signed message carrying the envelope as its text, is kept
    beside it as its first message file and named by the `submitted` status (`message:`):
    `opened` names a peer's opening as it arrived (one task; its file is the caller's to add),
    or else one is signed here when the
    sender's private key is on this machine and both ends have committed keys. It vouches for
    the `submitted` (audit) and is exported as stored, from any clone, never re-signed."""
    now = datetime.now(timezone.utc)
    signer = _opening_signer(repo, actor) if opened is None else None
    acts = transition_keys.Signer(repo, actor)  # one question of keys for the whole batch

    def writing() -> str:
        return i18n.say("writing {count} tasks", count=len(batch))

    def committing() -> str:
        return i18n.say("committing {count} tasks", count=len(batch))

    with progress.step(writing, len(batch)) as advance:
        for envelope in batch:
            stage_new_task(
                repo,
                writer,
                envelope,
                actor,
                now=now,
                signer=signer,
                acts=acts,
                in_place=envelope.id in in_place,
                opened=opened,
                discovered_from=discovered_from,
            )
            advance(1)
    subject = _new_message([e.id or "" for e in batch], actor, trailers)
    with progress.step(committing, len(batch), counted=False):
        return writer.commit(subject, actor, when=now)


def new_task_row(
    envelope: Envelope, status: str, actor: str, at: str, discovered_from: str | None = None
) -> Summary:
    """The projection of a task just submitted: its envelope, one `submitted` status."""
    assert envelope.id is not None
    facts = Facts.of(envelope)
    return Summary(
        envelope.id,
        facts,
        "submitted",
        None,
        0,
        (),
        status,
        actor,
        1,
        head_at=at,
        discovered_from=discovered_from,
    )


def stage_new_task(
    repo: Repository,
    writer: Writer,
    envelope: Envelope,
    actor: str,
    *,
    now: datetime,
    signer: OpeningSigner | None,
    acts: transition_keys.Signer | None = None,
    in_place: bool = False,
    opened: str | None = None,
    discovered_from: str | None = None,
) -> None:
    """Add one new task to `writer`: its envelope file (already in place, or written now), its
    opening signed by `signer` when it can sign it, and its `submitted` status naming that
    opening (or `opened`), signed by `actor` where its key is here (by `acts`, when the caller
    stages many)."""
    task_id = envelope.id
    assert task_id is not None
    envelope_rel = repo.task_rel(task_id, ENVELOPE)
    if in_place:
        writer.include(envelope_rel)
        text = repo.read_bytes(envelope_rel)
    else:
        text = envelope_bytes(repo, envelope)
        writer.add(envelope_rel, text)
    at = format_time(now)
    message = signer.sign(task_id, envelope.recipient, text, at) if signer else None
    if message is not None:
        rel = repo.task_rel(task_id, MESSAGES, stamped_name(now))
        writer.add(rel, record_bytes(message.to_document()))
    from taskfs.core.transition_signing import envelope_digest

    record = StatusRecord(
        task=task_id,
        state="submitted",
        by=actor,
        at=at,
        message=message.msg_id if message is not None else opened,
        envelope=envelope_digest(text),
    )
    acts = acts or transition_keys.Signer(repo, actor)
    document = acts.status(record.to_document(), f"submit task {task_id!r}")
    name = status_name(1, "submitted")
    writer.add(repo.task_rel(task_id, STATUS, name), record_bytes(document))
    # The read model's row, as the full reader will read these files (their commit stores it:
    # `Writer.project`).
    words: list[str] = []
    if repo.list_dir(task_id, INTAKE):
        found, words = _request_of(repo, task_id)
        discovered_from = discovered_from or found
    row = new_task_row(envelope, name, actor, at, discovered_from)
    writer.project(row._replace(text=text_of(envelope.objective, *words)))


def _request_of(repo: Repository, task_id: str) -> tuple[str | None, list[str]]:
    """The task the request of `task_id`'s folder was found in (a follow-up), if any, and its
    requests' words (what `ls --grep` searches)."""
    from taskfs.store.intake_reader import load_intake

    try:
        intake = load_intake(repo, task_id)[0]
    except TaskfsError:
        return None, []
    return intake.discovered_from, [e.record.text or "" for e in intake.requests()]


def _opening_signer(repo: Repository, actor: str) -> OpeningSigner | None:
    """The signer of `actor`'s openings, when its private key is on this machine. The
    messages' modules are loaded only then: most submitters sign nothing, and `new` is a
    command agents run on every turn."""
    if not keys.private_path("agent", actor).exists():
        return None
    from taskfs.api.messages.openings import OpeningSigner

    return OpeningSigner(repo, actor)


def _actor(agent: str | None, envelopes: Sequence[Envelope], sources: Sequence[Source]) -> str:
    """Who submits: the acting agent, else the envelopes' sender, else `anonymous`."""
    senders = {e.sender for e in envelopes if e.sender}
    if agent is not None:
        for envelope, source in zip(envelopes, sources, strict=False):
            if envelope.sender and envelope.sender != agent:
                raise fail(
                    "agent_not_allowed",
                    agent=agent,
                    action="submit",
                    action_text=f"submit {source.label}",
                    reason=f"the envelope says it is from {envelope.sender!r}",
                )
        return agent
    if len(senders) == 1:
        return senders.pop()
    return "anonymous"


def _assign_ids(
    repo: Repository, parsed: Sequence[tuple[Source, Envelope]], actor: str
) -> list[Envelope]:
    """Each envelope with its id: its own, or a fresh one; every id the rule of `ids.taken`
    refuses (a task's, another's request's, an archived task's) named at once."""
    from taskfs.store.index import summaries

    batch: list[Envelope] = []
    seen: dict[str, str] = {}
    problems: list[Problem] = []
    ledger = summaries(repo)
    for source, envelope in parsed:
        task_id = envelope.id or ids.fresh_id(repo, seen, ledger=ledger)
        if task_id in seen:
            problems.append(_at(problem("task_exists", field="id", id=task_id), source.label))
        seen.setdefault(task_id, source.label)
        batch.append(envelope if envelope.id else envelope.with_id(task_id))
    chosen = [envelope.id for _source, envelope in parsed if envelope.id]
    for task_id, found in ids.taken(repo, chosen, actor, ledger=ledger).items():
        problems.append(_at(found, seen[task_id]))
    if problems:
        raise TaskfsError(problems)
    return batch


def _new_message(task_ids: Sequence[str], agent: str, extra: Sequence[str] = ()) -> str:
    subject = (
        f"taskfs: {task_ids[0]} submitted by {agent}"
        if len(task_ids) == 1
        else f"taskfs: submit {len(task_ids)} tasks by {agent}"
    )
    trailers = "\n".join([*(f"Taskfs-Task: {task_id}" for task_id in task_ids), *extra])
    return f"{subject}\n\n{trailers}\nTaskfs-Transition: -> submitted\nTaskfs-Agent: {agent}\n"


def envelope_bytes(repo: Repository, envelope: Envelope) -> bytes:
    return (
        _schema_header(repo.root, repo.tasks_dir) + yamlio.dump(envelope.to_document())
    ).encode()


@functools.lru_cache(maxsize=8)
def _schema_header(root: Path, tasks_dir: Path) -> str:
    """The line that points an editor at the envelope schema from a task's folder (the same
    for every task of a checkout: a bulk `new` writes it a thousand times)."""
    schema = os.path.relpath(root / ENVELOPE_SCHEMA, tasks_dir / "x")
    return f"# yaml-language-server: $schema={PurePosixPath(schema)}\n"
