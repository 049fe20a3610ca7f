"""Evidence as values: the owned-files fingerprint, runner signatures, and what completion
rests on. Pure: files, git and keys are read elsewhere and passed in.

Fingerprint. Each owned file contributes `KIND SHA256 PATH` followed by a zero byte, where KIND
is `file`, `exec` (executable bit set), `link` (the SHA-256 is of the link's target text) or
`missing` (tracked but deleted; the SHA-256 is of nothing) or `other` (a folder git tracks as a
submodule: it counts by its presence only); entries are sorted by the path's
bytes, and the fingerprint is the SHA-256 of their concatenation.

Signature. A runner signs `signing.sign(key, "taskfs-evidence-v1", [("evidence", C)])` where C
is the canonical JSON of the evidence document without its `signature` key (keys sorted, no
white space, UTF-8, `json.dumps(doc, sort_keys=True, separators=(",", ":"),
ensure_ascii=False)`). The document includes `runner: {name, keyId}`, so the signature binds
the runner's name and key too. A verifier loads the YAML, drops `signature`, and checks the same
bytes.

Completion. The evidence that can count is a `check` record for the envelope's exact
passFailCommand, whose signature verifies when the repository trusts runner keys. Among those
whose fingerprint equals the owned files now, the newest decides: a pass is what completion
rests on, a fail refuses it (a later failure on the same files, such as a `--fresh` second
opinion, vetoes an earlier pass). When none matches the files now, an older pass makes the
refusal `evidence_stale`; no pass at all, `completion_requires_evidence`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from taskfs import i18n
from taskfs.core import signing
from taskfs.core.ignores import is_build_output
from taskfs.core.layout import KEYS_DIR

UNCOMMITTED_NAMED = 20  # uncommitted owned files a refusal names (`and N more` past them)
EVIDENCE_OUTPUT_CAP = 32 * 1024
"""Bytes kept of each captured stream (first and last half); evidence files stay far below the
1 MiB limit of a ledger file even when every kept byte has to be escaped in YAML."""

if TYPE_CHECKING:  # the records' models (pydantic) are not needed to decide on their facts
    from taskfs.core.evidence_records import CheckEvidence, JudgementEvidence

FileKind = Literal["file", "exec", "link", "missing", "other"]
SignatureState = Literal["valid", "invalid", "unsigned", "unverified"]


@dataclass(frozen=True)
class OwnedFingerprint:
    sha256: str
    count: int


def owned_fingerprint(entries: Iterable[tuple[bytes, FileKind, str]]) -> OwnedFingerprint:
    """The fingerprint of (path bytes, kind, sha256 hex) entries, in any order."""
    digest = hashlib.sha256()
    count = 0
    for path, kind, sha in sorted(entries):
        digest.update(f"{kind} {sha} ".encode() + path + b"\0")
        count += 1
    return OwnedFingerprint(digest.hexdigest(), count)


# -- signatures -------------------------------------------------------------------------------


def canonical_json(document: Mapping[str, Any]) -> str:
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _fields(document: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    unsigned = {k: v for k, v in document.items() if k != "signature"}
    return [("evidence", canonical_json(unsigned))]


def sign_document(document: dict[str, Any], name: str, pair: signing.KeyPair) -> dict[str, Any]:
    """`document` with `runner` and `signature` added, signed by runner `name`'s key."""
    signed = {k: v for k, v in document.items() if k not in ("runner", "signature")}
    signed["runner"] = {"name": name, "keyId": signing.key_id(pair.public)}
    signed["signature"] = signing.sign(pair.private, signing.EVIDENCE_DOMAIN, _fields(signed))
    return signed


@dataclass(frozen=True)
class RunnerTrust:
    """The runner keys evidence must be signed by; `required` is False when there are none."""

    keys: Mapping[str, bytes]
    source: Literal["operator", "repository", "none"]

    @property
    def required(self) -> bool:
        return self.source != "none"


