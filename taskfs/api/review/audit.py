"""`audit`: the ledger checked against git history.

It names every ledger file edited or deleted after its commit (in history or in the working
tree), every ledger file that no commit holds, every status file that is not part of its
task's chain, every transition the table does not allow, every file that is not a
well-formed taskfs file, every completion that rests on no valid passing check, evidence
whose signature does not verify (or that is unsigned where runner keys are trusted), and
every runner key changed after its commit, and every completion that rests on a check run
while the task's owned files were not committed (`work_uncommitted`). A transition that lost
a fork is superseded, not a violation. Authority (`taskfs.api.review.authority`): every transition
its `by` could not make, did not author, or did not sign where it had a key; every sibling written
after the transition it forks; every message whose signature fails under the key of its
commit; every agent key changed. Notes, which leave the audit clean, name every runner key
added and say when evidence is unsigned because no runner key is trusted.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from taskfs import i18n
from taskfs.api.evidence import gate as evidence_gate
from taskfs.api.review import (
    amendment_audit,
    archive_audit,
    authority,
    history_audit,
    intake_audit,
    read_audit,
)
from taskfs.api.tasks import queries
from taskfs.core import ledger_kinds
from taskfs.core.evidence import EvidenceFile, RunnerTrust
from taskfs.core.evidence_records import CheckEvidence
from taskfs.core.layout import KEYS_DIR, MESSAGES, READS, STATUS, TASKFS_DIR
from taskfs.errors import Problem, problem
from taskfs.store import archive_records, key_history
from taskfs.store.all_tasks import load_all
from taskfs.store.git.session import Session, open_session
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task, load_evidence


@dataclass(frozen=True)
class Finding:
    """One thing audit names: its code, the file, what is wrong, and the rule of the authority
    table it broke (`taskfs.core.ledger_kinds`), with the problem's data (the commit, who
    wrote it, the task) for machines."""

    code: str
    path: str
    message: str
    rule: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "path": self.path, "message": self.message}
        if self.rule is not None:
            out["rule"] = self.rule
        for key, value in self.data.items():
            out.setdefault(key, value)
        return out


@dataclass(frozen=True)
class Audit:
    findings: tuple[Finding, ...]
    # Facts worth knowing that are not faults: runner keys added, evidence left unsigned.
    notes: tuple[Finding, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.findings


def audit(repo: Repository, session: Session | None = None) -> Audit:
    """Everything wrong in the ledger; `session` when the caller has GitPython open already."""
    if session is None:
        with open_session(repo.git) as opened:
            return audit(repo, opened)
    findings, notes = _history(repo)
    validation = queries.validate_ledger(repo)
    for report in validation.files:
        # A message's signature is checked below against the key of its commit, not today's.
        findings += [
            _finding(p, report.path) for p in report.problems if p.code != "signature_invalid"
        ]
    findings += [_finding(p, str(p.data.get("id", ""))) for p in validation.problems]
    trust = evidence_gate.trust_root(repo)
    tasks = load_all(repo)
    evidence_findings, evidence_notes = _evidence(repo, trust, tasks)
    findings += evidence_findings
    notes += evidence_notes
    notes += _runner_keys(repo, trust)
    agent_history = repo.git.path_history(key_history.AGENT_KEYS)
    standing = key_history.agent_keys(repo, agent_history, session, session.is_ancestor)
    findings += [_finding(p, str(p.data["path"])) for p in standing.findings]
    notes += [_finding(p, str(p.data["path"])) for p in standing.notes]
    findings += _authority(repo, session, agent_history, standing.ghosts, tasks)
    findings += _rewrites(repo)
    named = _named(repo, findings)
    return Audit(_ruled(_sorted(named), repo.tasks_rel), _ruled(_sorted(notes), repo.tasks_rel))


def _rewrites(repo: Repository) -> list[Finding]:
    """Remote histories rewritten under this clone (`history_rewritten`): ledger commits it has
    that a remote-tracking ref once held and holds no more. Sync refuses to adopt such a
    history; a plain `git pull` takes it, and what it overturned is named here."""
    from taskfs.api.sync.remote import rewritten

    out = []
    for ref in repo.git.tracked_refs():
        tip = repo.git.verify(ref)
        dropped = repo.git.dropped(ref, tip, repo.tasks_rel)
        if dropped and tip is not None:
            remote, _slash, branch = ref.removeprefix("refs/remotes/").partition("/")
            out.append(_finding(rewritten(remote, branch, tip, dropped, ""), ref))
    return out


def _authority(
    repo: Repository,
    session: Session,
    agent_history: list[tuple[str, str, str, str]],
    ghosts: dict[str, list[tuple[str, bytes]]],
    tasks: dict[str, Task],
) -> list[Finding]:
    """Transitions their `by` could not make or did not write, and messages or transitions
    whose signatures do not hold under the keys that stood when they were committed (read
    through the session's one `git cat-file`)."""
    found: list[Problem] = []
    context = authority.Context(
        repo,
        repo.git.file_additions([repo.tasks_rel]),
        key_history.keys_at(repo, session, session.is_ancestor, agent_history, ghosts),
        repo.config.require_signed_transitions,
        session.is_ancestor,
        tasks,
        lambda commit, path: session.read(f"{commit}:{path}") is not None,
    )
    for task in tasks.values():
        found += authority.transition_problems(context, task)
        if task.amendments:
            found += amendment_audit.amendment_problems(context, task)
        if repo.list_dir(task.id, MESSAGES):
            found += authority.message_problems(context, task.id)
        found += read_audit.read_problems(context, task.id)
    for name in _late_folders(repo):  # an archived task's messages that arrived after it
        found += authority.message_problems(context, name)
        found += read_audit.read_problems(context, name)
    found += intake_audit.intake_problems(context, repo.task_ids())
    return [_finding(p, str(p.data.get("path", ""))) for p in found]


def _late_folders(repo: Repository) -> list[str]:
    try:
        names = sorted(entry.name for entry in os.scandir(repo.tasks_dir) if entry.is_dir())
    except OSError:
        return []
    return [
        name
        for name in names
        if not repo.has_task(name)
        and (repo.list_dir(name, MESSAGES) or repo.list_dir(name, READS))
        and queries.late_folder(repo, name)
    ]


def _sorted(found: list[Finding]) -> tuple[Finding, ...]:
    unique = {(f.code, f.path, f.message): f for f in found}
    return tuple(sorted(unique.values(), key=lambda f: (f.path, f.code)))


def _evidence(
    repo: Repository, trust: RunnerTrust, tasks: dict[str, Task]
) -> tuple[list[Finding], list[Finding]]:
    """Evidence whose signature does not count, and completions that rest on no valid run."""
    findings: list[Finding] = []
    unsigned = 0
    for task in tasks.values():
        files, _unreadable = load_evidence(repo, task.id, trust)
        runs = [item for item in files if isinstance(item.record, CheckEvidence)]
        unsigned += sum(1 for item in runs if item.signature == "unsigned")
        findings += [_finding(p, str(p.data["path"])) for p in _signature_problems(runs, trust)]
        findings += _completions(repo, task, files, trust)
    notes = []
    if unsigned and not trust.required:
        why = i18n.say(
            " ({count} check files): this repository trusts no runner key, so completion takes "
            "evidence as written; `taskfs keys new --runner NAME` makes one",
            count=unsigned,
        )
        found = problem("evidence_unsigned", path=repo.tasks_rel, why_text=why)
        notes.append(_finding(found, repo.tasks_rel))
    return findings, notes


def _signature_problems(runs: list[EvidenceFile], trust: RunnerTrust) -> list[Problem]:
    out = []
    for item in runs:
        if item.signature == "unsigned" and trust.required:
            why = i18n.say(": this repository accepts only evidence signed by a trusted runner key")
            out.append(problem("evidence_unsigned", path=item.rel, why_text=why))
        elif item.signature == "invalid":
            why = f": {item.signature_why}"
            out.append(problem("evidence_signature_invalid", path=item.rel, why_text=why))
    return out


def _completions(
    repo: Repository, task: Task, files: list[EvidenceFile], trust: RunnerTrust
) -> list[Finding]:
    by_name = {item.name: item for item in files}
    command = task.envelope.acceptance_check.pass_fail_command
    out = []
    # A completion on a branch that lost a fork was still made: the live gate would have asked
    # it for evidence too.
    for link in (*task.chain.links, *task.chain.superseded):
        if link.record.state != "completed":
            continue
        rel = repo.task_rel(task.id, STATUS, link.name)
        why = evidence_gate.completion_flaw(link.record.evidence, by_name, command, trust)
        if why:
            found = problem("completion_requires_evidence", id=task.id, path=rel, why_text=why)
            out.append(_finding(found, rel))
        elif _dirty(link.record.evidence, by_name):
            why = f" ({link.record.evidence}): its owned files were not committed when it ran"
            out.append(_finding(problem("work_uncommitted", id=task.id, why_text=why), rel))
    return out


def _dirty(name: str | None, by_name: dict[str, EvidenceFile]) -> bool:
    """Whether a completion rests on a check run from a tree whose owned files were not
    committed (evidence recorded before taskfs recorded `workTree` is accepted)."""
    item = by_name.get(name) if name is not None else None
    record = item.record if item is not None else None
    return isinstance(record, CheckEvidence) and record.work_tree == "dirty"


def _runner_keys(repo: Repository, trust: RunnerTrust) -> list[Finding]:
    """Runner keys decide which evidence counts: note every one added (a change to one is the
    table's history pass's: `history_audit`)."""
    folder = f"{KEYS_DIR}/runner"
    notes: list[Finding] = []
    for commit, author, status, path in repo.git.path_history(folder):
        if status == "A":
            notes.append(_key_added(path, commit[:12], author, trust))
    for status, path in repo.git.worktree_changes(folder):
        if status == "??" or "A" in status:
            notes.append(_key_added(path, "the working tree (not committed)", "?", trust))
    return notes


def _key_added(path: str, commit: str, author: str, trust: RunnerTrust) -> Finding:
    name = path.rsplit("/", 1)[-1].removesuffix(".pub")
    if trust.source == "operator":
        held = name in trust.keys
        why = (
            i18n.say("; the operator's trust list holds it")
            if held
            else i18n.say(
                "; the operator's trust list does not hold it, so its evidence does not count"
            )
        )
    elif trust.source == "repository" and name in trust.keys:
        why = i18n.say(
            "; completion accepts the evidence it signs (anyone who can commit can add one)"
        )
    else:
        why = i18n.say("; it is not trusted (not in HEAD)")
    found = problem(
        "runner_key_added", name=name, path=path, commit=commit, author=author, why_text=why
    )
    return _finding(found, path)


def _history(repo: Repository) -> tuple[list[Finding], list[Finding]]:
    """What history and the working tree did to ledger files after their commit (by the
    table's rows: `history_audit`), and what is wrong with each archive."""
    archives = archive_audit.acts(repo)
    findings, notes = history_audit.changes(
        repo, lambda commit, path: archive_audit.archived_removal(repo, archives, commit, path)
    )
    found = [_finding(p, str(p.data["path"])) for p in findings]
    found += [_finding(p, str(p.data["path"])) for p in history_audit.worktree(repo)]
    found += [_finding(p, str(p.data["path"])) for p in archive_audit.problems(repo, archives)]
    _read, unreadable = archive_records.records(repo)
    found += [_finding(p, str(p.data["path"])) for p in unreadable]
    return found, [_finding(p, str(p.data["path"])) for p in notes]


# What a finding carries for machines besides its code, path and message: who, where, what.
_NAMED = ("id", "commit", "author", "by", "field", "said", "held", "state", "msg_id", "change")


def _finding(found: Problem, path: str) -> Finding:
    """A finding about `path` (the problem's own path, when it names one), with its data."""
    where = str(found.data.get("path", path))
    rule = found.data.get("rule")
    data = {k: found.data[k] for k in _NAMED if k in found.data}
    return Finding(found.code, where, found.message, str(rule) if rule else None, data)


def _named(repo: Repository, found: list[Finding]) -> list[Finding]:
    """Each finding about a committed file naming the commit that added it and who wrote that
    commit, where its problem did not say (a finding names the file, the commit, the writer and
    the rule it broke)."""
    if not any("commit" not in f.data for f in found):
        return found
    added = repo.git.file_additions([repo.tasks_rel, TASKFS_DIR])
    out = []
    for finding in found:
        author = added.get(finding.path) if "commit" not in finding.data else None
        if author is None:
            out.append(finding)
            continue
        who = {"commit": author.commit[:12], "author": f"{author.name} <{author.email}>"}
        out.append(replace(finding, data={**finding.data, **who}))
    return out


def _ruled(found: tuple[Finding, ...], tasks_rel: str) -> tuple[Finding, ...]:
    """Each finding naming the rule of the authority table it broke: its file's kind's."""
    return tuple(
        f if f.rule is not None else replace(f, rule=ledger_kinds.rule_of(f.path, tasks_rel))
        for f in found
    )
