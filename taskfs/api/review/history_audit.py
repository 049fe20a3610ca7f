"""`audit`'s replay of what happened to ledger files after their commit, by the authority table
(`taskfs.core.ledger_kinds`): one pass over history and one over the working tree, asking each
path's row what may happen to it.

A file of an immutable kind edited after its commit is named with its row's code
(`ledger_file_edited`, or the keys' own), and so is one removed, unless its row's one act
removed it: a task's files leave with their folder by an archive that names the task
(`archive_audit.archived_removal`); an agent key leaves by its revocation, which `key_audit`
judges. A file of a kind that may change (the settings) is noted when it changes
(`config_changed`). A file in the ledger's folders that is of no kind is no ledger file taskfs
keeps: `validate` names it where it matters (a task's folder).
"""

from __future__ import annotations

from collections.abc import Callable

from taskfs.core import ledger_kinds
from taskfs.core.layout import CONFIG_PATH, TASKFS_DIR
from taskfs.errors import Problem, problem
from taskfs.store.repository import Repository

UNCOMMITTED = "HEAD (not yet committed)"


def changes(
    repo: Repository, archived_removal: Callable[[str, str], bool]
) -> tuple[list[Problem], list[Problem]]:
    """(findings, notes) of every change history made to a ledger file after its commit.
    `archived_removal(commit, path)`: whether an archive took `path` out in `commit`."""
    findings: list[Problem] = []
    notes: list[Problem] = []
    tasks_rel = repo.tasks_rel
    for author, status, path in repo.git.changes_after_creation(tasks_rel, TASKFS_DIR):
        kind = ledger_kinds.kind_of(path, tasks_rel)
        if kind is None:
            continue
        who = f"{author.name} <{author.email}>"
        if kind is ledger_kinds.CONFIG and path == CONFIG_PATH:
            notes.append(
                problem(
                    "config_changed",
                    path=path,
                    commit=author.commit[:12],
                    author=who,
                    keys_text="" if status != "D" else " (deleted: every setting is its default)",
                    rule=kind.name,
                )
            )
            continue
        if not kind.immutable:
            continue
        if status == "D" and kind.removed_by == "revocation":
            continue  # key_audit judges a key's removal: by a revocation that holds, or not
        if status == "D" and kind.removed_by == "archive" and archived_removal(author.commit, path):
            continue  # the archive's audited act: archive_audit checks it
        code, change = (kind.deleted, "deleted") if status == "D" else (kind.edited, "edited")
        findings.append(
            _changed(code, path, author.commit[:12], author=who, rule=kind.name, change=change)
        )
    return findings, notes


def worktree(repo: Repository) -> list[Problem]:
    """Ledger files the working tree holds that no commit does, or that it changed."""
    out: list[Problem] = []
    tasks_rel = repo.tasks_rel
    for folder in (tasks_rel, TASKFS_DIR):
        for status, path in repo.git.worktree_changes(folder):
            kind = ledger_kinds.kind_of(path, tasks_rel)
            if kind is None or not kind.ledger or not kind.immutable:
                continue
            if status == "??" or "A" in status:
                if kind.removed_by == "revocation" or kind is ledger_kinds.RUNNER_KEY:
                    continue  # a key not yet committed counts for no one (keys: committed only)
                code, change = "ledger_file_uncommitted", "added"
            elif "D" in status:
                code, change = kind.deleted, "deleted"
            else:
                code, change = kind.edited, "edited"
            out.append(_changed(code, path, UNCOMMITTED, author="?", rule=kind.name, change=change))
    return out


def _changed(code: str, path: str, commit: str, *, author: str, rule: str, change: str) -> Problem:
    return problem(code, path=path, commit=commit, author=author, change=change, rule=rule)
