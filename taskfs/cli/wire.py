"""interlink's wire at the command line: `keys add|import|ls`, `interlink export|import`.

Each parses, calls one library function (`taskfs.api.capabilities.keys`,
`taskfs.api.messages.wire`), and renders.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from taskfs import i18n
from taskfs.api.context import acting_agent
from taskfs.cli.evidence import key_document, keys_group
from taskfs.cli.group import agent_option, cli, json_option
from taskfs.cli.ids import TASK_ID
from taskfs.cli.output import act, open_repo
from taskfs.core import shapes
from taskfs.errors import fail

name_option = click.option(
    "--agent", "agent", metavar="NAME", envvar="TASKFS_AGENT", help="The key's local name."
)


@keys_group.command(name="add")
@name_option
@click.option("--public", "public", metavar="ID", required=True, help="The peer's interlink id.")
@json_option
def keys_add(agent: str | None, public: str, as_json: bool) -> int:
    """Admit a peer's key (interlink id) under a local name, committed (like peers.json)."""
    from taskfs.api.capabilities import keys

    def show(done: Any) -> tuple[dict[str, Any], str]:
        doc = _agent_key_document(done)
        return doc, f"admitted {done.interlink_id} as {done.name} ({done.public_path})"

    return act(as_json, lambda: keys.add_key(open_repo(), acting_agent(agent) or "", public), show)


def _agent_key_document(done: Any, **extra: Any) -> dict[str, Any]:
    """The answer about a peer's key admitted or revoked (`keys add`, `keys remove`)."""
    return shapes.document(
        True,
        kind="agent",
        name=done.name,
        interlinkId=done.interlink_id,
        keyId=done.key_id,
        path=done.public_path,
        **extra,
        commit=done.commit,
    )


@keys_group.command(name="import")
@name_option
@click.option(
    "--seed-file",
    "seed_file",
    metavar="FILE",
    required=True,
    help="An interlink secret key file (its seed, URL-safe base64, one line).",
)
@json_option
def keys_import(agent: str | None, seed_file: str, as_json: bool) -> int:
    """Use an existing interlink secret key as NAME's agent key (one identity, both tools)."""
    from taskfs.api.capabilities import keys

    def call() -> Any:
        from taskfs.api.context import read_seed_file

        name = acting_agent(agent) or ""
        try:
            text = read_seed_file(seed_file).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise fail("key_invalid", path=seed_file, reason=str(exc)) from None
        return keys.import_key(open_repo(), name, text)

    def show(done: Any) -> tuple[dict[str, Any], str]:
        doc = key_document(done)
        text = (
            f"agent key {done.name} ({done.interlink_id})\n"
            f"  public:  {done.public_path} (committed)\n"
            f"  private: {done.private_path} (keep it off the repository)"
        )
        return doc, text

    return act(as_json, call, show)


@keys_group.command(name="ls")
@json_option
def keys_ls(as_json: bool) -> int:
    """Every committed key: name, interlink id and kind."""
    from taskfs.api.capabilities import keys

    def show(found: list[Any]) -> tuple[dict[str, Any], str]:
        rows = [
            {
                "name": k.name,
                "interlinkId": k.interlink_id,
                "kind": k.kind,
                "keyId": k.key_id,
                "private": k.private,
            }
            for k in found
        ]
        text = "\n".join(f"{k.kind:6} {k.name:20} {k.interlink_id}" for k in found)
        return shapes.document(True, keys=rows), text or i18n.say("no keys")

    return act(as_json, lambda: keys.list_keys(open_repo()), show)


@keys_group.command(name="remove")
@click.option(
    "--agent", "agent", metavar="NAME", required=True, help="The agent key to revoke (a peer)."
)
@click.option("--reason", "reason", metavar="TEXT", help="Why, recorded with the revocation.")
@click.option(
    "--by",
    "by",
    metavar="NAME",
    envvar="TASKFS_AGENT",
    help="Who revokes it, the commit's author (default: $TASKFS_AGENT, else operator).",
)
@json_option
def keys_remove(agent: str, reason: str | None, by: str | None, as_json: bool) -> int:
    """Revoke an agent key (like interlink's remove_peer): recorded, committed, audited."""
    from taskfs.api.capabilities import keys

    def call() -> Any:
        who = acting_agent(by, required=False) or "operator"
        return keys.remove_key(open_repo(), acting_agent(agent) or "", who, reason)

    def show(done: Any) -> tuple[dict[str, Any], str]:
        doc = _agent_key_document(done, record=done.record_path)
        return doc, f"revoked {done.name} ({done.interlink_id}); recorded in {done.record_path}"

    return act(as_json, call, show)


@cli.group(name="interlink")
def interlink_group() -> None:
    """interlink's SignedMessage JSON in and out of the ledger."""


@interlink_group.command(name="export")
@click.option("--task", "task", metavar="ID", type=TASK_ID, help="Only the messages of this task.")
@click.argument("msg_ids", nargs=-1, metavar="[MSG_ID]...")
@json_option
def interlink_export(task: str | None, msg_ids: tuple[str, ...], as_json: bool) -> int:
    """Print messages as interlink SignedMessage JSON, one a line, exactly as signed."""
    from taskfs.api.messages import wire

    def show(lines: list[str]) -> tuple[dict[str, Any], str]:
        return shapes.document(True, messages=[json.loads(line) for line in lines]), "\n".join(
            lines
        )

    return act(as_json, lambda: wire.export_lines(open_repo(), task, msg_ids), show)


@interlink_group.command(name="import")
@click.argument("source", required=False, default="-", metavar="[FILE|-]")
@agent_option
@json_option
def interlink_import(source: str, agent: str | None, as_json: bool) -> int:
    """Record interlink messages addressed to you, after interlink's inbound gate."""
    from taskfs.api.messages import wire

    def call() -> Any:
        from taskfs.api.context import read_interlink_input

        me = acting_agent(agent) or ""
        text = read_interlink_input(source, sys.stdin.buffer)
        # Not splitlines(): U+2028 and friends are text inside a JSON string, not line ends.
        lines = [
            line.removesuffix("\r") for line in text.decode("utf-8", "surrogateescape").split("\n")
        ]
        return wire.import_lines(open_repo(), me, lines)

    def show(done: Any) -> tuple[dict[str, Any], str]:
        rows = [line_view(r) for r in done.lines]
        doc = shapes.document(done.ok, agent=done.agent, lines=rows, commits=list(done.commits))
        text = "\n".join(
            f"line {r.line}: accepted {r.msg_id}" + (f" ({r.file})" if r.file else "")
            if r.accepted
            else f"line {r.line}: refused {r.code}: {r.problems[0].message}"
            for r in done.lines
        )
        return doc, text or "no messages"

    return act(as_json, call, show)


def line_view(report: Any) -> dict[str, Any]:
    moved = report.transition
    return {
        "line": report.line,
        "msg_id": report.msg_id,
        "accepted": report.accepted,
        "code": report.code,
        "errors": [p.to_json() for p in report.problems],
        "task_id": report.task_id,
        "file": report.file,
        "transition": {"from": moved[0], "to": moved[1]} if moved else None,
        "opened": report.opened,
        "commit": report.commit,
    }
