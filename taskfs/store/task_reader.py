"""One task read from its files into values: its envelope, its status chain, and what is malformed.

It reads through a `Repository`: the working tree, or a commit's tree when that is a
`taskfs.store.commit_view.CommitView`; HEAD's view is `taskfs.store.head_ledger`, every task at
once `taskfs.store.all_tasks`.

A file that is not a well-formed taskfs file is never silently skipped: reading returns it as
a `file_invalid` problem beside what could be read, and writers refuse to build on a task
whose ledger has such a file (it has to be repaired first, e.g. with `git checkout`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import ValidationError

from taskfs.core import layout, yamlio
from taskfs.core.chain import Chain, Link, resolve
from taskfs.core.envelope import Envelope, validate_envelope
from taskfs.core.layout import (
    AMENDMENTS,
    ENVELOPE,
    EVIDENCE,
    INTAKE,
    STAMPED_NAME_RE,
    STATUS,
    STATUS_NAME_RE,
)
from taskfs.core.lifecycle import State
from taskfs.core.records import StatusRecord
from taskfs.errors import Problem, TaskfsError, fail, problem
from taskfs.store.repository import Repository

if TYPE_CHECKING:  # evidence is read only where it is shown: loading a task does not need it
    from taskfs.core.amendments import Entry as Amendment
    from taskfs.core.amendments import Version
    from taskfs.core.evidence import EvidenceFile, RunnerTrust
    from taskfs.store.key_history import KeyOf


class Task(NamedTuple):
    id: str
    envelope: Envelope
    chain: Chain
    problems: tuple[Problem, ...] = ()
    # Read only where it is shown (show, log): listings never open evidence files.
    evidence: tuple[EvidenceFile, ...] | None = None
    # Its amendments (`taskfs.core.amendments`), when it has any: the version in force (whose
    # envelope `envelope` is), the pending ones, and every readable amendment file.
    version: Version | None = None
    amendments: tuple[Amendment, ...] = ()

    @property
    def holder(self) -> str | None:
        return self.chain.holder

    @property
    def length(self) -> int:
        return len(self.chain.links)

    @property
    def state(self) -> State:
        return self.chain.state or "submitted"

    @property
    def rank(self) -> str:
        """Its place among tasks to claim: the most urgent first, then the oldest."""
        from taskfs.core.shown import rank

        head = self.chain.head
        return rank(self.envelope.priority, head.record.at if head else None, self.id)


def read_yaml(repo: Repository, rel: str) -> Any:
    """The value a ledger file holds; `file_invalid` naming the file when it is not YAML."""
    try:
        data = repo.read_bytes(rel)
    except OSError as exc:
        raise fail("file_invalid", path=rel, reason=exc.strerror or str(exc)) from None
    try:
        return yamlio.load(data)
    except yamlio.YamlError as exc:
        raise fail("file_invalid", path=rel, reason=exc.reason) from None


def load_envelope(repo: Repository, task_id: str) -> Envelope:
    """The contract in force: the envelope as submitted, or the amendment in force."""
    envelope = submitted_envelope(repo, task_id)
    if not repo.list_dir(task_id, AMENDMENTS):
        return envelope
    chain, _problems = load_chain(repo, task_id)
    return amended(repo, task_id, envelope, chain)[0]


def submitted_envelope(repo: Repository, task_id: str) -> Envelope:
    """The envelope as submitted (`envelope.yaml`), before any amendment."""
    if not repo.has_task(task_id):
        requests = repo.list_dir(task_id, INTAKE) if layout.is_task_id(task_id) else []
        if requests:
            # A request that is not a task yet (contract section 12): say so, not "no task".
            # Its first file names the requester (read for the message only: `validate`
            # and `taskfs.store.intake_reader` check it).
            try:
                opening = read_yaml(repo, repo.task_rel(task_id, INTAKE, requests[0]))
            except TaskfsError:
                opening = None
            requester = opening.get("by") if isinstance(opening, dict) else None
            raise fail("intake_open", id=task_id, requester=str(requester or "?"))
        raise fail("task_not_found", id=task_id)
    rel = repo.task_rel(task_id, ENVELOPE)
    envelope, problems = validate_envelope(read_yaml(repo, rel))
    if envelope is None:
        reasons = "; ".join(f"{p.code}: {p.english}" for p in problems)
        raise fail("file_invalid", path=rel, reason=reasons)
    if envelope.id not in (None, task_id):
        raise fail(
            "file_invalid", path=rel, reason=f"its id {envelope.id!r} is not its folder's name"
        )
    # An envelope dropped in place may leave its id out: the folder's name is its id.
    return envelope if envelope.id else envelope.with_id(task_id)


def load_chain(repo: Repository, task_id: str) -> tuple[Chain, list[Problem]]:
    """The task's resolved history, and the status files that could not be read."""
    links: list[Link] = []
    problems: list[Problem] = []
    for name in repo.list_dir(task_id, STATUS):
        rel = repo.task_rel(task_id, STATUS, name)
        try:
            links.append(Link(name, _status_record(repo, rel, name, task_id)))
        except TaskfsError as exc:
            problems += exc.problems
    chain = resolve(task_id, links)
    return chain, problems + [_with_full_path(repo, task_id, p) for p in chain.problems]


