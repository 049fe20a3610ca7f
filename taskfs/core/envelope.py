"""The task envelope (contract section 2): the model, and validation into named errors.

`validate_envelope` takes the value a YAML file held and returns either an `Envelope` or every
problem with it at once, each under its contract code. The pydantic model is the single
source of the envelope's shape: the JSON Schema in `schemas/` is generated from it.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from taskfs import i18n
from taskfs.core import globs, layout
from taskfs.errors import Problem, problem

EXTENSION_PREFIX = "x-"
MAX_TIMEOUT_SECONDS = 24 * 60 * 60


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank", "must not be empty or only white space")
    return value


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise PydanticCustomError(
            "nul", "contains a NUL character, which no shell command can hold: remove it"
        )
    return value


def _task_id(value: str) -> str:
    if not layout.is_task_id(value):
        raise PydanticCustomError("task_id", "not a task id")
    return value


def _agent(value: str) -> str:
    if not layout.is_agent_name(value):
        raise PydanticCustomError(
            "agent_name",
            "not an agent name: use 1-64 characters of letters, digits, . _ @ -",
        )
    return value


def _entry(value: str) -> str:
    try:
        globs.parse_entry(value)
    except globs.EntryError as exc:
        raise PydanticCustomError("entry_invalid", "{reason}", {"reason": exc.reason}) from None
    return value


def _label(value: str) -> str:
    if not layout.is_label(value):
        raise PydanticCustomError(
            "label",
            "not a label: use 1-64 letters, digits and . _ : / + - with no blank, starting "
            "with a letter or digit",
        )
    return value


def _unique_labels(values: tuple[str, ...]) -> tuple[str, ...]:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise PydanticCustomError(
                "label_duplicate", "{value!r} is listed more than once", {"value": value}
            )
        seen.add(value)
    return values


def _unique_entries(values: tuple[str, ...]) -> tuple[str, ...]:
    seen: dict[tuple[str, str], str] = {}
    for raw in values:
        entry = globs.parse_entry(raw)
        key = (entry.kind, entry.text)
        if key in seen:
            raise PydanticCustomError(
                "entry_duplicate",
                "{value!r} is listed more than once (as {first!r})",
                {"value": raw, "first": seen[key]},
            )
        seen[key] = raw
    return values


Text = Annotated[
    str, Strict(), AfterValidator(_not_blank), Field(json_schema_extra={"pattern": r"\S"})
]
Command = Annotated[Text, AfterValidator(_no_nul)]
TaskId = Annotated[str, Strict(), AfterValidator(_task_id)]
AgentName = Annotated[str, Strict(), AfterValidator(_agent)]
EntryText = Annotated[str, Strict(), AfterValidator(_entry)]
Label = Annotated[str, Strict(), AfterValidator(_label)]
# How urgent a task is, as beads counts it: 0 the most, 4 the least; a task that says nothing
# is in the middle (`taskfs.core.shown.rank`, which `ready` orders by).
MOST_URGENT, LEAST_URGENT = 0, 4


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)


class AcceptanceCheck(_Model):
    pass_fail_command: Command = Field(
        alias="passFailCommand",
        description="A shell command run from the repository root; exit status 0 is a pass.",
    )
    end_to_end_verification: Text = Field(
        alias="endToEndVerification",
        description="The step proving the result works in context.",
    )
    timeout_seconds: Annotated[int, Strict()] | None = Field(
        default=None,
        alias="timeoutSeconds",
        ge=1,
        le=MAX_TIMEOUT_SECONDS,
        description="The check's time limit; the repository default when absent.",
    )
    end_to_end_command: Command | None = Field(
        default=None,
        alias="endToEndCommand",
        description="A shell command that performs endToEndVerification; `taskfs check` runs it "
        "after a passing passFailCommand and records it beside it (both must pass).",
    )
    verdict_source: Literal["script", "llm_judge"] | None = Field(
        default=None,
        alias="verdictSource",
        description="What decides the verdict inside passFailCommand: a deterministic script "
        "(the default), or an LLM judge whose exit status is its verdict. Recorded in the "
        "evidence.",
    )


class Envelope(_Model):
    """A task contract: what is asked, how the result is judged, and what the recipient owns."""

    objective: Text = Field(description="What is being asked for.")
    output_format: Text = Field(
        alias="outputFormat", description="The shape the result must arrive in."
    )
    tool_and_source_guidance: Text = Field(
        alias="toolAndSourceGuidance",
        description="Which tools and sources the work should draw on.",
    )
    boundaries: Text = Field(description="What the recipient must not do.")
    files_and_interfaces: Annotated[tuple[EntryText, ...], AfterValidator(_unique_entries)] = Field(
        alias="filesAndInterfaces",
        min_length=1,
        description="Path globs (relative to the repository root) or interface:<name> entries "
        "the recipient owns while the task is open.",
    )
    acceptance_check: AcceptanceCheck = Field(alias="acceptanceCheck")
    context_id: Text = Field(alias="contextID", description="The context the task belongs to.")
    id: TaskId | None = Field(default=None, description="Caller-chosen task id.")
    sender: AgentName | None = Field(default=None, alias="from", description="Sender agent.")
    recipient: AgentName | None = Field(default=None, alias="to", description="Recipient agent.")
    tools_allowed: tuple[Text, ...] | None = Field(
        default=None,
        alias="toolsAllowed",
        description="Tools requested for the recipient: a request, never a grant.",
    )
    depends_on: tuple[TaskId, ...] = Field(
        default=(),
        alias="dependsOn",
        description="Ids of tasks that must complete before this one can be claimed.",
    )
    parent: TaskId | None = Field(default=None, description="The task this one was delegated from.")
    priority: Annotated[int, Strict()] | None = Field(
        default=None,
        ge=MOST_URGENT,
        le=LEAST_URGENT,
        description="How urgent: 0 (the most) to 4 (the least); 2 when absent. `ready` offers "
        "the most urgent first, then the oldest.",
    )
    labels: Annotated[tuple[Label, ...], AfterValidator(_unique_labels)] = Field(
        default=(),
        description="Free labels to find and filter tasks by (`ls --label`).",
    )
    extensions: SkipJsonSchema[dict[str, Any]] = Field(default_factory=dict, exclude=True)

    def to_document(self) -> dict[str, Any]:
        """The envelope as its YAML keys, in the contract's order, extensions last."""
        doc = self.model_dump(by_alias=True, exclude_none=True, mode="json")
        for key in ("dependsOn", "labels"):
            if not doc.get(key):
                doc.pop(key, None)
        doc.update(self.extensions)
        return doc

    @property
    def command(self) -> str:
        """acceptanceCheck.passFailCommand: the contract a successor must keep (lineage)."""
        return self.acceptance_check.pass_fail_command

    @property
    def follows(self) -> str | None:
        """The task this one was handed on from (`reassign`) or retries (`retry`)."""
        from taskfs.core.lineage import follows

        return follows(self.extensions)

    def with_id(self, task_id: str) -> Envelope:
        return self._with(id=task_id)

    def with_sender(self, agent: str) -> Envelope:
        """The envelope from `agent`: a sender left out is the one who submits it."""
        return self._with(**{"from": agent})

    def _with(self, **fields: str) -> Envelope:
        # model_copy(update=...) skips validation; build through model_validate instead.
        data = self.model_dump(by_alias=True, exclude_none=True)
        data.update(fields)
        data["extensions"] = self.extensions
        return Envelope.model_validate(data)


