"""The watcher's intake: envelope files dropped into the tasks folder become tasks.

A drop is a file `tasks/<anything>.yaml`, or a `tasks/<id>/envelope.yaml` that no status file
follows yet. Each is validated and submitted by the code `taskfs new` runs (`parse_source`,
the rules, `write_new_tasks`), with what a stream of files needs besides:

- One bad file never blocks the others: each drop is submitted or refused on its own, checked
  against the open tasks and the drops admitted before it; the admitted ones are committed
  together, one commit per sender (the envelope's `from`, else `anonymous`, as `new` records).
- A content is taken in once. Each commit names the drops it consumed, with the sha256 of their
  bytes, in a trailer `Taskfs-Intake: <id> sha256:<hex> <path>`; a drop whose bytes were taken
  in before (a file saved twice, or one a killed watcher committed but had not yet removed) is
  just removed. Git history is the record, so this holds across restarts.
- A consumed `tasks/<anything>.yaml` is removed: its task's envelope is now
  `tasks/<id>/envelope.yaml`. When git tracked it (it came with a pull), its removal is part of
  the submitting commit. An envelope dropped at `tasks/<id>/envelope.yaml` is committed as it
  is, and the folder's name is its id: one that names another id is refused (`task_id_mismatch`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from taskfs.api.tasks import ids, rules
from taskfs.api.tasks.submit import Source, parse_source, write_new_tasks
from taskfs.core import layout
from taskfs.core.envelope import Envelope
from taskfs.core.layout import ENVELOPE, STATUS
from taskfs.errors import Problem, TaskfsError, problem
from taskfs.store.index import summaries
from taskfs.store.repository import Repository, read_dropped
from taskfs.store.writer import Writer

if TYPE_CHECKING:
    from taskfs.readmodel.ledger import Ledger

TRAILER = "Taskfs-Intake"
ANONYMOUS = "anonymous"
# Who removes a dropped file whose content was already taken in, when git tracks that file.
WATCHER = "taskfs-watch"

Outcome = Literal["submitted", "already", "refused", "gone", "failed"]


@dataclass(frozen=True)
class Taken:
    """What became of one dropped file."""

    path: str
    outcome: Outcome
    sha256: str | None = None
    id: str | None = None
    commit: str | None = None
    problems: tuple[Problem, ...] = ()


class IntakeIndex:
    """The contents already taken in (sha256 -> task id), read from the intake trailers of
    HEAD's history; refreshed incrementally as HEAD moves (own commits, pulls, recoveries)."""

    def __init__(self) -> None:
        self._ids: dict[str, str] = {}
        self._head: str | None = None

    def refresh(self, repo: Repository) -> None:
        head = repo.git.head()
        if head == self._head:
            return
        since = self._head
        if head is None or (since is not None and not repo.git.is_ancestor(since, head)):
            since = None
        if since is None:
            self._ids.clear()
        for message in repo.git.messages(f"^{TRAILER}: ", since):
            for line in message.splitlines():
                parsed = parse_trailer(line)
                if parsed is not None:
                    self._ids[parsed[1]] = parsed[0]
        self._head = head

    def get(self, sha256: str) -> str | None:
        return self._ids.get(sha256)


def trailer(task_id: str, sha256: str, path: str) -> str:
    return f"{TRAILER}: {task_id} sha256:{sha256} {path}"


def parse_trailer(line: str) -> tuple[str, str, str] | None:
    """(task id, sha256, path) of an intake trailer line, None for any other line."""
    if not line.startswith(f"{TRAILER}: "):
        return None
    parts = line[len(TRAILER) + 2 :].split(" ", 2)
    if len(parts) != 3 or not parts[1].startswith("sha256:"):
        return None
    return parts[0], parts[1].removeprefix("sha256:"), parts[2]


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def in_place_id(repo: Repository, rel: str) -> str | None:
    """The folder name when `rel` is `tasks/<folder>/envelope.yaml`, else None."""
    prefix = repo.tasks_rel + "/"
    if not rel.startswith(prefix):
        return None
    parts = rel[len(prefix) :].split("/")
    return parts[0] if len(parts) == 2 and parts[1] == ENVELOPE else None


@dataclass
class _Batch:
    """The drops of one call, as they are decided under the lock."""

    repo: Repository
    index: IntakeIndex
    ledger: Ledger
    admission: rules.Admission
    results: dict[str, Taken] = field(default_factory=dict)
    admitted: dict[str, list[tuple[str, Envelope, str]]] = field(default_factory=dict)
    in_place: set[str] = field(default_factory=set)
    given_ids: set[str] = field(default_factory=set)
    # sha256 of each admitted drop -> the other drops of this batch with the same bytes
    twins: dict[str, list[str]] = field(default_factory=dict)
    repeated: list[str] = field(default_factory=list)


def take_in(repo: Repository, paths: Sequence[str], index: IntakeIndex) -> list[Taken]:
    """Submit or refuse each dropped file (repository-relative paths), in one hold of the lock.

    Files are read under the lock, so what is judged is what is committed. The answer has one
    `Taken` per path, in the order given.
    """
    with repo.writing() as writer:
        index.refresh(repo)
        ledger = summaries(repo)
        batch = _Batch(repo, index, ledger, rules.Admission(repo, ledger))
        for rel in sorted(paths):
            batch.results[rel] = _decide(batch, rel)
        for actor, admitted in batch.admitted.items():
            _commit(batch, writer, actor, admitted)
        _clear_repeated(batch, writer)
    return [batch.results[rel] for rel in paths]