NO_TRUST = RunnerTrust({}, "none")


def signature_state(document: Mapping[str, Any], trust: RunnerTrust) -> tuple[SignatureState, str]:
    """How `document` (as loaded from its file) stands against `trust`, and why, in words."""
    signature = document.get("signature")
    runner = document.get("runner")
    if signature is None:
        return "unsigned", "it carries no runner signature"
    if not trust.required:
        return "unverified", "it is signed, but this repository trusts no runner key"
    name = runner.get("name") if isinstance(runner, Mapping) else None
    if not isinstance(name, str) or name not in trust.keys:
        where = "the operator's trust list" if trust.source == "operator" else f"{KEYS_DIR}/runner"
        return "invalid", f"it names runner {name!r}, which {where} does not hold"
    public = trust.keys[name]
    if runner.get("keyId") != signing.key_id(public):  # type: ignore[union-attr]
        return "invalid", f"it names a key of runner {name!r} other than the trusted one"
    try:
        ok = signing.verify(public, signing.EVIDENCE_DOMAIN, _fields(document), signature)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        return "invalid", f"runner {name}'s signature does not match the file's content"
    return "valid", f"signed by runner {name!r}"


# -- what completion rests on -----------------------------------------------------------------


@dataclass(frozen=True)
class EvidenceFile:
    """One readable evidence file: its path, what it holds, and how its signature stands."""

    rel: str
    document: Mapping[str, Any]
    record: CheckEvidence | JudgementEvidence
    signature: SignatureState
    signature_why: str = ""

    @property
    def name(self) -> str:
        return self.rel.rsplit("/", 1)[-1]

    def gate(self) -> Gate:
        """What the completion gate reads of it."""
        return Gate(self.rel, GateFacts.of(self.record), self.signature)


class GateFacts(NamedTuple):
    """What completion reads of an evidence record: plain values, so that a decision on
    evidence already read and checked needs no model (`taskfs.readmodel.gate` keeps them)."""

    kind: str  # check | judgement
    command: str | None
    verdict: str
    sha256: str | None  # the owned files' fingerprint when the check started
    work_tree: str | None  # clean | dirty | None
    uncommitted: tuple[str, ...]  # the first owned files HEAD did not hold
    uncommitted_count: int

    @classmethod
    def of_document(cls, document: Mapping[str, Any]) -> GateFacts:
        """The facts of a check's evidence document as `taskfs check` wrote it (the same as
        `of` its record: `tests/api/test_evidence_order.py`), without its model."""
        listed = document.get("uncommitted") or {}
        return cls(
            "check",
            document["command"],
            document["verdict"],
            document["ownedFiles"]["digest"]["sha256"],
            document.get("workTree"),
            tuple(listed.get("paths", ())),
            listed.get("count", 0),
        )

    @classmethod
    def of(cls, record: CheckEvidence | JudgementEvidence) -> GateFacts:
        if record.kind != "check":
            return cls(record.kind, None, record.verdict, None, None, (), 0)
        check = record
        listed = check.uncommitted
        return cls(
            "check",
            check.command,
            check.verdict,
            check.owned_files.digest.sha256,
            check.work_tree,
            tuple(listed.paths) if listed is not None else (),
            listed.count if listed is not None else 0,
        )


class Gate(NamedTuple):
    """One evidence file as the completion gate reads it."""

    rel: str
    facts: GateFacts
    signature: SignatureState


Refusal = Literal["completion_requires_evidence", "evidence_stale", "work_uncommitted"]


@dataclass(frozen=True)
class CompletionDecision:
    """The evidence a completion rests on, or the refusal code and why."""

    rests_on: str | None
    code: Refusal | None = None
    why: str = ""
    run: GateFacts | None = None  # what was read of the run it rests on


def counts(item: Gate, command: str, trust: RunnerTrust) -> bool:
    """Whether the file is a run of this exact command that the repository accepts."""
    facts = item.facts
    if facts.kind != "check" or facts.command != command:
        return False
    return item.signature == "valid" or not trust.required


