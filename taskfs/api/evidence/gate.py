"""The completion gate: what a completion of a task rests on, or why there is none (contract
section 7), decided on the facts of its evidence files (`taskfs.store.evidence_gates`), so that
`complete` loads neither the evidence models nor the runner.
"""

from __future__ import annotations

from collections.abc import Sequence

from taskfs.api.tasks.envelope_rules import ledger_folders
from taskfs.core.evidence import (
    CompletionDecision,
    EvidenceFile,
    OwnedFingerprint,
    RunnerTrust,
    decide_completion,
)
from taskfs.errors import Problem, problem
from taskfs.store import keys
from taskfs.store.evidence_gates import gates
from taskfs.store.git import Git
from taskfs.store.owned_fingerprint import owned_files, owned_now
from taskfs.store.repository import Repository


def trust_root(repo: Repository) -> RunnerTrust:
    """The runner keys evidence must be signed by: the operator's trust list when there is one
    (outside every repository), else the runner keys HEAD holds, else none (unsigned works)."""
    operator = keys.operator_trusted_runners(repo.root)
    if operator is not None:
        return RunnerTrust(operator, "operator")
    committed = keys.committed_public_keys(repo.git, "runner")
    if committed:
        return RunnerTrust(committed, "repository")
    return RunnerTrust({}, "none")


def completion(
    repo: Repository, task_id: str, command: str, entries: Sequence[str]
) -> CompletionDecision:
    """The evidence file a completion of the task would rest on, or why there is none: its
    evidence for `command` (the envelope's passFailCommand) against the files its `entries`
    own as they are now."""
    trust = trust_root(repo)
    now = owned_fingerprint_now(repo, repo.git, entries)

    def uncommitted_now() -> list[str]:  # only for a refusal: it reads HEAD's trees too
        return owned_now(repo.git, entries, ledger_folders(repo.tasks_rel))[1]

    evidence = gates(repo, task_id, trust)
    return decide_completion(evidence, command, now.sha256, trust, uncommitted_now)


def completion_problems(task_id: str, decision: CompletionDecision) -> list[Problem]:
    if decision.code is None:
        return []
    return [problem(decision.code, id=task_id, why_text=decision.why, rule="evidence")]


def owned_fingerprint_now(repo: Repository, git: Git, entries: Sequence[str]) -> OwnedFingerprint:
    """The fingerprint of the files `entries` own now, the ledger's folders left out."""
    return owned_files(git, entries, ledger_folders(repo.tasks_rel))


def completion_flaw(
    name: str | None, by_name: dict[str, EvidenceFile], command: str, trust: RunnerTrust
) -> str:
    """Why a completion naming evidence file `name` rests on no valid passing run of
    `command` (empty when it does): the rule `audit` replays and the claim gate asks of a
    dependency's completion (`taskfs.api.lifecycle.standing`)."""
    from taskfs.core.evidence_records import CheckEvidence

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