FIELD_CODES: dict[str, str] = {
    "objective": "objective_required",
    "outputFormat": "output_format_required",
    "toolAndSourceGuidance": "tool_and_source_guidance_required",
    "boundaries": "boundaries_required",
    "filesAndInterfaces": "files_and_interfaces_required",
    "acceptanceCheck.passFailCommand": "acceptance_check_command_required",
    "acceptanceCheck.endToEndVerification": "acceptance_check_verification_required",
    "contextID": "context_id_required",
}
_ID_FIELDS = frozenset({"id", "dependsOn", "parent"})
_KNOWN = frozenset(
    field.alias or name for name, field in Envelope.model_fields.items() if name != "extensions"
)
_KNOWN_CHECK = frozenset(
    field.alias or name for name, field in AcceptanceCheck.model_fields.items()
)


def validate_envelope(data: Any) -> tuple[Envelope | None, list[Problem]]:
    """An `Envelope`, or every problem with `data` under its contract code."""
    if not isinstance(data, Mapping):
        kind = "a list" if isinstance(data, list) else f"a {type(data).__name__}"
        return None, [problem("yaml_invalid", reason=f"the document is {kind}, not a mapping")]
    fields, extensions, problems = _split_keys(data, _KNOWN, prefix="")
    check = fields.get("acceptanceCheck", {})
    if isinstance(check, Mapping):
        # x- keys are free at the top level only: a nested one is as unknown as any other.
        check_fields, check_ext, check_problems = _split_keys(
            check, _KNOWN_CHECK, prefix="acceptanceCheck."
        )
        problems += check_problems
        problems += [_unknown(key, _KNOWN_CHECK, "acceptanceCheck.") for key in check_ext]
        fields["acceptanceCheck"] = check_fields
    envelope: Envelope | None = None
    try:
        envelope = Envelope.model_validate({**fields, "extensions": extensions})
    except ValidationError as exc:
        problems += _problems_from(exc)
    problems += _dependency_problems(fields)
    if problems:
        return None, problems
    return envelope, []