def decide_completion(
    evidence: Sequence[Gate],
    command: str,
    now: str,
    trust: RunnerTrust,
    uncommitted_now: Callable[[], Sequence[str]] | None = None,
) -> CompletionDecision:
    """What completion rests on, given the evidence files in name (time) order and the owned
    files' fingerprint `now`; `uncommitted_now()` lists the owned files HEAD does not hold now,
    asked only to say what is left to do after evidence from an uncommitted tree (None: the
    ones the evidence names)."""
    runs = [item for item in evidence if counts(item, command, trust)]
    matching = [item for item in runs if item.facts.sha256 == now]
    if matching:
        newest = matching[-1]
        facts = newest.facts
        if facts.verdict == "pass" and facts.work_tree == "dirty":
            still = None if uncommitted_now is None else tuple(uncommitted_now())
            why = _uncommitted(newest.rel, facts, still)
            return CompletionDecision(None, "work_uncommitted", why)
        if facts.verdict == "pass":
            return CompletionDecision(newest.rel, run=facts)
        return CompletionDecision(
            None,
            "completion_requires_evidence",
            i18n.say(
                ": the newest check of the files as they are now failed ({path})", path=newest.rel
            ),
        )
    passes = [item for item in runs if item.facts.verdict == "pass"]
    if passes:
        return CompletionDecision(
            None,
            "evidence_stale",
            i18n.say(" ({path}); run `taskfs check` again", path=passes[-1].rel),
        )
    return CompletionDecision(
        None, "completion_requires_evidence", _why_none(evidence, command, trust)
    )


def _uncommitted(rel: str, facts: GateFacts, still: Sequence[str] | None) -> str:
    """What is left to do: commit what is still uncommitted (`still`, when known; else what
    the evidence names), then check again; only the check once everything is committed."""
    if still is not None and not still:
        return i18n.say(" ({rel}): the files are committed now; run `taskfs check` again", rel=rel)
    listed = facts.uncommitted if still is None else tuple(still[:UNCOMMITTED_NAMED])
    count = (facts.uncommitted_count if still is None else len(still)) or len(listed)
    more = i18n.say(" and {count} more", count=count - len(listed)) if count > len(listed) else ""
    outputs = [path for path in listed if is_build_output(path)]
    work = [path for path in listed if not is_build_output(path)]
    if outputs:
        # Bytecode, caches, builds: ignored, never committed.
        ignore = ignore_advice(outputs)
        if not work and not more:
            return i18n.say(" ({rel}): {ignore}", rel=rel, ignore=ignore)
        files = ", ".join(work) + more if work else i18n.say("the other files it owns")
        return i18n.say(" ({rel}): commit {files}; {ignore}", rel=rel, files=files, ignore=ignore)
    files = ", ".join(listed) + more if listed else i18n.say("the files it owns")
    return i18n.say(" ({rel}): commit {files}, then run `taskfs check` again", rel=rel, files=files)


def ignore_advice(outputs: Sequence[str]) -> str:
    """What to do with build outputs found among the uncommitted files: ignore them."""
    return i18n.say(
        "{files} are build outputs: list them in .gitignore (`taskfs init --gitignore` adds the "
        "usual ones), commit it, then run `taskfs check` again",
        files=", ".join(outputs),
    )


def _why_none(evidence: Sequence[Gate], command: str, trust: RunnerTrust) -> str:
    passing = [item for item in evidence if item.facts.verdict == "pass"]
    checks = [item.facts for item in passing if item.facts.kind == "check"]
    if passing and not checks:
        return i18n.say(": a recorded judgement never counts by itself; run `taskfs check`")
    if checks and all(facts.command != command for facts in checks):
        return i18n.say(": the passing evidence is for a different command than the envelope's")
    if trust.required and checks:
        return i18n.say(": its passing evidence is not signed by a trusted runner key")
    return i18n.say("; run `taskfs check` first")