def _with_full_path(repo: Repository, task_id: str, found: Problem) -> Problem:
    name = str(found.data.get("path", ""))
    full = repo.task_rel(task_id, STATUS, name)
    message, english = (
        (found.message.replace(name, full, 1), found.english.replace(name, full, 1))
        if name
        else (found.message, found.english)
    )
    return replace(found, message=message, english=english, data={**found.data, "path": full})


def _status_record(repo: Repository, rel: str, name: str, task_id: str) -> StatusRecord:
    if not STATUS_NAME_RE.fullmatch(name):
        raise fail("file_invalid", path=rel, reason="its name is not <seq>-<state>-<nonce>.yaml")
    try:
        record = StatusRecord.model_validate(read_yaml(repo, rel))
    except ValidationError as exc:
        raise fail("file_invalid", path=rel, reason=first_error(exc)) from None
    if record.task != task_id:
        raise fail("file_invalid", path=rel, reason=f"it records task {record.task!r}")
    return record


def load_evidence(
    repo: Repository, task_id: str, trust: RunnerTrust
) -> tuple[list[EvidenceFile], list[Problem]]:
    """The task's readable evidence files in name (time) order, and those that are not."""
    found: list[EvidenceFile] = []
    problems: list[Problem] = []
    for name in repo.entries(task_id, EVIDENCE):  # a writer's temporary files left out
        rel = repo.task_rel(task_id, EVIDENCE, name)
        try:
            found.append(_evidence_file(repo, rel, name, task_id, trust))
        except TaskfsError as exc:
            problems += exc.problems
    return found, problems


def load_evidence_file(
    repo: Repository, task_id: str, name: str, trust: RunnerTrust
) -> EvidenceFile:
    """One evidence file of the task, read whole; `TaskfsError` when it is not readable."""
    return _evidence_file(repo, repo.task_rel(task_id, EVIDENCE, name), name, task_id, trust)


def _evidence_file(
    repo: Repository, rel: str, name: str, task_id: str, trust: RunnerTrust
) -> EvidenceFile:
    from taskfs.core.evidence import EvidenceFile, signature_state
    from taskfs.core.evidence_records import parse_evidence

    if not STAMPED_NAME_RE.fullmatch(name):
        raise fail("file_invalid", path=rel, reason="its name is not <stamp>-<nonce>.yaml")
    document = read_yaml(repo, rel)
    try:
        record = parse_evidence(document)
    except ValidationError as exc:
        raise fail("file_invalid", path=rel, reason=first_error(exc)) from None
    if record.task != task_id:
        raise fail("file_invalid", path=rel, reason=f"it records task {record.task!r}")
    state, why = signature_state(document, trust)
    return EvidenceFile(rel, document, record, state, why)


def first_error(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0]
    where = ".".join(str(p) for p in first["loc"]) or "file"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first['msg']}{more}"


def amended(
    repo: Repository,
    task_id: str,
    submitted: Envelope,
    chain: Chain,
    key_of: KeyOf | None = None,
) -> tuple[Envelope, Version | None, tuple[Amendment, ...], list[Problem]]:
    """The contract in force of a task submitted as `submitted` whose history is `chain`, the
    version it stands at, its readable amendment files, and those that are not readable."""
    from taskfs.core.amendments import standing

    entries, problems = load_amendments(repo, task_id, submitted)
    if not entries:
        return submitted, None, (), problems
    claim = _claim(chain)
    version = standing(
        entries,
        sender=submitted.sender,
        claimed=claim is not None,
        claimed_version=claim.record.amendment if claim is not None else None,
        holder=chain.holder,
        unsigned=unsigned_amendments(repo, task_id, entries, key_of),
    )
    if version.in_force is None:
        return submitted, version, tuple(entries), problems
    document = version.in_force.record.envelope or {}
    envelope, _found = validate_envelope(document)
    assert envelope is not None  # load_amendments keeps only valid envelopes
    return envelope.with_id(task_id), version, tuple(entries), problems


