"""A request that is not yet a contract: the intake (contract section 12).

Ecosystems open work in conversation: an A2A client sends "Hello", an interlink agent a prose
message with a new `task_id`, a model an envelope without `from`. taskfs keeps such a request
instead of refusing it, under the requester's name and the id it chose, and answers with what
the contract still lacks, field by field. The intake's files are `<task>/intake/<stamp>.yaml`,
append-only like every ledger file:

- `request`: the requester's words (`text`), as it sent them: prose, or YAML carrying envelope
  fields (a partial envelope, the missing fields, or a whole envelope). The first names the
  recipient (`to`) and the door it came through.
- `proposal`: an envelope the recipient drew up from the words. It submits nothing: only the
  requester's acceptance does (a request whose text is the proposal, naming it in `accepts`),
  so the contract stays the requester's word.
- `canceled`: the requester or the recipient closed it.

The envelope the requester has given so far (`draft`) is its requests' fields merged in order
(later keys win; `acceptanceCheck` merges key by key), with the intake's id, the requester as
`from` and the recipient as `to`. What it still lacks is what `validate_envelope` says of it.
Once nothing is missing, the request that completed it submits the task under the same id, in
the same commit. An intake owns no files and blocks nothing.

Pure: values in, values out; reading the files is `taskfs.store.intake_reader`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import Field, Strict

from taskfs.core import yamlio
from taskfs.core.interlink import text_fields
from taskfs.core.records import AgentText, MsgIdText, TaskIdText, UtcTime, _Record
from taskfs.errors import Problem, TaskfsError, problem

Kind = Literal["request", "proposal", "canceled"]
Door = Literal["cli", "mcp", "a2a", "interlink"]
DOORS: tuple[Door, ...] = ("cli", "mcp", "a2a", "interlink")
# What `ls` and the projection call an intake that is open (a canceled one is `canceled`).
OPEN_STATE = "intake"
# The top-level keys an envelope cannot be without (contract section 2).
REQUIRED_KEYS = frozenset(
    {
        "objective",
        "outputFormat",
        "toolAndSourceGuidance",
        "boundaries",
        "filesAndInterfaces",
        "acceptanceCheck",
        "contextID",
    }
)
# The words of one request, as the largest envelope file: the YAML limit.
MAX_TEXT = yamlio.MAX_BYTES


class IntakeRecord(_Record):
    """One file of an intake (see the module's account)."""

    intake: TaskIdText
    kind: Kind
    by: AgentText
    at: UtcTime
    to: AgentText | None = Field(default=None, description="request: who it is for.")
    door: Door | None = Field(default=None, description="request: how it arrived.")
    text: Annotated[str, Strict()] | None = Field(
        default=None, max_length=MAX_TEXT, description="request, proposal: the words as sent."
    )
    message: MsgIdText | None = Field(
        default=None, description="The message file holding the signed original, if any."
    )
    context: Annotated[str, Strict()] | None = Field(
        default=None,
        max_length=1024,
        description="request: the context it arrived in (A2A's contextId): its contextID "
        "unless its fields name one.",
    )
    accepts: Annotated[str, Strict()] | None = Field(
        default=None, description="request: the proposal (its file name) the requester accepts."
    )
    reason: Annotated[str, Strict()] | None = Field(default=None, description="canceled: why.")
    discovered_from: TaskIdText | None = Field(
        default=None,
        alias="discoveredFrom",
        description="request (the first): the task its requester found this work in while "
        "working on it (`taskfs discover`); the requester is a party to that task.",
    )
    sig: Annotated[str, Strict()] | None = Field(
        default=None,
        description="The Ed25519 signature of `by` over the other fields "
        "(taskfs.core.act_signing, taskfs-intake-v1), where `by` has a key.",
    )


class Entry(NamedTuple):
    """A record with the name of its file (`<stamp>-<nonce>.yaml`)."""

    name: str
    record: IntakeRecord


class Intake(NamedTuple):
    """An intake as its files say."""

    id: str
    entries: tuple[Entry, ...]
    submitted: bool = False  # the task's envelope exists: the intake is history

    @property
    def opening(self) -> IntakeRecord:
        return self.entries[0].record

    @property
    def requester(self) -> str:
        return self.opening.by

    @property
    def recipient(self) -> str | None:
        return self.opening.to

    @property
    def door(self) -> Door | None:
        return self.opening.door

    @property
    def discovered_from(self) -> str | None:
        """The task its requester found this work in (a follow-up), if it was."""
        return self.opening.discovered_from

    @property
    def canceled(self) -> Entry | None:
        return next((e for e in self.entries if e.record.kind == "canceled"), None)

    @property
    def state(self) -> str:
        """`intake` while open, `canceled` once closed, `submitted` once it became a task."""
        if self.submitted:
            return "submitted"
        return "canceled" if self.canceled is not None else OPEN_STATE

    @property
    def is_open(self) -> bool:
        return self.state == OPEN_STATE

    def requests(self) -> list[Entry]:
        return [e for e in self.entries if e.record.kind == "request" and self._by_requester(e)]

    def proposals(self) -> list[Entry]:
        return [e for e in self.entries if e.record.kind == "proposal"]

    def pending_proposal(self) -> Entry | None:
        """The latest proposal no request of the requester came after."""
        waiting = self.proposals_since_request()
        return waiting[-1] if waiting else None

    def proposals_since_request(self) -> list[Entry]:
        """The proposals made since the requester last spoke, oldest first."""
        found: list[Entry] = []
        for entry in self.entries:
            if entry.record.kind == "proposal":
                found.append(entry)
            elif entry.record.kind == "request" and self._by_requester(entry):
                found = []
        return found

    def words(self) -> list[str]:
        """The requester's texts that carry no envelope fields: what it said in prose."""
        return [
            e.record.text
            for e in self.requests()
            if e.record.text and fields_of(e.record.text) is None
        ]

    def draft(self) -> dict[str, Any]:
        """The envelope the requester has given so far (see the module's account)."""
        merged: dict[str, Any] = {}
        for entry in self.requests():
            fields = fields_of(entry.record.text or "")
            if fields is None:
                continue
            if fields.keys() >= REQUIRED_KEYS:
                merged = {}  # a whole envelope starts afresh: nothing stale stays from before
            merge_into(merged, fields)
        merged.setdefault("id", self.id)
        merged.setdefault("from", self.requester)
        if self.opening.context:
            merged.setdefault("contextID", self.opening.context)
        if self.recipient is not None:
            merged.setdefault("to", self.recipient)
        return merged

    def draft_given(self) -> bool:
        """Whether any request carries envelope fields (not only words)."""
        return any(fields_of(e.record.text or "") is not None for e in self.requests())

    def refuse_misaddressed(self, fields: Mapping[str, Any]) -> None:
        """Refuse a proposal that gives the task another id, sender or recipient than its
        request's (`addressing_problems`): no acceptance could take it."""
        refused = addressing_problems(self.id, self.requester, self.recipient, fields)
        if refused:
            raise TaskfsError(refused)

    def missing(self) -> list[Problem]:
        """What keeps the draft from being an envelope: every problem, each named."""
        return draft_problems(self.id, self.requester, self.recipient, self.draft())

    def refusal(self, entry: Entry) -> str | None:
        """Why `entry` could not have been written by its `by` (None: it could): a request is
        its requester's, a proposal its recipient's (anyone but the requester when it names
        none), a cancellation a party's, and nothing follows a cancellation. The rule the
        acceptance and `audit` share (`taskfs.api.review.intake_audit`)."""
        record, requester, recipient = entry.record, self.requester, self.recipient
        if record.kind == "request" and record.by != requester:
            return f"it is {requester}'s request"
        if record.kind == "proposal" and (
            record.by == requester or recipient not in (None, record.by)
        ):
            return f"only its recipient ({recipient or 'anyone but the requester'}) proposes"
        if record.kind == "canceled" and record.by not in (requester, recipient):
            return "only a party to it cancels it"
        closed = self.canceled
        if closed is not None and entry.name > closed.name:
            return "it was written after the intake was canceled"
        return None

    def _by_requester(self, entry: Entry) -> bool:
        return entry.record.by == self.requester


def fields_of(text: str) -> dict[str, Any] | None:
    """The envelope fields a text carries (a YAML mapping with an envelope key), else None:
    prose, or YAML that is no envelope."""
    try:
        return text_fields(text)
    except TaskfsError:  # kept words that are not YAML: they say no field
        return None


def merge_into(merged: dict[str, Any], fields: Mapping[str, Any]) -> None:
    """`fields` over `merged`: later keys win, `acceptanceCheck` key by key."""
    for key, value in fields.items():
        before = merged.get(key)
        if key == "acceptanceCheck" and isinstance(value, Mapping) and isinstance(before, dict):
            merged[key] = {**before, **value}
        else:
            merged[key] = dict(value) if isinstance(value, Mapping) else value


def draft_problems(
    task_id: str, requester: str, recipient: str | None, draft: Mapping[str, Any]
) -> list[Problem]:
    """Every reason `draft` is not yet the envelope of intake `task_id`."""
    from taskfs.core.envelope import validate_envelope  # the model, only where it is needed

    _envelope, problems = validate_envelope(dict(draft))
    return problems + addressing_problems(task_id, requester, recipient, draft)


def addressing_problems(
    task_id: str, requester: str, recipient: str | None, given: Mapping[str, Any]
) -> list[Problem]:
    """What `given` (a draft, or the fields of a proposal) says wrongly of whose envelope it
    is: an id not the intake's, a sender not its requester, a recipient not the request's (when
    the request names one). A key `given` leaves out says nothing. A proposal that says any of
    it is refused when it is made: no acceptance could take it."""
    problems: list[Problem] = []
    if "id" in given and given["id"] != task_id:
        problems.append(
            problem("invalid_value", field="id", reason=f"this intake's id is {task_id!r}")
        )
    if "from" in given and given["from"] != requester:
        problems.append(
            problem(
                "agent_not_allowed",
                agent=str(given.get("from")),
                action="submit",
                action_text=f"send the envelope of intake {task_id!r}",
                reason=f"the request is {requester}'s",
            )
        )
    if recipient is not None and "to" in given and given["to"] != recipient:
        problems.append(
            problem(
                "invalid_value", field="to", reason=f"the request is addressed to {recipient!r}"
            )
        )
    return problems


def missing_fields(problems: Sequence[Problem]) -> list[str]:
    """The envelope keys the problems name, in the contract's order, once each."""
    return list(dict.fromkeys(p.field for p in problems if p.field))


def proposal_id(entry: Entry) -> str:
    """How a proposal is named: its file's stem (`<stamp>-<nonce>`)."""
    from taskfs.core.layout import SUFFIX

    return entry.name.removesuffix(SUFFIX)


def proposal_digest(entry: Entry) -> str:
    """What a proposal says, in 16 hex digits of its text's SHA-256: naming it by this accepts
    exactly the words that were read."""
    import hashlib

    said = (entry.record.text or "").encode("utf-8", "surrogatepass")
    return hashlib.sha256(said).hexdigest()[:16]
