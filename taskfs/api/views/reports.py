"""What people look at: a task with everything around it, its timeline, the task graph.

`show --format markdown`, `log`, `board` and `graph` read the ledger through here; the
renderers in `taskfs.report` turn these values into markdown, terminal tables, HTML and graphs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from taskfs import i18n
from taskfs.api.views import entries
from taskfs.api.views.commits import CodeCommit
from taskfs.api.views.entries import EvidenceRow, MessageRow
from taskfs.api.views.lineage import Lineage, Link
from taskfs.core.evidence import RunnerTrust
from taskfs.core.forks import losses
from taskfs.core.layout import STATUS_NAME_RE
from taskfs.core.records import Artifact
from taskfs.store.all_tasks import load_all
from taskfs.store.archive_records import archived_tasks
from taskfs.store.index import summaries
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task, load_task


@dataclass(frozen=True)
class TimelineRow:
    at: str
    kind: str  # transition, evidence or message
    actor: str
    what: str  # the state entered, the verdict, the message's status
    detail: str = ""
    superseded: bool = False
    superseded_by: str = ""  # for a superseded transition: the winner, "<state> by <agent>"
    path: str = ""  # the evidence or message file
    output: Mapping[str, str] | None = None  # a failing run's last lines (`checks.output`)

    def to_json(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "kind": self.kind,
            "actor": self.actor,
            "what": self.what,
            "detail": self.detail,
            **({"superseded": True} if self.superseded else {}),
            **({"supersededBy": self.superseded_by} if self.superseded_by else {}),
            **({"path": self.path} if self.path else {}),
            **({"output": dict(self.output)} if self.output else {}),
        }


@dataclass(frozen=True)
class TaskReport:
    """A task and everything a reviewer wants beside it."""

    task: Task
    evidence: tuple[EvidenceRow, ...] = ()
    messages: tuple[MessageRow, ...] = ()
    dependencies: tuple[tuple[str, str | None], ...] = ()  # (id, its state; None: no such task)
    children: tuple[str, ...] = ()
    requests: tuple[TimelineRow, ...] = ()  # the intake it came from (contract section 12)
    replaces: tuple[Link, ...] = ()  # the tasks whose work it took over (reassign, retry)
    replaced_by: tuple[Link, ...] = ()  # the tasks that took its work over
    # The commits that touched its owned files since it was submitted (`show` only: the
    # board and the listings do without).
    code_commits: tuple[CodeCommit, ...] = ()
    # The request it was born from (`views.intake.origin`), when it was one first.
    origin: Mapping[str, Any] | None = None
    # Its amendments and their acceptances (`views.amendments.rows`), oldest first.
    amended: tuple[Mapping[str, Any], ...] = ()

    @property
    def id(self) -> str:
        return self.task.id

    @property
    def artifacts(self) -> tuple[Artifact, ...]:
        return tuple(a for link in self.task.chain.links for a in link.record.artifacts or ())

    @property
    def latest_evidence(self) -> EvidenceRow | None:
        return self.evidence[-1] if self.evidence else None

    @property
    def failing(self) -> bool:
        """Whether the latest acceptance run failed (what a board shows in red)."""
        latest = self.latest_evidence
        return latest is not None and latest.verdict != "pass"

    def timeline(self) -> list[TimelineRow]:
        return timeline(self.task, self.evidence, self.messages, self.requests, self.amended)


@dataclass(frozen=True)
class IntakeReport:
    """A request that is not a task (open or canceled): its intake files and messages."""

    id: str
    state: str
    rows: tuple[TimelineRow, ...]

    def timeline(self) -> list[TimelineRow]:
        return _ordered(list(self.rows))


def intake_rows(repo: Repository, task_id: str) -> tuple[TimelineRow, ...]:
    """The intake files of a folder as timeline rows (none when it has none)."""
    from taskfs.core.layout import INTAKE
    from taskfs.errors import TaskfsError
    from taskfs.store.intake_reader import load_intake

    if not repo.list_dir(task_id, INTAKE):
        return ()
    try:
        intake, _unreadable = load_intake(repo, task_id)
    except TaskfsError:
        return ()
    rows = []
    for entry in intake.entries:
        record = entry.record
        detail = " ".join((record.reason or record.text or "").split())  # whole: its words
        path = repo.task_rel(task_id, INTAKE, entry.name)
        what = "accepted" if record.accepts else record.kind  # the requester took a proposal
        rows.append(TimelineRow(record.at, "intake", record.by, what, detail, path=path))
    return tuple(rows)


def intake_report(repo: Repository, task_id: str) -> IntakeReport:
    """`log` of a request that is not a task: its requests, proposals and messages."""
    from taskfs.store.intake_reader import load_intake

    intake, _unreadable = load_intake(repo, task_id)
    rows = list(intake_rows(repo, task_id))
    for message in entries.task_messages(repo, task_id):
        who = f"{message.sender} → {message.to}" if message.to else message.sender
        rows.append(
            TimelineRow(
                message.at,
                "message",
                who,
                message.status or "message",
                message.text,
                path=message.path,
            )
        )
    return IntakeReport(task_id, intake.state, tuple(rows))


def task_report(
    repo: Repository, task_id: str, *, neighbours: bool = True, commits: bool = False
) -> TaskReport:
    """A task with its evidence and messages, and (`neighbours`) the states of its
    dependencies, the tasks delegated from it and its lineage, which takes reading the whole
    ledger; `commits` adds the code commits that touched its owned files, and says how each
    acceptance run's signature stands. An archived task is read as the archive's commit holds
    it, without its neighbours."""
    from taskfs.api.tasks.queries import home

    where = home(repo, task_id)  # an archived task: as the archive's commit holds it
    task = load_task(where, task_id)
    if not neighbours or where is not repo:
        return TaskReport(
            task,
            tuple(entries.task_evidence(where, task.id)),
            tuple(entries.task_messages(where, task.id)),
            requests=intake_rows(where, task.id),
            origin=origin_of(where, task.id),
            amended=amended_of(where, task),
        )
    tasks = load_all(repo)
    tasks.setdefault(task_id, task)
    report = _report(repo, task, tasks, lineage_of(tasks), trust=_trust(repo))
    if not commits:
        return report
    from taskfs.api.views.commits import since_submitted

    found = since_submitted(repo, task.id, task.envelope.files_and_interfaces)
    return replace(report, code_commits=found)


def all_reports(repo: Repository, *, committed: bool = False) -> list[TaskReport]:
    """Every task's report; `committed`: every task as HEAD holds it (`committed_tasks`), so
    that what is drawn of them is what a commit held, as what `ready` says of them is."""
    tasks, homes = committed_tasks(repo) if committed else (load_all(repo), {})
    lineage = lineage_of(tasks)
    trust = _trust(repo)
    return [
        _report(homes.get(task.id, repo), task, tasks, lineage, trust=trust)
        for task in tasks.values()
    ]


def committed_tasks(repo: Repository) -> tuple[dict[str, Task], dict[str, Repository]]:
    """Every readable task as HEAD holds it, in the order `load_all` reads them: each task
    whose folder holds a ledger file no commit holds (`head_ledger.loose`: a writer's files
    before its commit, a file written by hand) read from HEAD's objects instead (left out when
    HEAD holds none), with where each such task's files are read (by id). The working tree is
    read first and HEAD asked after, so that a commit landing meanwhile leaves each task read
    at that commit or later, never earlier than what is read of HEAD next (`ready`)."""
    from taskfs.errors import TaskfsError
    from taskfs.store import head_ledger

    tasks = load_all(repo)
    homes: dict[str, Repository] = {}
    for task_id in head_ledger.loose(repo):
        found = head_ledger.committed_folder(repo, task_id)
        try:
            task = load_task(found, task_id) if found is not None else None
        except TaskfsError:
            task = None
        if found is None or task is None:
            tasks.pop(task_id, None)  # HEAD holds no task there, or none it can read
            continue
        tasks[task_id] = task
        homes[task_id] = found
    return tasks, homes


def _trust(repo: Repository) -> RunnerTrust:
    from taskfs.api.evidence.gate import trust_root

    return trust_root(repo)


def lineage_of(tasks: Mapping[str, Task]) -> Lineage:
    return Lineage({task_id: task.envelope for task_id, task in tasks.items()})


def _report(
    repo: Repository,
    task: Task,
    tasks: Mapping[str, Task],
    lineage: Lineage,
    *,
    trust: RunnerTrust | None = None,
) -> TaskReport:
    deps = tuple(
        (dep, tasks[dep].state if dep in tasks else None) for dep in task.envelope.depends_on
    )
    children = tuple(sorted(t.id for t in tasks.values() if t.envelope.parent == task.id))
    return TaskReport(
        task,
        tuple(entries.task_evidence(repo, task.id, trust)),
        tuple(entries.task_messages(repo, task.id)),
        deps,
        children,
        replaces=lineage.replaces(task.id),
        replaced_by=lineage.replaced_by(task.id),
        origin=origin_of(repo, task.id),
        amended=amended_of(repo, task),
    )


def amended_of(repo: Repository, task: Task) -> tuple[Mapping[str, Any], ...]:
    from taskfs.api.tasks.queries import amendments

    return tuple(amendments(repo, task))


def origin_of(repo: Repository, task_id: str) -> dict[str, Any] | None:
    """The request `task_id` was born from, as `show` says it (None: it came whole)."""
    from taskfs.api.intake.linked import origin
    from taskfs.api.views.intake import origin as said

    intake = origin(repo, task_id)
    return said(intake) if intake is not None else None


def timeline(
    task: Task,
    evidence: Iterable[EvidenceRow] = (),
    messages: Iterable[MessageRow] = (),
    requests: Iterable[TimelineRow] = (),
    amended: Iterable[Mapping[str, Any]] = (),
) -> list[TimelineRow]:
    """The requests it came from, transitions, amendments, acceptance runs and messages in the
    order they happened."""
    rows: list[TimelineRow] = list(requests)
    for row in amended:
        rows.append(_amendment_row(row))
    messages = list(messages)
    by_id = {m.msg_id: m for m in messages if m.msg_id}
    folded: set[str] = set()
    for link in task.chain.links:
        record = link.record
        detail = record.reason or ""
        made_by = by_id.get(record.message or "")
        if made_by is not None:
            # One step, not two: the message and the transition it made (a question, its
            # answer, a failure) are shown as the transition, saying the message.
            folded.add(made_by.msg_id)
            said = f"{made_by.status or 'message'}: {made_by.text}"
            detail = said if not detail or detail == made_by.text else f"{detail} ({said})"
        rows.append(TimelineRow(record.at, "transition", record.by, record.state, detail))
    for loss in losses(task.chain):
        record, winner = loss.link.record, loss.winner
        won = f"{winner.record.state} by {winner.record.by}" if winner else ""
        rows.append(
            TimelineRow(
                record.at, "transition", record.by, record.state, record.reason or "", True, won
            )
        )
    for run in evidence:
        exit_text = i18n.say("exit {code}", code=run.exit_code) if run.exit_code is not None else ""
        # Who ran it, as show says; how its verdict was reached (a script's exit, a judge's
        # word) beside what it ran.
        how = f"{run.source}: {run.command}" if run.source and run.command else run.command
        detail = " · ".join(x for x in (how, exit_text, run.problem) if x)
        rows.append(
            TimelineRow(
                run.at,
                "evidence",
                run.by or run.source or "check",
                run.verdict,
                detail,
                path=run.path,
                output=run.output,
            )
        )
    for message in messages:
        if message.msg_id in folded:
            continue
        who = f"{message.sender} → {message.to}" if message.to else message.sender
        what = message.status or "message"
        rows.append(TimelineRow(message.at, "message", who, what, message.text, path=message.path))
    return _ordered(rows)


def _amendment_row(row: Mapping[str, Any]) -> TimelineRow:
    """An amendment in the timeline: `amended` (in force at once, or accepted since),
    `proposed` (after a claim: waiting for the holder), or `accepted` by the holder."""
    path = row["path"]
    if row["kind"] == "accepted":
        return TimelineRow(row["at"], "amendment", row["by"], "accepted", row["accepts"], path=path)
    what = "proposed" if row["status"] == "pending" else "amended"
    changed = i18n.say("changed: {keys}", keys=", ".join(row.get("changed", ())) or "-")
    detail = f"{row['reason']} ({changed})" if row.get("reason") else changed
    return TimelineRow(row["at"], "amendment", row["by"], what, detail, path=path)


def _ordered(rows: list[TimelineRow]) -> list[TimelineRow]:
    order = {id(row): i for i, row in enumerate(rows)}
    return sorted(rows, key=lambda row: (_moment(row.at), order[id(row)]))


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return datetime.max
    if moment.tzinfo is None:
        return moment
    return moment.astimezone(timezone.utc).replace(tzinfo=None)


def state_before(prev: str | None) -> str | None:
    """The state a transition left, read from its `prev` file's name."""
    if prev is None:
        return None
    match = STATUS_NAME_RE.fullmatch(prev)
    return match.group("state") if match else None


