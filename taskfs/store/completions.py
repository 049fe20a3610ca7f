"""Whether a task's completion stands: the one rule by which a completion counts for what
depends on the task, asked by a claim of a dependent (`taskfs.api.lifecycle.standing`) and kept
in the read model's row of the task (`Summary.stands`), which `ready` reads.

A completion is a status file anyone could have committed. It stands only when it is what the
task's holder (or its sender, on the holder's result) could have written (the `status` row of
`taskfs.core.ledger_kinds`): by one of them; signed as that agent's acts are where it had a key
when the file was committed (`key_history.key_of`, audit's rule), or resting on a `result`
message of it that verifies under the key it had when that message was committed (as audit's
`authority._vouched` asks); naming a passing run (`kind: check`, `verdict: pass`) of the task's
own command, recorded for this task.

Every part of that is fixed once the files are committed: the key rule is the key that stood
at the commit that added a file, so a key made or revoked later changes nothing, and the read
model may keep the answer with the row (keyed, like the rest of it, by the task folder's
objects). What is not fixed is whether the run was signed by a runner the operator trusts now
(the trust list lives outside the repository): that is asked at the time, by the claim and by
`ready` alike (`taskfs.api.lifecycle.standing.runs_trusted`).

Read from the files with YAML alone (a model only for a message a completion rests on): a claim
pays no model for a dependency's completion, nor the read model for a completed task's row.
"""

from __future__ import annotations

from typing import Any

from taskfs.core.layout import EVIDENCE, STAMPED_NAME_RE, STATUS
from taskfs.readmodel.projection import Summary
from taskfs.store.key_history import KeyOf
from taskfs.store.repository import Repository

TYPE_CHECKING = False
if TYPE_CHECKING:
    from taskfs.core.evidence import GateFacts


def stands(where: Repository, summary: Summary, key_of: KeyOf) -> bool:
    """Whether the completion of the task `summary` (read from `where`: the working tree, or
    the commit an archive took the task from) stands (see the module's account); False for a
    task with no completion. `key_of`: `key_history.act_keys`'s, for the task's files."""
    found = completion(where, summary.id)
    return found is not None and judged(where, summary, found[0], found[1], key_of)


def completion(where: Repository, task_id: str) -> tuple[str, dict[str, Any]] | None:
    """The task's latest completion: its path and what it holds (as YAML reads it)."""
    names = [n for n in where.list_dir(task_id, STATUS) if "-completed-" in n]
    if not names:
        return None
    rel = where.task_rel(task_id, STATUS, max(names))
    try:
        return rel, fields(where.read_bytes(rel))
    except OSError:
        return rel, {}


def run_of(document: dict[str, Any]) -> str | None:
    """The evidence file a completion names (None: none, or no file name of the ledger's)."""
    evidence = document.get("evidence")
    return evidence if isinstance(evidence, str) and STAMPED_NAME_RE.fullmatch(evidence) else None


def judged(
    where: Repository,
    summary: Summary,
    rel: str,
    document: dict[str, Any],
    key_of: KeyOf,
    *,
    run: dict[str, Any] | None = None,
) -> bool:
    """Whether the completion at `rel` holding `document` stands for the task `summary`.
    `run`: the fields of the run it names, when the caller read them already (a writer's
    completion gate: `ran`); else they are read from its file."""
    by, evidence = document.get("by"), run_of(document)
    if by not in (summary.holder, summary.envelope.sender) or evidence is None:
        return False
    if document.get("task") != summary.id or document.get("state") != "completed":
        return False
    if not _signed_by(where, summary.id, rel, document, key_of):
        return False
    if run is None:
        try:
            run = fields(where.read_bytes(where.task_rel(summary.id, EVIDENCE, evidence)))
        except OSError:
            return False
    return (
        (run.get("kind"), run.get("verdict")) == ("check", "pass")
        and run.get("task") == summary.id
        and run.get("command") == summary.envelope.command
    )


def ran(task_id: str, facts: GateFacts) -> dict[str, Any]:
    """The fields `judged` reads of a run, from what the completion gate read of it
    (`taskfs.core.evidence.GateFacts`, of a readable evidence file of the task `task_id`)."""
    return {"task": task_id, "kind": facts.kind, "verdict": facts.verdict, "command": facts.command}


def fields(data: bytes) -> dict[str, Any]:
    """A ledger file's mapping, as YAML reads it ({}: not one)."""
    from taskfs.core import yamlio

    try:
        value = yamlio.load(data)
    except yamlio.YamlError:
        return {}
    return value if isinstance(value, dict) else {}


def _signed_by(
    where: Repository, task_id: str, rel: str, document: dict[str, Any], key_of: KeyOf
) -> bool:
    """Whether a status file is signed as its `by`'s acts are: under the key that stood for its
    `by` when the file was committed, or resting on a `result` message of its `by` that
    verifies under the key `by` had when the message was committed; True when no key stood."""
    by = str(document.get("by"))
    key = key_of(rel, by)
    if key is None:
        return True
    from taskfs.core import act_signing

    if document.get("sig") is not None:
        return act_signing.verifies("status", document, key)
    message = document.get("message")
    if not isinstance(message, str):
        return False
    from taskfs.core import messages as rules
    from taskfs.store.messages import in_place

    found = in_place(where, task_id, message)
    if found is None:
        return False
    record = found.record
    said = key_of(found.rel, by)
    return (
        record.sender == by
        and record.task_id == task_id
        and record.status == "result"
        and (record.signature is not None or record.sig is not None)
        and said is not None
        and not rules.authenticity(record, rules.SenderTrust({by: said}, False))
    )