def _split_keys(
    data: Mapping[Any, Any], known: frozenset[str], *, prefix: str
) -> tuple[dict[str, Any], dict[str, Any], list[Problem]]:
    """Known keys (with null values dropped: a null is an absent value), x- keys, unknown keys."""
    fields: dict[str, Any] = {}
    extensions: dict[str, Any] = {}
    problems: list[Problem] = []
    for key, value in data.items():
        if isinstance(key, str) and key in known:
            if value is not None:
                fields[key] = value
        elif isinstance(key, str) and key.startswith(EXTENSION_PREFIX):
            extensions[key] = value
        else:
            problems.append(_unknown(key, known, prefix))
    return fields, extensions, problems


def _unknown(key: object, known: frozenset[str], prefix: str) -> Problem:
    guess = difflib.get_close_matches(str(key), sorted(known), n=1, cutoff=0.75)
    if not guess:
        return problem("unknown_field", field=f"{prefix}{key}", key=f"{prefix}{key}")
    suggestion = prefix + guess[0]
    return problem(
        "unknown_field",
        field=f"{prefix}{key}",
        key=f"{prefix}{key}",
        suggestion=suggestion,
        hint_text=f" (did you mean {suggestion!r}?)",
    )


def _dependency_problems(fields: Mapping[str, Any]) -> list[Problem]:
    deps = fields.get("dependsOn")
    if not isinstance(deps, list | tuple):
        return []
    own = fields.get("id")
    problems: list[Problem] = []
    seen: set[str] = set()
    for i, dep in enumerate(deps):
        if not isinstance(dep, str):
            continue
        if dep == own:
            problems.append(problem("depends_on_self", field=f"dependsOn[{i}]", id=dep))
        elif dep in seen:
            problems.append(problem("depends_on_duplicate", field=f"dependsOn[{i}]", id=dep))
        seen.add(dep)
    return problems


def _problems_from(exc: ValidationError) -> list[Problem]:
    errors = exc.errors(include_url=False, include_context=True, include_input=True)
    locs = [tuple(e["loc"]) for e in errors]
    problems = []
    for error, loc in zip(errors, locs, strict=True):
        # A container error is noise beside an error about one of its items.
        if any(other != loc and other[: len(loc)] == loc for other in locs):
            continue
        problems.append(_problem_for(error["type"], loc, error))
    return problems


