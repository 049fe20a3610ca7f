"""Refusals as the MCP adapter says them: the next step named as the tool to call.

The library's messages say what to do next in the command line's words (`taskfs check ID`,
`--in-reply-to`). An agent that has only the MCP tools cannot run those, so every refusal
leaving the server goes through `for_tools`, one mechanism for all tools: the command-line
spellings are rewritten into the tools and arguments that do the same, and a refusal that
names the tool that fixes it in the machine-readable `tool` (the one it names, else `FIX`'s);
the message itself stays the catalog's, in the user's language.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from taskfs.errors import Problem

# A command-line step -> the tool (or argument) that does the same here.
COMMANDS: tuple[tuple[str, str], ...] = (
    (r'taskfs send \S+ --status failed "why" \(the text is the reason\)', "agent_fail(reason)"),
    (r'taskfs send \S+ --status canceled "why" \(the text is the reason\)', "agent_cancel(reason)"),
    (r'--reason "why"', "reason"),
    (r"taskfs send (?:\S+ )?--in-reply-to \S+", "agent_answer"),
    (r"taskfs send (?:\S+ )?--status needs_input", "agent_ask"),
    (r"taskfs send (?:\S+ )?--status result", "agent_check"),
    (r"taskfs check(?: --request)?(?: [A-Za-z0-9][\w.-]*)?", "agent_check"),
    (r"taskfs complete(?: [A-Za-z0-9][\w.-]*)?", "agent_complete"),
    (r"taskfs claim(?: [A-Za-z0-9][\w.-]*)?", "agent_claim"),
    (r"taskfs (?:ls|ready|inbox)(?: --\S+(?: \S+)?)*", "agent_inbox"),
    (r"taskfs show(?: [A-Za-z0-9][\w.-]*)?", "agent_status"),
    (r"taskfs (?:log|messages)(?: [A-Za-z0-9][\w.-]*)?", "agent_history"),
    (r"taskfs lint", "agent_status"),
    (r"taskfs bind(?: [A-Za-z0-9][\w.-]*)?", "agent_bind"),
    (r"taskfs refuse(?: [A-Za-z0-9][\w.-]*)?", "agent_refuse"),
    (r"taskfs retry(?: [A-Za-z0-9{][\w.{}-]*)?(?: --to \S+)?", "agent_retry"),
    (r"taskfs reassign(?: [A-Za-z0-9{][\w.{}-]*)?(?: --to \S+)?", "agent_reassign"),
    (r"taskfs sent(?: --\S+(?: \S+)?)*", "agent_tasks"),
    (r"`?taskfs intake propose(?: [A-Za-z0-9][\w.-]*(?: FILE)?)?`?", "agent_propose"),
    (r"`?taskfs amend [A-Za-z0-9{][\w.{}-]* --accept`?", "agent_amend(task_id, accept=true)"),
    (r"`?taskfs amend(?: [A-Za-z0-9{][\w.{}-]*)?(?: FILE)?`?", "agent_amend"),
    (r"`?taskfs discover(?: [A-Za-z0-9{][\w.{}-]*)?`?", "agent_discover"),
    (r"`?taskfs intake accept(?: [A-Za-z0-9][\w.-]*)?(?: --agent \S+)?`?", "agent_accept"),
    (
        r"`?taskfs intake add(?: [A-Za-z0-9{][\w.{}-]*)?(?: FILE)?`?",
        "agent_send(envelope, task_id)",
    ),
    (r"taskfs send(?: [A-Za-z0-9][\w.-]*)?", "agent_update"),
    (r"--in-reply-to", "in_reply_to"),
    (r"--reason", "reason"),
    (r"--agent or TASKFS_AGENT", "taskfs mcp --agent NAME (or TASKFS_AGENT)"),
)
_COMMANDS = [(re.compile(pattern), tool) for pattern, tool in COMMANDS]

# The tool that fixes each refusal, for messages that name none.
FIX: dict[str, str] = {
    "task_not_found": "agent_inbox",
    "invalid_task_id": "agent_inbox",
    "transition_not_allowed": "agent_status",
    "agent_not_allowed": "agent_status",
    "reason_required": "agent_fail",
    "dependencies_unresolved": "agent_inbox",
    "completion_requires_evidence": "agent_check",
    "evidence_stale": "agent_check",
    "work_uncommitted": "agent_check",
    "message_not_found": "agent_history",
    "message_ambiguous": "agent_history",
    "message_misaddressed": "agent_history",
    "ownership_conflict": "agent_status",
    "ownership_not_held": "agent_status",
    "tool_not_held": "agent_bind",
    "delegation_sender_mismatch": "agent_status",
    "parent_not_found": "agent_inbox",
    "no_conversation": "send_message",
    "usage": "agent_status",
}
ENVELOPE_FIX = "agent_send"
TOOL_RE = re.compile(
    r"\b(?:agent_[a-z]+|send_message|cancel_task|message_status|conversation_history|"
    r"list_pending)\b"
)


def rewrite(message: str) -> str:
    """`message` with its command-line steps spelled as tool calls."""
    for pattern, tool in _COMMANDS:
        message = pattern.sub(tool, message)
    return message


def fix_for(code: str, tool: str) -> str | None:
    """The tool that fixes `code`, raised by `tool`."""
    if code in FIX:
        return FIX[code]
    if tool == "agent_send":
        return ENVELOPE_FIX  # an envelope refusal: send it again, mended
    return None


def warnings_for_tools(warnings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An answer's warnings (`warnings`, as JSON) as a model using only the tools acts on them:
    their command-line steps spelled as tools, the tool each names in `tool`."""
    out = []
    for found in warnings:
        message = rewrite(str(found.get("message", "")))
        named = TOOL_RE.search(message)
        out.append({**found, "message": message, **({"tool": named.group(0)} if named else {})})
    return out


def for_tools(problems: tuple[Problem, ...], tool: str) -> tuple[Problem, ...]:
    """The refusals of `tool` as a model using only the tools can act on them."""
    out = []
    for found in problems:
        message = rewrite(found.message)
        named = TOOL_RE.search(message)
        fix = named.group(0) if named else fix_for(found.code, tool)
        data = {**found.data, "tool": fix} if fix else dict(found.data)
        out.append(replace(found, message=message, data=data))
    return tuple(out)
