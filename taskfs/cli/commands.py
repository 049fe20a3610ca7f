"""The commands of contract section 4. Each is a few lines: parse, call the library, render."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from taskfs import i18n
from taskfs.api.context import acting_agent
from taskfs.cli import bodies, render
from taskfs.cli.group import agent_option, cli, json_option
from taskfs.cli.ids import TASK_ID
from taskfs.cli.options import Given, clicked
from taskfs.cli.output import act, open_repo, repo_if_any
from taskfs.cli.states import StateChoice
from taskfs.core import shapes


@cli.command()
@agent_option
@click.option("--hooks", is_flag=True, help="Also install the git pre-commit hook (taskfs guard).")
@click.option(
    "--gitignore",
    is_flag=True,
    help="Also add the usual build outputs (__pycache__/, *.pyc, node_modules/, ...) to "
    ".gitignore.",
)
@json_option
def init(agent: str | None, hooks: bool, gitignore: bool, as_json: bool) -> int:
    """Make tasks/ and .taskfs/config.yaml (and a git repository if there is none)."""
    from taskfs.api import context
    from taskfs.api.ownership import owners as ownership
    from taskfs.api.tasks import submit

    def call() -> tuple[submit.Initialised, ownership.HookInstalled | None]:
        done = submit.init(
            Path.cwd(), acting_agent(agent, required=False) or "taskfs", gitignore=gitignore
        )
        hook = (
            ownership.install_hook(context.open(done.root).repo, sys.executable) if hooks else None
        )
        return done, hook

    def show(
        results: tuple[submit.Initialised, ownership.HookInstalled | None],
    ) -> tuple[dict[str, object], str]:
        result, hook = results
        doc = shapes.document(
            True,
            root=str(result.root),
            created=list(result.created),
            appended=list(result.appended),
            gitignore={"added": list(result.ignored), "missing": list(result.unignored)},
        )
        lines = [i18n.say("created {path}", path=p) for p in result.created]
        lines += [
            i18n.say("appended to {path}: {patterns}", path=p, patterns=" ".join(result.ignored))
            for p in result.appended
        ]
        text = "\n".join(lines) or i18n.say("already initialised")
        if result.unignored:
            text += "\n" + i18n.say(
                "tip: .gitignore does not name the usual build outputs {patterns}; `taskfs init "
                "--gitignore` adds them (bytecode or a cache under a task's files keeps its "
                "check from counting)",
                patterns=" ".join(result.unignored),
            )
        if hook is not None:
            doc["hook"] = {"path": str(hook.path), "chained": hook.chained and str(hook.chained)}
            text += f"\n{'installed' if hook.changed else 'kept'} the pre-commit hook {hook.path}"
            if hook.chained:
                text += f" (it runs {hook.chained.name} first)"
        return doc, text

    return act(as_json, call, show)


@cli.command()
@clicked("new")
def new(given: Given) -> int:
    """Submit envelopes (FILE... or - for stdin): all of them in one commit, or none.

    Every key an envelope may hold is in .taskfs/schema/envelope.schema.json, the JSON Schema
    taskfs init writes (docs/envelope.md explains each).
    """
    return bodies.answer(given)


@cli.command()
@click.argument("paths", nargs=-1)
@json_option
def validate(paths: tuple[str, ...], as_json: bool) -> int:
    """Validate envelope files (all of tasks/ when none is named); changes nothing."""
    from taskfs.api.tasks import queries

    return act(
        as_json,
        lambda: queries.validate(repo_if_any() if paths else open_repo(), list(paths)),
        render.validation,
    )


@cli.command()
@clicked("show")
def show(given: Given) -> int:
    """The envelope and current state of a task."""
    return bodies.answer(given)


@cli.command(name="ls")
@clicked("ls")
def ls_command(given: Given) -> int:
    """All tasks with their state."""
    return bodies.answer(given)


@cli.command()
@clicked("ready")
def ready(given: Given) -> int:
    """The tasks that can be claimed now (by --agent, when given)."""
    return bodies.answer(given)


def _artifacts(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[Any]:
    parsed = []
    for value in values:
        name, sep, location = value.partition("=")
        if not sep or not name.strip() or not location.strip():
            raise click.BadParameter(f"{value!r} is not NAME=LOCATION", ctx, param)
        from taskfs.core.records import Artifact

        parsed.append(Artifact(name=name.strip(), location=location.strip()))
    return parsed


@cli.command()
@clicked("claim")
def claim(given: Given) -> int:
    """Take a submitted task: submitted -> working."""
    return bodies.answer(given)


@cli.command()
@clicked("move", state={"type": StateChoice(), "metavar": "STATE"})
def move(given: Given) -> int:
    """Any transition of the lifecycle table."""
    return bodies.answer(given)


@cli.command()
@clicked("refuse")
def refuse(given: Given) -> int:
    """Refuse a submitted task: submitted -> rejected."""
    return bodies.answer(given)


@cli.command()
@clicked("complete", artifacts={"callback": _artifacts})
def complete(given: Given) -> int:
    """working -> completed, only with passing evidence of the acceptance check."""
    return bodies.answer(given)


@cli.command()
@click.argument("task_id", type=TASK_ID)
@json_option
def log(task_id: str, as_json: bool) -> int:
    """The task's history: transitions, evidence, messages."""
    from taskfs.api.intake import requests
    from taskfs.api.views import reports

    def call() -> reports.TaskReport | reports.IntakeReport:
        repo = open_repo()
        if requests.is_request(repo, task_id):
            return reports.intake_report(repo, task_id)
        return reports.task_report(repo, task_id, neighbours=False)

    return act(as_json, call, render.log)


@cli.command()
@json_option
def audit(as_json: bool) -> int:
    """Check the ledger against git history; exit 1 when anything is wrong."""
    from taskfs.api.review import audit as audit_api

    return act(as_json, lambda: audit_api.audit(open_repo()), render.audit)


@cli.command()
@click.option(
    "--older-than",
    "older_than",
    metavar="AGE",
    help="Archive terminal tasks whose last transition is older than AGE (30d, 12h, 90m, 2w; "
    "default: archive.olderThan in .taskfs/config.yaml, else 30d).",
)
@agent_option
@json_option
def archive(older_than: str | None, agent: str | None, as_json: bool) -> int:
    """Move old terminal tasks out of the working tree in one audited commit; history keeps them."""
    from taskfs.api.tasks import archive as archiving

    def show(done: archiving.Archived) -> tuple[dict[str, Any], str]:
        doc = shapes.document(
            True,
            archived=list(done.ids),
            count=len(done.ids),
            commit=done.commit,
            files=list(done.files),
            skipped=list(done.skipped),
            skippedWhy=dict(sorted(done.skipped_why.items())),
            olderThan=done.older_than,
        )
        text = (
            i18n.say("archived 1 task older than {age}", age=done.older_than)
            if len(done.ids) == 1
            else i18n.say(
                "archived {count} tasks older than {age}", count=len(done.ids), age=done.older_than
            )
        )
        loose = [t for t in done.skipped if done.skipped_why.get(t) == "uncommitted"]
        requests = [t for t in done.skipped if done.skipped_why.get(t) == "request"]
        if loose:
            text += "\n" + i18n.say(
                "left in place (files no commit holds): {ids}", ids=", ".join(loose)
            )
        if requests:
            text += "\n" + i18n.say(
                "left in place (ended requests, not tasks: the archive takes tasks only): {ids}",
                ids=", ".join(requests),
            )
        return doc, text

    return act(
        as_json,
        lambda: archiving.archive(open_repo(), acting_agent(agent, required=False), older_than),
        show,
    )