# -- the graph ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    id: str
    state: str | None  # None: named by a dependsOn or parent but not (yet) in the ledger
    context: str = ""
    objective: str = ""
    archived: bool = False  # taken out of the working tree by `taskfs archive`; history keeps it


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    # dependsOn (source needs target), parent (source delegated target), or how the source's
    # work was handed on to the target (reassigned, retried: `taskfs.api.views.lineage`)
    kind: str


@dataclass(frozen=True)
class TaskGraph:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]


def task_graph(repo: Repository) -> TaskGraph:
    tasks = load_all(repo)
    nodes = {
        t.id: Node(t.id, t.state, t.envelope.context_id, t.envelope.objective)
        for t in tasks.values()
    }
    edges: list[Edge] = []
    for task in tasks.values():
        for dep in task.envelope.depends_on:
            edges.append(Edge(task.id, dep, "dependsOn"))
            nodes.setdefault(dep, Node(dep, None))
        if task.envelope.parent:
            edges.append(Edge(task.envelope.parent, task.id, "parent"))
            nodes.setdefault(task.envelope.parent, Node(task.envelope.parent, None))
    edges += [Edge(link.source, link.target, link.kind) for link in lineage_of(tasks).links()]
    # Follow-ups found while working on a task (`taskfs discover`): requests (drawn in the
    # state `intake`) and the tasks they became.
    ledger = summaries(repo)
    for source, found in ledger.all_discovered().items():
        for follow_up in ledger.many(found):
            if follow_up.id not in nodes:
                env = follow_up.envelope
                nodes[follow_up.id] = Node(
                    follow_up.id, follow_up.state, env.context_id, archived=follow_up.archived
                )
            nodes.setdefault(source, Node(source, None))
            edges.append(Edge(source, follow_up.id, "discovered"))
    # A task named here but archived is drawn in its final state, read as `show` reads it.
    unknown = [node.id for node in nodes.values() if node.state is None]
    for task_id, task in archived_tasks(repo, unknown).items():
        contract = task.envelope
        nodes[task_id] = Node(
            task_id, task.state, contract.context_id, contract.objective, archived=True
        )
    return TaskGraph(tuple(sorted(nodes.values(), key=lambda n: n.id)), tuple(edges))
