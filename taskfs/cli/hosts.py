"""Where agents live: `taskfs setup claude|codex` writes the host's configuration, and
`taskfs nudge` is the progress reminder its hook runs after every tool call.

Each parses, calls the library (`taskfs.api.hosts.setup`, `taskfs.api.hosts.nudge`) and renders.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from taskfs import i18n
from taskfs.api.context import acting_agent
from taskfs.cli.group import agent_option, cli, json_option
from taskfs.cli.output import act, open_repo
from taskfs.core import shapes
from taskfs.core.layout import format_time

HOSTS = ("claude", "codex")


@cli.group()
def setup() -> None:
    """Configure an agent host: the MCP server, taskfs prime at start, the progress nudge."""


def _setup_command(host: str) -> None:
    @setup.command(
        name=host,
        help=f"Configure {'Claude Code' if host == 'claude' else 'Codex CLI'}"
        " for taskfs (merging with what is there).",
    )
    @click.option(
        "--project",
        "scope",
        flag_value="project",
        default=True,
        help="This repository's files (the default).",
    )
    @click.option("--user", "scope", flag_value="user", help="Your user-wide files.")
    @click.option("--agent", help="The agent name this host's sessions act as (TASKFS_AGENT).")
    @click.option("--dry-run", is_flag=True, help="Print what would be written; write nothing.")
    @click.option("--remove", is_flag=True, help="Undo an earlier setup.")
    @json_option
    def command(scope: str, agent: str | None, dry_run: bool, remove: bool, as_json: bool) -> int:
        from taskfs.api.hosts import setup as api

        def call() -> Any:
            name = acting_agent(agent, required=False)
            return api.setup(
                host,  # type: ignore[arg-type]
                scope,  # type: ignore[arg-type]
                start=Path.cwd(),
                agent=name,
                remove=remove,
                dry_run=dry_run,
            )

        return act(as_json, call, _report)


for _host in HOSTS:
    _setup_command(_host)


def _report(report: Any) -> tuple[dict[str, Any], str]:
    files = [
        {
            "path": str(f.target.path),
            "shown": f.target.shown,
            "format": f.target.fmt,
            "action": f.action,
            "changes": list(f.changes),
            "content": None if f.content is None else f.content.decode("utf-8"),
        }
        for f in report.files
    ]
    doc = shapes.document(
        True,
        host=report.host,
        scope=report.scope,
        agent=report.agent,
        remove=report.removing,
        dryRun=report.dry_run,
        changed=report.changed,
        files=files,
        backups=str(report.backups),
        command=report.command,
        notes=list(report.notes),
    )
    return doc, _report_text(report)


_VERBS = {
    "create": ("created", "would be created"),
    "update": ("updated", "would be updated"),
    "unchanged": ("unchanged", "unchanged"),
    "restore": ("restored", "would be restored"),
    "delete": ("deleted", "would be deleted"),
}


def _report_text(report: Any) -> str:
    lines = [] if report.removing else [i18n.say("the host runs {command}", command=report.command)]
    lines += report.notes
    for change in report.files:
        verb = _VERBS[change.action][1 if report.dry_run else 0]
        if report.dry_run and change.content is not None and change.action != "unchanged":
            lines.append(f"# {change.target.shown} ({verb}):")
            lines.append(change.content.decode("utf-8").rstrip("\n"))
            lines.append("")
            continue
        lines.append(f"{change.target.shown}: {verb}")
        lines += [f"  {c}" for c in change.changes]
    if not report.changed:
        lines.append(
            i18n.say("nothing to change") if not report.removing else i18n.say("nothing to remove")
        )
    return "\n".join(lines)


@cli.command()
@agent_option
@click.option(
    "--hook",
    type=click.Choice(HOSTS),
    help="Run as that host's PostToolUse hook: read its JSON on stdin, answer in its JSON, "
    "remind at most once a quiet period, never fail.",
)
@json_option
def nudge(agent: str | None, hook: str | None, as_json: bool) -> int:
    """The working tasks you hold, how long each has been quiet, and the reminder if one is due."""
    if hook is not None:
        from taskfs.cli.hook import nudge_hook

        return nudge_hook(hook, agent, sys.stdin, sys.stdout)
    from taskfs.api.hosts import nudge as api

    def show(answer: tuple[Any, Any]) -> tuple[dict[str, Any], str]:
        found, stale = answer
        tasks = [
            {
                "id": q.task_id,
                "lastProgress": format_time(q.last),
                "due": format_time(q.due),
                "overdue": q.overdue(found.now),
            }
            for q in found.tasks
        ]
        doc = shapes.document(
            True,
            agent=found.agent,
            quietMinutes=found.quiet_minutes,
            tasks=tasks,
            reminder=found.reminder,
        )
        lines = [
            i18n.say(
                "{id}: quiet since {since}, reminder ", id=q.task_id, since=format_time(q.last)
            )
            + (
                i18n.say("due now")
                if q.overdue(found.now)
                else i18n.say("due at {at}", at=format_time(q.due))
            )
            for q in found.tasks
        ]
        text = "\n".join(lines) or i18n.say("{agent} holds no working task", agent=found.agent)
        doc["stale"] = [s.to_json() for s in stale]
        if stale:
            text += "\n" + i18n.say("stale:") + "\n" + "\n".join(f"  {s.line()}" for s in stale)
        return doc, text

    def call() -> Any:
        from taskfs.api.lifecycle import stale

        repo = open_repo()
        found = api.nudge(repo, acting_agent(agent) or "")
        # Held work gone quiet for hours, everyone's: a sender sees what to hand on.
        return found, stale.stale_holders(repo)

    return act(as_json, call, show)
