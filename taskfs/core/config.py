"""Repository settings, `.taskfs/config.yaml` (committed, so every clone agrees)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, ValidationError

from taskfs.core.layout import CONFIG_PATH, relative_folder
from taskfs.core.lint import DEFAULT_OBJECTIVE_MIN_WORDS, LintCode, Settings
from taskfs.errors import Problem, problem

SCHEMA_VERSION = 1


class LintConfig(BaseModel):
    """`taskfs lint` settings: which warnings to leave out, and how long an objective must be."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    disable: tuple[LintCode, ...] = Field(
        default=(), description="Warning codes that taskfs lint and review leave out."
    )
    objective_min_words: Annotated[int, Strict()] = Field(
        default=DEFAULT_OBJECTIVE_MIN_WORDS,
        alias="objectiveMinWords",
        ge=1,
        le=200,
        description="An objective with fewer words is objective_too_short.",
    )

    def settings(self) -> Settings:
        return Settings(frozenset(self.disable), self.objective_min_words)


class NudgeConfig(BaseModel):
    """The progress nudge a host shows an agent (`taskfs nudge --hook`, installed by setup)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    quiet_minutes: Annotated[float, Strict()] = Field(
        default=15,
        alias="quietMinutes",
        gt=0,
        le=24 * 60,
        description="Remind an agent holding a working task after this many minutes without a "
        "progress report from it.",
    )
    sender_quiet_minutes: Annotated[float, Strict()] = Field(
        default=60,
        alias="senderQuietMinutes",
        gt=0,
        le=24 * 60 * 7,
        description="Tell a task's sender (inbox, prime, sent) that the agent holding it has "
        "gone quiet after this many minutes with no transition, message or commit touching the "
        "files it owns.",
    )
    stale_hours: Annotated[float, Strict()] = Field(
        default=24,
        alias="staleHours",
        gt=0,
        le=24 * 365,
        description="Report a held task as stale (nudge, prime, board) after this many hours "
        "with no transition, message or commit touching the files it owns; its sender may then "
        "hand it to someone else with taskfs reassign.",
    )


def _committed_sandbox(value: str) -> str:
    if value == "off":
        # A committed file is written by every collaborator: it may ask for more containment,
        # never switch it off on the machines of the people who run the checks.
        raise ValueError(
            "off can only be chosen by whoever runs the check (--sandbox off or "
            "TASKFS_SANDBOX=off), not by a committed file; use auto or on"
        )
    if value not in ("auto", "on"):
        raise ValueError(f"{value!r} is not auto or on")
    return value


class CheckConfig(BaseModel):
    """How `taskfs check` (and the watcher) runs acceptance commands."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    sandbox: Annotated[str, Strict(), AfterValidator(_committed_sandbox)] = Field(
        default="auto",
        description="auto: in a bubblewrap sandbox when the host has a working one, else "
        "without (said on stderr and in the evidence); on: refuse to run a check without it.",
    )


def _age(value: str) -> str:
    from taskfs.core.ages import parse_age

    parse_age(value)  # ValueError names what an age looks like
    return value


class ArchiveConfig(BaseModel):
    """Which terminal tasks `taskfs archive` takes out of the working tree, and who may."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    older_than: Annotated[str, Strict(), AfterValidator(_age)] = Field(
        default="30d",
        alias="olderThan",
        description="Archive terminal tasks whose last transition is older than this (30d, "
        "12h, 90m, 2w; a bare number counts days), unless `--older-than` says otherwise.",
    )
    by: tuple[Annotated[str, Strict()], ...] = Field(
        default=("operator",),
        description="Who may archive: agent names, `operator` for the person at the terminal "
        "(no agent named). An archive commit by anyone else is named by audit.",
    )


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    version: Annotated[int, Strict()] = SCHEMA_VERSION
    tasks_dir: Annotated[str, Strict(), AfterValidator(relative_folder)] = Field(
        default="tasks", alias="tasksDir", description="Where task folders live."
    )
    check_timeout_seconds: Annotated[int, Strict()] = Field(
        default=600,
        alias="checkTimeoutSeconds",
        ge=1,
        le=24 * 60 * 60,
        description="The acceptance check's time limit when the envelope gives none.",
    )
    delegation_max_depth: Annotated[int, Strict()] = Field(
        default=4,
        alias="delegationMaxDepth",
        ge=1,
        le=64,
        description="The most delegation hops allowed above a task: a task without parent is "
        "at depth 0, its child at 1, and a task deeper than this is refused.",
    )
    sync_timeout_seconds: Annotated[int, Strict()] = Field(
        default=600,
        alias="syncTimeoutSeconds",
        ge=1,
        le=60 * 60,
        description="How long `sync` and `claim --sync` keep trying a push that lost a race "
        "or found the remote's branch locked by another push, before sync_push_rejected.",
    )
    require_signed_messages: Annotated[bool, Strict()] = Field(
        default=False,
        alias="requireSignedMessages",
        description="Refuse unsigned messages. When false, an unsigned message is accepted only "
        "from an agent that has no registered public key.",
    )
    lint: LintConfig = Field(default_factory=LintConfig, description="taskfs lint settings.")
    nudge: NudgeConfig = Field(
        default_factory=NudgeConfig, description="The progress nudge shown to agents."
    )
    check: CheckConfig = Field(
        default_factory=CheckConfig, description="Where acceptance commands run."
    )
    archive: ArchiveConfig = Field(
        default_factory=ArchiveConfig, description="What taskfs archive takes, and who may."
    )
    require_signed_transitions: Annotated[bool, Strict()] = Field(
        default=False,
        alias="requireSignedTransitions",
        description="Refuse to write a status file its agent did not sign, and have audit name "
        "every unsigned one. When false, only agents that have a registered key must sign.",
    )

    def to_document(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, mode="json")


def parse_config(data: Any, path: str = CONFIG_PATH) -> tuple[Config | None, list[Problem]]:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return None, [problem("config_invalid", path=path, reason="not a mapping")]
    try:
        return Config.model_validate(data), []
    except ValidationError as exc:
        reasons = [
            f"{'.'.join(str(p) for p in err['loc']) or 'file'}: {err['msg']}"
            for err in exc.errors(include_url=False)
        ]
        return None, [problem("config_invalid", path=path, reason="; ".join(reasons))]
