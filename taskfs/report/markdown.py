"""Markdown for pull requests: one task (`show --format markdown`) and a review of a range.

Everything from the ledger is untrusted text: it is escaped so that it can neither break a
table nor inject HTML into the page it is pasted in.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from taskfs.report.style import duration, short_time

if TYPE_CHECKING:
    from taskfs.api.review.audit import Finding
    from taskfs.api.review.ranges import AddedTask, AddedTransition, Review
    from taskfs.api.views.entries import EvidenceRow, MessageRow
    from taskfs.api.views.reports import TaskReport
    from taskfs.core.envelope import Envelope
    from taskfs.errors import Problem

VERDICT_MARKS = {"pass": "✅", "fail": "❌"}


# -- escaping -------------------------------------------------------------------------------


def text(value: str) -> str:
    """Plain text for a paragraph or a table cell: no HTML, no table breaks, one line."""
    escaped = html.escape(value, quote=False).replace("|", "\\|")
    return re.sub(r"\r?\n", "<br>", escaped.strip())


def code(value: str) -> str:
    """Inline code that survives any backticks and pipes inside it."""
    one_line = " ".join(value.split("\n"))
    longest = max((len(run) for run in re.findall(r"`+", one_line)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if one_line.startswith("`") or one_line.endswith("`") else ""
    body = one_line.replace("|", "\\|")
    return f"{fence}{pad}{body}{pad}{fence}"


def block(value: str, info: str = "text") -> str:
    longest = max((len(run) for run in re.findall(r"`{3,}", value)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{info}\n{value.rstrip()}\n{fence}"


def folded(summary: str, body: str) -> str:
    return f"<details><summary>{html.escape(summary)}</summary>\n\n{body}\n\n</details>"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def quote(value: str) -> str:
    return "\n".join("> " + text(line) if line.strip() else ">" for line in value.splitlines())


def _when(at: str) -> str:
    return short_time(at, seconds=True)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# -- one task -------------------------------------------------------------------------------


def task(report: TaskReport, *, heading: str = "###") -> str:
    t = report.task
    env = t.envelope
    parts = [f"{heading} Task {code(t.id)}: {t.state}", quote(env.objective), _facts(report)]
    parts.append(contract(env))
    parts.append(f"{heading}# History\n\n" + _history(report))
    parts.append(f"{heading}# Evidence\n\n" + _evidence_summary(report.evidence))
    if report.messages:
        parts.append(f"{heading}# Conversation\n\n" + conversation(report.messages))
    if report.artifacts:
        parts.append(
            f"{heading}# Artifacts\n\n"
            + "\n".join(f"- **{text(a.name)}**: {code(a.location)}" for a in report.artifacts)
        )
    if t.problems:
        parts.append(
            f"{heading}# Problems\n\n"
            + "\n".join(f"- {code(p.code)}: {text(p.message)}" for p in t.problems)
        )
    return "\n\n".join(parts) + "\n"


def _facts(report: TaskReport) -> str:
    env = report.task.envelope
    rows = [
        ["from → to", f"{text(env.sender or '-')} → {text(env.recipient or 'anyone')}"],
        ["context", text(env.context_id)],
    ]
    if report.task.chain.holder:
        rows.append(["held by", text(report.task.chain.holder)])
    if report.dependencies:
        deps = ", ".join(f"{code(d)} ({s or 'not in the ledger'})" for d, s in report.dependencies)
        rows.append(["depends on", deps])
    if env.parent:
        rows.append(["delegated from", code(env.parent)])
    if report.children:
        rows.append(["delegated to", ", ".join(code(c) for c in report.children)])
    return table(["", ""], rows)


def contract(env: Envelope) -> str:
    check = env.acceptance_check
    timeout = f" (time limit {check.timeout_seconds} s)" if check.timeout_seconds else ""
    lines = [
        f"- **Output format:** {text(env.output_format)}",
        f"- **Tools and sources:** {text(env.tool_and_source_guidance)}",
        f"- **Boundaries:** {text(env.boundaries)}",
        f"- **Owns:** {', '.join(code(e) for e in env.files_and_interfaces)}",
        f"- **Acceptance check:** {code(check.pass_fail_command)}{timeout}",
        f"- **End-to-end verification:** {text(check.end_to_end_verification)}",
    ]
    if env.tools_allowed:
        lines.append(f"- **Tools requested:** {', '.join(code(x) for x in env.tools_allowed)}")
    return "\n".join(lines)


def _history(report: TaskReport) -> str:
    rows = []
    for row in report.timeline():
        if row.kind != "transition":
            continue
        state = f"~~{row.what}~~ (superseded)" if row.superseded else row.what
        rows.append([text(_when(row.at)), state, text(row.actor), text(row.detail)])
    return table(["when", "state", "by", "reason"], rows)


def _evidence_summary(rows: Sequence[EvidenceRow]) -> str:
    if not rows:
        return evidence_list(rows)
    passed = sum(1 for row in rows if row.verdict == "pass")
    latest = rows[-1]
    summary = (
        f"{_count(len(rows), 'acceptance run')}: {passed} passed, {len(rows) - passed} did not; "
        f"the latest {'passed' if latest.passed else 'did not pass'} "
        f"{VERDICT_MARKS.get(latest.verdict, '⚠️')}"
    )
    return summary + "\n\n" + evidence_list(rows)


def evidence_list(rows: Sequence[EvidenceRow], *, with_task: bool = False) -> str:
    if not rows:
        return "_No acceptance run recorded._"
    return "\n\n".join(_evidence(row, with_task) for row in rows)


def _evidence(row: EvidenceRow, with_task: bool) -> str:
    mark = VERDICT_MARKS.get(row.verdict, "⚠️")
    facts = [
        f"exit {row.exit_code}" if row.exit_code is not None else "",
        text(row.source),
        duration(row.duration_seconds) if row.duration_seconds is not None else "",
        f"commit {code(row.commit[:12])}" if row.commit else "",
        "**fresh checkout**" if row.fresh else "",
        text(_when(row.at)),
        text(row.problem),
        "⚠️ work_uncommitted: " + ", ".join(code(p) for p in row.uncommitted)
        if row.uncommitted
        else "",
    ]
    who = f"{code(row.task)} " if with_task else ""
    head = f"{mark} {who}**{row.verdict}** {code(row.command or '(no command)')}"
    head += " · " + " · ".join(f for f in facts if f)
    output = "\n\n".join(
        f"{name}:\n\n{block(value)}"
        for name, value in (("stdout", row.stdout), ("stderr", row.stderr))
        if value.strip()
    )
    return head + ("\n\n" + folded("output", output) if output else "")


def conversation(rows: Sequence[MessageRow]) -> str:
    """The task's messages in full, oldest first: who to whom, the status, what each answers.

    A message's text is quoted as it was written (lines kept); ids are shortened to the eight
    characters that name them in the reply that follows."""
    shown = []
    for m in rows:
        if m.problem and not m.sender:
            shown.append(f"⚠️ {code(m.path)}: {text(m.problem)}")
            continue
        facts = [
            f"**{text(m.sender or '?')} → {text(m.to or '?')}**",
            text(m.status) if m.status else "",
            f"answers {code(m.in_reply_to[:8])}" if m.in_reply_to else "",
            text(_when(m.at)),
            code(m.msg_id[:8]) if m.msg_id else "",
        ]
        body = quote(m.text) if m.text.strip() else "> _(no text)_"
        shown.append(" · ".join(f for f in facts if f) + "\n\n" + body)
    return "\n\n".join(shown)


def messages_table(rows: Sequence[MessageRow], *, with_task: bool = False) -> str:
    header = (["task"] if with_task else []) + ["when", "from → to", "status", "text"]
    body = [
        ([code(m.task)] if with_task else [])
        + [
            text(_when(m.at)),
            text(f"{m.sender or '?'} → {m.to or '?'}"),
            text(m.status or "-"),
            text(m.text or m.problem),
        ]
        for m in rows
    ]
    return table(header, body)


# -- a review of a range --------------------------------------------------------------------


def review(result: Review) -> str:
    verdict = (
        "✅ nothing to fix"
        if result.ok and not result.warnings
        else f"{'❌' if result.errors else '⚠️'} "
        f"{_count(len(result.errors), 'error')}, {_count(len(result.warnings), 'warning')}"
    )
    parts = [
        f"## taskfs review of {code(result.revisions)}",
        f"{_count(result.commits, 'commit')}: {_count(len(result.tasks), 'task')} added, "
        f"{_count(len(result.transitions), 'transition')}, "
        f"{_count(len(result.evidence), 'acceptance run')}, "
        f"{_count(len(result.messages), 'message')}"
        + (f", {_count(len(result.archived), 'task')} archived" if result.archived else "")
        + f". **{verdict}**",
    ]
    if not result.tip_is_checkout:
        parts.append(f"_The checks below describe the checkout, which is not {code(result.tip)}._")
    if result.errors:
        parts.append("### Errors\n\n" + _findings(result.errors))
    if result.warnings:
        parts.append("### Warnings\n\n" + _warnings(result.warnings))
    if result.tasks:
        parts.append("### Tasks added\n\n" + "\n\n".join(_added(t) for t in result.tasks))
    if result.transitions:
        parts.append("### Transitions\n\n" + _transitions(result.transitions))
    if result.evidence:
        parts.append("### Acceptance runs\n\n" + evidence_list(result.evidence, with_task=True))
    if result.messages:
        parts.append("### Messages\n\n" + messages_table(result.messages, with_task=True))
    if result.archived:
        rows = [
            f"- {code(t.id)} ({t.state}), archived in {code(t.commit[:12])} by {text(t.author)}"
            for t in result.archived
        ]
        parts.append("### Archived\n\n" + "\n".join(rows))
    return "\n\n".join(parts) + "\n"


def _findings(findings: Sequence[Finding]) -> str:
    return "\n".join(f"- {code(f.code)} {code(f.path)}: {text(f.message)}" for f in findings)


def _warnings(warnings: Sequence[Problem]) -> str:
    return "\n".join(
        f"- {code(w.code)} task {code(str(w.data.get('subject', '')))}: {text(w.message)}"
        for w in warnings
    )


def _added(added: AddedTask) -> str:
    now = f"now {added.state}" if added.state else "not in the checkout"
    head = f"#### {code(added.id)} ({now}), by {text(added.author)} in {code(added.commit[:12])}"
    if added.envelope is None:
        return f"{head}\n\n⚠️ {text(added.problem)}"
    env = added.envelope
    who = f"{text(env.sender or '-')} → {text(env.recipient or 'anyone')}"
    deps = f", depends on {', '.join(code(d) for d in env.depends_on)}" if env.depends_on else ""
    parent = f", delegated from {code(env.parent)}" if env.parent else ""
    summary = f"{who}, context {text(env.context_id)}{deps}{parent}"
    return "\n\n".join([head, quote(env.objective), summary, folded("contract", contract(env))])


def _transitions(rows: Sequence[AddedTransition]) -> str:
    body = []
    for row in rows:
        record = row.record
        if record is None:
            body.append([code(row.task), "⚠️ unreadable", "", "", text(row.problem)])
            continue
        move = f"{row.left or '(new)'} → {record.state}"
        if row.superseded:
            move = f"~~{move}~~ (superseded)"
        body.append(
            [
                code(row.task),
                move,
                text(record.by),
                text(_when(record.at)),
                text(record.reason or ""),
            ]
        )
    return table(["task", "transition", "by", "at", "reason"], body)
