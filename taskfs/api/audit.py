"""`audit`: the ledger checked against git history.

It names every ledger file edited or deleted after its commit (in history or in the working
tree), every ledger file that no commit holds, every status file that is not part of its
task's chain, every transition the table does not allow, and every file that is not a
well-formed taskfs file. A transition that lost a fork is superseded, not a violation.
"""

from __future__ import annotations

from dataclasses import dataclass

from taskfs.api import queries
from taskfs.errors import Problem, problem
from taskfs.store.repository import Repository


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

    @property
    def ok(self) -> bool:
        return not self.findings


def audit(repo: Repository) -> Audit:
    findings: list[Finding] = []
    findings += _history(repo)
    findings += _worktree(repo)
    validation = queries.validate_ledger(repo)
    for report in validation.files:
        findings += [_finding(p, report.path) for p in report.problems]
    findings += [_finding(p, str(p.data.get("id", ""))) for p in validation.problems]
    unique = {(f.code, f.path, f.message): f for f in findings}
    return Audit(tuple(sorted(unique.values(), key=lambda f: (f.path, f.code))))


def _is_ledger_file(repo: Repository, path: str) -> bool:
    """Files inside a task folder; drop-in envelopes and refusal reports beside them are not."""
    prefix = repo.tasks_rel + "/"
    return path.startswith(prefix) and "/" in path[len(prefix) :]


def _history(repo: Repository) -> list[Finding]:
    out = []
    for commit, status, path in repo.git.changes_after_creation(repo.tasks_rel):
        if not _is_ledger_file(repo, path):
            continue
        code = "ledger_file_deleted" if status == "D" else "ledger_file_edited"
        out.append(_finding(problem(code, path=path, commit=commit[:12]), path))
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