def unsigned_amendments(
    repo: Repository, task_id: str, entries: Sequence[Amendment], key_of: KeyOf | None = None
) -> set[str]:
    """The amendment files not signed as their writer's acts are: by an agent that had a key
    when the file was committed (`key_history.act_keys`, audit's rule), without its signature
    over them (`taskfs.core.act_signing`). They count for nothing."""
    if key_of is None:
        from taskfs.store.key_history import act_keys

        with act_keys(repo, [task_id]) as keys:
            return unsigned_amendments(repo, task_id, entries, keys)
    out: set[str] = set()
    for entry in entries:
        key = key_of(repo.task_rel(task_id, AMENDMENTS, entry.name), entry.record.by)
        if key is None:
            continue
        from taskfs.core import act_signing

        if not act_signing.verifies("amendment", entry.record.to_document(), key):
            out.add(entry.name)
    return out


def _claim(chain: Chain) -> Link | None:
    for before, after in zip(chain.links, chain.links[1:], strict=False):
        if before.record.state == "submitted" and after.record.state == "working":
            return after
    return None


def load_amendments(
    repo: Repository, task_id: str, submitted: Envelope
) -> tuple[list[Amendment], list[Problem]]:
    """The task's amendment files in name (time) order, and those that are not well-formed:
    a file that is not an amendment record, an amendment whose envelope is not valid, or one
    changing what no amendment may change (`core.amendments.FIXED`)."""
    from taskfs.core.amendments import AmendmentRecord, Entry, fixed_changes

    found: list[Amendment] = []
    problems: list[Problem] = []
    original = submitted.to_document()
    for name in repo.list_dir(task_id, AMENDMENTS):
        rel = repo.task_rel(task_id, AMENDMENTS, name)
        try:
            if not STAMPED_NAME_RE.fullmatch(name):
                raise fail("file_invalid", path=rel, reason="its name is not <stamp>-<nonce>.yaml")
            try:
                record = AmendmentRecord.model_validate(read_yaml(repo, rel))
            except ValidationError as exc:
                raise fail("file_invalid", path=rel, reason=first_error(exc)) from None
            if record.task != task_id:
                raise fail("file_invalid", path=rel, reason=f"it records task {record.task!r}")
            if record.kind == "amendment":
                envelope, wrong = validate_envelope({**(record.envelope or {}), "id": task_id})
                if envelope is None:
                    reasons = "; ".join(f"{p.code}: {p.english}" for p in wrong)
                    raise fail("file_invalid", path=rel, reason=reasons)
                fixed = fixed_changes(original, envelope.to_document(), claimed=False)
                if fixed:
                    reason = f"it changes {', '.join(fixed)}, which no amendment may change"
                    raise fail("file_invalid", path=rel, reason=reason)
            found.append(Entry(name, record))
        except TaskfsError as exc:
            problems += exc.problems
    return found, problems


def load_task(
    repo: Repository, task_id: str, *, strict: bool = False, key_of: KeyOf | None = None
) -> Task:
    """A task as its files say; `strict` refuses one whose ledger has malformed files.
    `key_of`: `key_history.act_keys`'s, when the caller reads many tasks."""
    envelope = submitted_envelope(repo, task_id)
    chain, problems = load_chain(repo, task_id)
    version = None
    entries: tuple[Amendment, ...] = ()
    if repo.list_dir(task_id, AMENDMENTS):
        envelope, version, entries, unreadable = amended(repo, task_id, envelope, chain, key_of)
        problems += unreadable
    if not chain.links:
        problems.append(
            problem(
                "chain_broken",
                id=task_id,
                path=repo.task_rel(task_id, STATUS),
                reason_text="it has no status file",
            )
        )
    if strict and problems:
        raise TaskfsError(problems)
    return Task(task_id, envelope, chain, tuple(problems), version=version, amendments=entries)