def _decide(batch: _Batch, rel: str) -> Taken:
    repo = batch.repo
    folder = in_place_id(repo, rel)
    if folder is not None and repo.list_dir(folder, STATUS):
        return Taken(rel, "already", id=folder)
    try:
        data = read_dropped(repo.root, rel)
    except TaskfsError as exc:
        return Taken(rel, "refused", problems=_tagged(exc.problems, rel))
    if data is None:
        return Taken(rel, "gone")
    sha = digest(data)
    known = batch.index.get(sha)
    if folder is None and known is not None:
        batch.repeated.append(rel)
        return Taken(rel, "already", sha, id=known)
    if folder is None and sha in batch.twins:
        # Decided once its twin's commit is made (or not).
        batch.twins[sha].append(rel)
        return Taken(rel, "failed", sha)
    envelope, problems = parse_source(Source(rel, data))
    if envelope is None:
        return Taken(rel, "refused", sha, problems=tuple(problems))
    envelope, problems = _with_id(batch, rel, envelope, folder)
    if envelope is None:
        return Taken(rel, "refused", sha, problems=_tagged(problems, rel))
    assert envelope.id is not None
    problems = batch.admission.problems(envelope)
    if problems:
        return Taken(rel, "refused", sha, envelope.id, problems=_tagged(problems, rel))
    batch.admission.admit(envelope)
    batch.given_ids.add(envelope.id)
    batch.twins[sha] = []
    if folder is not None:
        batch.in_place.add(envelope.id)
    actor = envelope.sender or ANONYMOUS
    batch.admitted.setdefault(actor, []).append((rel, envelope, sha))
    return Taken(rel, "submitted", sha, envelope.id)


def _with_id(
    batch: _Batch, rel: str, envelope: Envelope, folder: str | None
) -> tuple[Envelope | None, list[Problem]]:
    """The envelope with its task's id: the folder's for one dropped in place, else its own or
    a fresh one; or why it cannot have it."""
    repo = batch.repo
    if folder is not None:
        if not layout.is_task_id(folder):
            return None, [problem("invalid_task_id", field="id", value=folder)]
        if envelope.id not in (None, folder):
            return None, [
                problem("task_id_mismatch", field="id", path=rel, folder=folder, id=envelope.id)
            ]
        if folder in batch.given_ids:
            return None, [problem("task_exists", field="id", id=folder)]
        # The folder is the drop's own; an archived task's id stays taken all the same.
        found = ids.taken(repo, [folder], ledger=batch.ledger, placed=[folder])
        if found:
            return None, list(found.values())
        return envelope if envelope.id else envelope.with_id(folder), []
    if envelope.id is None:
        return envelope.with_id(ids.fresh_id(repo, batch.given_ids, ledger=batch.ledger)), []
    if envelope.id in batch.given_ids:
        return None, [problem("task_exists", field="id", id=envelope.id)]
    found = ids.taken(repo, [envelope.id], ledger=batch.ledger)
    if found:
        return None, list(found.values())
    return envelope, []


def _commit(
    batch: _Batch, writer: Writer, actor: str, admitted: list[tuple[str, Envelope, str]]
) -> None:
    repo = batch.repo
    trailers = []
    for rel, envelope, sha in admitted:
        assert envelope.id is not None
        trailers.append(trailer(envelope.id, sha, rel))
        if envelope.id not in batch.in_place:
            writer.remove(rel)
    envelopes = [envelope for _, envelope, _ in admitted]
    try:
        commit = write_new_tasks(
            repo, writer, envelopes, actor, in_place=batch.in_place, trailers=trailers
        )
    except TaskfsError as exc:
        for rel, _envelope, sha in admitted:
            for failed in [rel, *batch.twins[sha]]:
                batch.results[failed] = Taken(failed, "failed", sha, problems=exc.problems)
        return
    for rel, envelope, sha in admitted:
        batch.results[rel] = Taken(rel, "submitted", sha, envelope.id, commit)
        for twin in batch.twins[sha]:
            batch.results[twin] = Taken(twin, "already", sha, envelope.id, commit)
            batch.repeated.append(twin)


def _clear_repeated(batch: _Batch, writer: Writer) -> None:
    """Remove the dropped files whose content was already taken in; a tracked one in a
    commit of its own, so that the working tree stays clean."""
    repo = batch.repo
    tracked = repo.git.tracked(batch.repeated)
    for rel in batch.repeated:
        if rel in tracked:
            writer.remove(rel)
        else:
            (repo.root / rel).unlink(missing_ok=True)
    if tracked:
        shown = ", ".join(sorted(tracked))
        message = (
            f"taskfs: remove dropped files already taken in\n\n{shown}\n\nTaskfs-Agent: {WATCHER}\n"
        )
        writer.commit(message, WATCHER)


def _tagged(problems: Sequence[Problem], rel: str) -> tuple[Problem, ...]:
    return tuple(replace(p, data={**p.data, "source": rel}) for p in problems)