def _problem_for(kind: str, loc: tuple[Any, ...], error: Any) -> Problem:
    name = _dotted(loc)
    field_name = ".".join(str(part) for part in loc if isinstance(part, str))
    if field_name in FIELD_CODES and (
        kind in ("missing", "blank") or (kind == "too_short" and len(loc) == 1)
    ):
        return problem(FIELD_CODES[field_name], field=name)
    if loc[0] == "filesAndInterfaces" and (len(loc) > 1 or kind == "entry_duplicate"):
        value = error.get("input")
        reason = (
            _custom_reason(kind, error.get("ctx") or {}) or error["msg"]
            if kind != "string_type"
            else i18n.said("entries must be strings")
        )
        return problem(
            "files_and_interfaces_invalid", field=name, value=_shown(value), reason=reason
        )
    if loc[0] in _ID_FIELDS and (len(loc) > 1 or loc[0] != "dependsOn"):
        return problem("invalid_task_id", field=name, value=_shown(error.get("input")))
    return problem("invalid_value", field=name, reason=value_reason(kind, error))


def _dotted(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _shown(value: Any) -> Any:
    # Echo short scalars back to the caller; never echo a large or nested hostile value.
    if isinstance(value, str):
        return value if len(value) <= 200 else value[:200] + "..."
    if isinstance(value, int | float | bool) or value is None:
        return value
    return f"<{type(value).__name__}>"


def value_reason(kind: str, error: Any) -> str:
    """Why a value was refused, from a pydantic error of type `kind`, without echoing it: in
    English as data, in the user's language in the message (`i18n.said`), never in pydantic's
    own words, which are English only."""
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return i18n.said("it is required")
    return (
        _type_reason(kind, type(error.get("input")).__name__)
        or _limit_reason(kind, ctx)
        or _custom_reason(kind, ctx)
        or str(error["msg"])
    )


def _type_reason(kind: str, got: str) -> str | None:
    if kind == "string_type":
        return i18n.said("expected text, got {kind}", kind=got)
    if kind in ("tuple_type", "list_type"):
        return i18n.said("expected a list, got {kind}", kind=got)
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return i18n.said("expected a whole number, got {kind}", kind=got)
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return i18n.said("expected a mapping, got {kind}", kind=got)
    if kind in ("bool_type", "bool_parsing"):
        return i18n.said("expected true or false, got {kind}", kind=got)
    return None


def _limit_reason(kind: str, ctx: Mapping[str, Any]) -> str | None:
    if kind == "greater_than_equal":
        return i18n.said("must be at least {limit}", limit=ctx.get("ge"))
    if kind == "less_than_equal":
        return i18n.said("must be at most {limit}", limit=ctx.get("le"))
    if kind == "greater_than":
        return i18n.said("must be more than {limit}", limit=ctx.get("gt"))
    if kind == "less_than":
        return i18n.said("must be less than {limit}", limit=ctx.get("lt"))
    if kind in ("too_short", "string_too_short"):
        return i18n.said("must have at least {count} items", count=ctx.get("min_length"))
    if kind in ("too_long", "string_too_long"):
        return i18n.said("must have at most {count} items", count=ctx.get("max_length"))
    if kind == "literal_error":
        return i18n.said("must be one of {values}", values=ctx.get("expected"))
    return None


def _custom_reason(kind: str, ctx: Mapping[str, Any]) -> str | None:
    """The reasons this module's own validators give (their `PydanticCustomError` types)."""
    if kind == "blank":
        return i18n.said("must not be empty or only white space")
    if kind == "nul":
        return i18n.said("contains a NUL character, which no shell command can hold: remove it")
    if kind == "agent_name":
        return i18n.said("not an agent name: use 1-64 characters of letters, digits, . _ @ -")
    if kind == "label":
        return i18n.said(
            "not a label: use 1-64 letters, digits and . _ : / + - with no blank, starting "
            "with a letter or digit"
        )
    if kind == "label_duplicate":
        return i18n.said("{value!r} is listed more than once", value=ctx.get("value"))
    if kind == "entry_duplicate":
        return i18n.said(
            "{value!r} is listed more than once (as {first!r})",
            value=ctx.get("value"),
            first=ctx.get("first"),
        )
    return None


def envelope_json_schema() -> dict[str, Any]:
    """The JSON Schema of an envelope file, x- keys allowed as the contract says."""
    schema = Envelope.model_json_schema(by_alias=True, mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "taskfs task envelope"
    schema["patternProperties"] = {"^x-": {}}
    return schema
