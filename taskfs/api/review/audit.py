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

from dataclasses import dataclass

from taskfs import i18n
from taskfs.api.evidence import gate as evidence_gate
from taskfs.api.review import amendment_audit, archive_audit, authority, intake_audit
from taskfs.api.tasks import queries
from taskfs.core.evidence import EvidenceFile, RunnerTrust
from taskfs.core.evidence_records import CheckEvidence
from taskfs.core.layout import KEYS_DIR, MESSAGES, STATUS
from taskfs.errors import Problem, problem
from taskfs.store import archive_records, keys
from taskfs.store.all_tasks import load_all
from taskfs.store.git.session import Session, open_session
from taskfs.store.keypaths import REVOKED_DIR
from taskfs.store.keys import KeysAt
from taskfs.store.repository import Repository
from taskfs.store.task_reader import Task, load_evidence


@dataclass(frozen=True)
class Finding:
    code: str
    path: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "path": self.path, "message": self.message}


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
    findings: list[Finding] = []
    findings += _history(repo)
    findings += _worktree(repo)
    validation = queries.validate_ledger(repo)
    for report in validation.files:
        # A message's signature is checked below against the key of its commit, not today's.
        findings += [
            _finding(p, report.path) for p in report.problems if p.code != "signature_invalid"
        ]
    findings += [_finding(p, str(p.data.get("id", ""))) for p in validation.problems]
    trust = evidence_gate.trust_root(repo)
    tasks = load_all(repo)
    evidence_findings, notes = _evidence(repo, trust, tasks)
    findings += evidence_findings
    key_findings, key_notes = _runner_keys(repo, trust)
    findings += key_findings
    notes += key_notes
    agent_history = repo.git.path_history(f"{KEYS_DIR}/agent")
    key_findings, key_notes = _agent_keys(repo, agent_history, session)
    findings += key_findings
    notes += key_notes
    findings += _authority(repo, session, agent_history, tasks)
    findings += _rewrites(repo)
    return Audit(_sorted(findings), _sorted(notes))


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
    tasks: dict[str, Task],
) -> list[Finding]:
    """Transitions their `by` could not make or did not write, and messages or transitions
    whose signatures do not hold under the keys that stood when they were committed (read
    through the session's one `git cat-file`)."""
    names = {path.rsplit("/", 1)[-1].removesuffix(".pub") for *_rest, path in agent_history}
    names |= set(keys.public_keys(repo.root, "agent"))
    found: list[Problem] = []
    context = authority.Context(
        repo,
        repo.git.file_additions([repo.tasks_rel]),
        KeysAt(session, "agent", names),
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
    found += intake_audit.intake_problems(context, repo.task_ids())
    return [_finding(p, str(p.data.get("path", ""))) for p in found]


def _agent_keys(
    repo: Repository, history: list[tuple[str, str, str, str]], session: Session
) -> tuple[list[Finding], list[Finding]]:
    """Agent keys decide which messages and transitions verify: name every change, but note a
    key `keys remove` revoked (its record added by the commit that removed it, naming that very
    key). A revocation record edited or deleted is a key changed too."""
    findings: list[Finding] = []
    notes: list[Finding] = []
    records = repo.git.path_history(REVOKED_DIR)
    added = {(commit, path) for commit, _a, status, path in records if status == "A"}
    for commit, _author, status, path in history:
        note = _revocation(session, commit, path, added) if status == "D" else None
        if note is not None:
            notes.append(_finding(note, path))
        elif status != "A":
            change = "deleted" if status == "D" else "edited"
            found = problem("agent_key_changed", path=path, commit=commit[:12], change=change)
            findings.append(_finding(found, path))
    for commit, _author, status, path in records:
        if status != "A":
            change = "deleted" if status == "D" else "edited"
            found = problem("agent_key_changed", path=path, commit=commit[:12], change=change)
            findings.append(_finding(found, path))
    for status, path in repo.git.worktree_changes(f"{KEYS_DIR}/agent"):
        if status != "??" and "A" not in status:
            change = "deleted" if "D" in status else "edited"
            found = problem(
                "agent_key_changed", path=path, commit="HEAD (not yet committed)", change=change
            )
            findings.append(_finding(found, path))
    return findings, notes


def _revocation(
    session: Session, commit: str, path: str, added: set[tuple[str, str]]
) -> Problem | None:
    """`agent_key_revoked` when `commit` removed the key at `path` with `keys remove`: the
    same commit added the revocation record of that key (name and key id)."""
    from taskfs.core import signing, yamlio

    name = path.rsplit("/", 1)[-1].removesuffix(".pub")
    before = session.read(f"{commit}^:{path}")
    if before is None:
        return None
    try:
        ident = signing.key_id(keys.parse_public(before[1].decode("utf-8").strip()))
    except (UnicodeDecodeError, signing.SigningError):
        return None
    record = keys.revoked_rel(name, ident)
    found = session.read(f"{commit}:{record}") if (commit, record) in added else None
    if found is None:
        return None
    try:
        value = yamlio.load(found[1])
    except yamlio.YamlError:
        return None
    if not isinstance(value, dict) or value.get("keyId") != ident or value.get("name") != name:
        return None
    why = f" ({value['reason']})" if isinstance(value.get("reason"), str) else ""
    return problem(
        "agent_key_revoked",
        name=name,
        key_id=ident,
        commit=commit[:12],
        by=str(value.get("by", "?")),
        why_text=why,
        path=path,
    )


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
        why = _completion_flaw(link.record.evidence, by_name, command, trust)
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


def _completion_flaw(
    name: str | None, by_name: dict[str, EvidenceFile], command: str, trust: RunnerTrust
) -> str:
    if name is None:
        return " (its completed status file names no evidence)"
    item = by_name.get(name)
    if item is None:
        return f" (its completion names evidence {name}, which is missing or not well-formed)"
    record = item.record
    if not isinstance(record, CheckEvidence):
        return f" (its completion rests on {name}, a recorded judgement, not a check run)"
    if record.command != command:
        return f" (its completion rests on {name}, a run of another command)"
    if record.verdict != "pass":
        return f" (its completion rests on {name}, a failing check)"
    if trust.required and item.signature != "valid":
        return f" (its completion rests on {name}, which no trusted runner key signed)"
    return ""


def _runner_keys(repo: Repository, trust: RunnerTrust) -> tuple[list[Finding], list[Finding]]:
    """Runner keys decide which evidence counts: name every one added, and every change."""
    folder = f"{KEYS_DIR}/runner"
    findings: list[Finding] = []
    notes: list[Finding] = []
    for commit, author, status, path in repo.git.path_history(folder):
        if status == "A":
            notes.append(_key_added(path, commit[:12], author, trust))
        else:
            change = "deleted" if status == "D" else "edited"
            found = problem("runner_key_changed", path=path, commit=commit[:12], change=change)
            findings.append(_finding(found, path))
    for status, path in repo.git.worktree_changes(folder):
        if status == "??" or "A" in status:
            notes.append(_key_added(path, "the working tree (not committed)", "?", trust))
        else:
            change = "deleted" if "D" in status else "edited"
            found = problem(
                "runner_key_changed", path=path, commit="HEAD (not yet committed)", change=change
            )
            findings.append(_finding(found, path))
    return findings, notes


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


def _is_ledger_file(repo: Repository, path: str) -> bool:
    """Files inside a task folder; drop-in envelopes and refusal reports beside them are not."""
    prefix = repo.tasks_rel + "/"
    return path.startswith(prefix) and "/" in path[len(prefix) :]


def _history(repo: Repository) -> list[Finding]:
    archives = archive_audit.acts(repo)
    out = []
    for commit, status, path in repo.git.changes_after_creation(repo.tasks_rel):
        if not _is_ledger_file(repo, path):
            continue
        if status == "D" and archive_audit.archived_removal(repo, archives, commit, path):
            continue  # the archive's audited act: checked below
        code = "ledger_file_deleted" if status == "D" else "ledger_file_edited"
        out.append(_finding(problem(code, path=path, commit=commit[:12]), path))
    out += [_finding(p, str(p.data["path"])) for p in archive_audit.problems(repo, archives)]
    _read, unreadable = archive_records.records(repo)
    out += [_finding(p, str(p.data["path"])) for p in unreadable]
    return out


def _worktree(repo: Repository) -> list[Finding]:
    out = []
    for status, path in repo.git.worktree_changes(repo.tasks_rel):
        if not _is_ledger_file(repo, path):
            continue
        if status == "??" or "A" in status:
            code = "ledger_file_uncommitted"
        elif "D" in status:
            code = "ledger_file_deleted"
        else:
            code = "ledger_file_edited"
        out.append(_finding(problem(code, path=path, commit="HEAD (not yet committed)"), path))
    return out


def _finding(found: Problem, path: str) -> Finding:
    return Finding(found.code, str(found.data.get("path", path)), found.message)
