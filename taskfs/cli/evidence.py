"""`check`, `evidence add` and `keys new`: parse, call the library, render (`check`'s body is
`taskfs.cli.checking`, which the fast path calls too)."""

from __future__ import annotations

import math
import sys
from typing import Any

import click

from taskfs import i18n
from taskfs.api.context import acting_agent
from taskfs.cli.group import agent_option, cli, json_option
from taskfs.cli.ids import TASK_ID
from taskfs.cli.options import Given, clicked
from taskfs.cli.output import act, open_repo
from taskfs.core.shapes import document
from taskfs.errors import fail

MAX_TIMEOUT = 24 * 60 * 60

# -- check ------------------------------------------------------------------------------------


def _finite(_ctx: click.Context, _param: click.Parameter, value: float | None) -> float | None:
    # NaN compares false with both bounds, so the range alone would let it reach the runner.
    if value is not None and math.isnan(value):
        raise click.BadParameter("nan is not a number of seconds")
    return value


@cli.command()
@clicked(
    "check",
    timeout={
        "type": click.FloatRange(min=0, min_open=True, max=MAX_TIMEOUT),
        "callback": _finite,
    },
)
def check(given: Given) -> int:
    """Run the acceptance check and record its evidence; exit 0 when it passed."""
    from taskfs.cli import bodies

    return bodies.answer(given)


# -- evidence add -----------------------------------------------------------------------------


@cli.group(name="evidence")
def evidence_group() -> None:
    """Evidence about a task that did not come from `taskfs check`."""


@evidence_group.command(name="add")
@click.argument("task_id", type=TASK_ID)
@click.option("--verdict", type=click.Choice(["pass", "fail"]), required=True)
@click.option("--source", required=True, help="Who or what judged: llm_judge, a person's name, ...")
@click.option("--note", help="The judgement in words.")
@click.option("--file", "note_file", help="Read the judgement from this file (- for stdin).")
@agent_option
@json_option
def evidence_add(
    *,
    task_id: str,
    verdict: str,
    source: str,
    note: str | None,
    note_file: str | None,
    agent: str | None,
    as_json: bool,
) -> int:
    """Record a judgement not produced by running the check here (an LLM judge, a person).
    It is shown beside the check runs and never counts as the passing check by itself."""
    from taskfs.api.evidence import judgements

    if note is not None and note_file is not None:
        raise click.UsageError("give the judgement with --note or with --file, not both")

    def call() -> Any:
        return judgements.add_judgement(
            open_repo(),
            task_id,
            verdict="pass" if verdict == "pass" else "fail",
            source=source,
            note=note,
            note_file=note_file,
            agent=acting_agent(agent, required=False),
            stream=sys.stdin.buffer if note_file == "-" else None,
        )

    def show(result: Any) -> tuple[dict[str, Any], str]:
        doc = document(
            True,
            id=result.id,
            evidence=result.evidence,
            verdict=result.record.verdict,
            verdictSource=result.record.verdict_source,
            commit=result.commit,
        )
        text = i18n.say(
            "{evidence}: {verdict} from {source} (recorded judgement: it does not count as the "
            "acceptance check)",
            evidence=result.evidence,
            verdict=result.record.verdict,
            source=result.record.verdict_source,
        )
        return doc, text

    return act(as_json, call, show)


# -- keys new ---------------------------------------------------------------------------------


@cli.group(name="keys")
def keys_group() -> None:
    """Ed25519 signing keys: private part outside the repository, public part committed."""


@keys_group.command(name="new")
@click.option("--runner", "runner", metavar="NAME", help="A runner key, to sign evidence.")
@click.option(
    "--agent",
    "agent",
    metavar="NAME",
    envvar="TASKFS_AGENT",
    help="An agent key, to sign messages (default: $TASKFS_AGENT).",
)
@json_option
@click.pass_context
def keys_new(ctx: click.Context, runner: str | None, agent: str | None, as_json: bool) -> int:
    """Make a signing key for an agent (--agent NAME) or a runner (--runner NAME)."""
    from taskfs.api.capabilities import keys

    typed_agent = ctx.get_parameter_source("agent") == click.core.ParameterSource.COMMANDLINE
    if runner is not None and typed_agent:
        raise click.UsageError("name one of --runner NAME or --agent NAME, not both")

    def call() -> Any:
        if runner is not None:
            if not runner:
                raise fail("invalid_agent", value=runner)
            return keys.new_key(open_repo(), "runner", runner)
        return keys.new_key(open_repo(), "agent", acting_agent(agent) or "")

    def show(result: Any) -> tuple[dict[str, Any], str]:
        doc = key_document(result)
        text = i18n.say(
            "{kind} key {name} ({key_id})\n"
            "  public:  {public} (committed)\n"
            "  private: {private} (keep it off the repository)\n"
            "  {key}",
            kind=result.kind,
            name=result.name,
            key_id=result.key_id,
            public=result.public_path,
            private=result.private_path,
            key=result.public_key,
        )
        return doc, text

    return act(as_json, call, show)


def key_document(result: Any) -> dict[str, Any]:
    """The answer about a key taskfs made or took in (`keys new`, `keys import`)."""
    return document(
        True,
        kind=result.kind,
        name=result.name,
        publicKey=result.public_key,
        keyId=result.key_id,
        path=result.public_path,
        privateKey=str(result.private_path),
        commit=result.commit,
        interlinkId=result.interlink_id,
    )
