"""Markdown for pull requests: one task (`show --format markdown`) and a review of a range.

Everything from the ledger is untrusted text, shown as written: `textstats/__init__.py` must
not turn bold, `[x](http://e)` must not become a link, `![i](http://e/i.png)` must not load an
image, a pipe must not break a table, and nothing may inject HTML. So free text goes through
`text` (every character CommonMark or GitHub gives a meaning to is escaped with a backslash;
a word a renderer would turn into a link on its own, an address, a mention, an issue number,
an emoji code, goes into a code span) and names and commands through `code` (a code span no
backtick inside can close). Only the markup written here is markup.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from taskfs import i18n
from taskfs.report.style import duration, short_time

if TYPE_CHECKING:
    from taskfs.api.review.audit import Finding
    from taskfs.api.review.outcomes import Outcome
    from taskfs.api.review.ranges import AddedTask, AddedTransition, Review
    from taskfs.api.views.commits import CodeCommit
    from taskfs.api.views.entries import EvidenceRow, MessageRow
    from taskfs.api.views.lineage import Link
    from taskfs.api.views.reports import TaskReport
    from taskfs.core.envelope import Envelope
    from taskfs.errors import Problem

VERDICT_MARKS = {"pass": "✅", "fail": "❌"}


# -- escaping -------------------------------------------------------------------------------

# Characters with a meaning anywhere in a line: escapes, code, emphasis, links and images,
# HTML and entities, table cells, strikethrough, math.
_INLINE = re.compile(r"[\\`*_\[\]<>&|~$]")
# What a line may start with to become a heading, a quote, a list item or a setext underline.
_LINE_START = re.compile(r"[#>+=-]|\d+(?=[.)])")
# Words a renderer links on its own, escapes or not: addresses (GitHub finds `user@host`
# in text nodes after escapes are gone), mentions, issue numbers, emoji codes.
_LINKED_WORD = re.compile(r"://|(?:^|[^A-Za-z0-9])www\.|@|#\d|:[A-Za-z+-][A-Za-z0-9_+-]*:", re.I)


def text(value: str, *, cell: bool = False) -> str:
    """Plain text for a paragraph, a list item or a table cell (`cell`): shown as written,
    on one line (line breaks as `<br>`)."""
    lines = [_line(line, cell) for line in value.strip().splitlines()]
    return "<br>".join(line for line in lines if line)


def _line(line: str, cell: bool) -> str:
    shown = [_word(w, cell) for w in line.split()]
    start = _LINE_START.match(shown[0]) if shown else None
    if start:
        first = shown[0]
        # `1.` stays a number as `1\.`; `#`, `>`, `-`, `+` and `=` are escaped themselves.
        cut = start.end() if first[0].isdigit() else 0
        shown[0] = first[:cut] + "\\" + first[cut:]
    return " ".join(shown)


def _word(word: str, cell: bool) -> str:
    if _LINKED_WORD.search(word):
        return code(word, cell=cell)
    return _INLINE.sub(r"\\\g<0>", word)


def code(value: str, *, cell: bool = False) -> str:
    """Inline code that survives any backticks inside it (and pipes, in a table `cell`: GFM
    reads `\\|` there as a pipe, and anywhere else as two characters)."""
    one_line = " ".join(value.split("\n"))
    longest = max((len(run) for run in re.findall(r"`+", one_line)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if one_line.startswith("`") or one_line.endswith("`") else ""
    body = one_line.replace("|", "\\|") if cell else one_line
    return f"{fence}{pad}{body}{pad}{fence}"


def cell(value: str) -> str:
    return text(value, cell=True)


def cell_code(value: str) -> str:
    return code(value, cell=True)


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


def excerpt(value: str, limit: int = 60) -> str:
    words = " ".join(value.split())
    return words if len(words) <= limit else words[: limit - 1].rstrip() + "…"


# -- what vouches for a run, what a task replaced ------------------------------------------


def signed(row: EvidenceRow, *, in_cell: bool = False) -> str:
    """Who vouches for an acceptance run: a runner's signature, or only whoever recorded it."""
    as_code = cell_code if in_cell else code
    as_text = cell if in_cell else text
    if row.signature == "valid":
        return "🔏 " + i18n.say("signed by runner {runner}", runner=as_code(row.runner))
    if row.signature == "unverified":
        return i18n.say(
            "signed by runner {runner}, not verified (this repository trusts no runner key)",
            runner=as_code(row.runner or "?"),
        )
    if row.signature == "invalid":
        return "⚠️ " + i18n.say("signature invalid: {why}", why=as_text(row.signature_note))
    if row.signature == "unsigned":
        if row.by:
            return i18n.say("self-reported by {agent}", agent=as_text(row.by))
        return i18n.say("self-reported")
    return ""


def lineage(replaces: Sequence[Link], replaced_by: Sequence[Link], *, in_cell: bool) -> str:
    as_code = cell_code if in_cell else code
    parts = [
        i18n.say("replaces {id} ({how})", id=as_code(link.source), how=link.kind)
        for link in replaces
    ]
    parts += [
        i18n.say("replaced by {id} ({how})", id=as_code(link.target), how=link.kind)
        for link in replaced_by
    ]
    return "; ".join(parts)


def code_commits(commits: Sequence[CodeCommit]) -> str:
    if not commits:
        return "_" + i18n.say("No commit touched the files it owns.") + "_"
    return "\n".join(
        f"- {code(c.commit[:12])} {text(c.subject)} ({text(c.author)})" for c in commits
    )


# -- one task -------------------------------------------------------------------------------


def task(report: TaskReport, *, heading: str = "###") -> str:
    t = report.task
    env = t.envelope
    parts = [f"{heading} Task {code(t.id)}: {t.state}", quote(env.objective), _facts(report)]
    parts.append(contract(env))
    parts.append(f"{heading}# History\n\n" + _history(report))
    parts.append(f"{heading}# Evidence\n\n" + _evidence_summary(report.evidence))
    parts.append(
        f"{heading}# " + i18n.say("Code commits") + "\n\n" + code_commits(report.code_commits)
    )
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
        [
            "from → to",
            f"{cell(env.sender) if env.sender else '-'} → {cell(env.recipient or 'anyone')}",
        ],
        ["context", cell(env.context_id)],
    ]
    if report.task.chain.holder:
        rows.append(["held by", cell(report.task.chain.holder)])
    if report.dependencies:
        deps = ", ".join(
            f"{cell_code(d)} ({s or 'not in the ledger'})" for d, s in report.dependencies
        )
        rows.append(["depends on", deps])
    if env.parent:
        rows.append(["delegated from", cell_code(env.parent)])
    if report.children:
        rows.append(["delegated to", ", ".join(cell_code(c) for c in report.children)])
    handed = lineage(report.replaces, report.replaced_by, in_cell=True)
    if handed:
        rows.append([i18n.say("lineage"), handed])
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
        rows.append([cell(_when(row.at)), state, cell(row.actor), cell(row.detail)])
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
        i18n.say("recorded judgement, never a passing check") if row.kind == "judgement" else "",
        duration(row.duration_seconds) if row.duration_seconds is not None else "",
        f"commit {code(row.commit[:12])}" if row.commit else "",
        "**fresh checkout**" if row.fresh else "",
        text(_when(row.at)),
        signed(row),
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


def answered(message: MessageRow, rows: Sequence[MessageRow], *, in_cell: bool = False) -> str:
    """What a message answers, named: who asked, what kind of message, how it began."""
    if not message.in_reply_to:
        return ""
    as_text = cell if in_cell else text
    as_code = cell_code if in_cell else code
    asked = next((m for m in rows if m.msg_id and m.msg_id == message.in_reply_to), None)
    if asked is None:
        return i18n.say("answers message {id}", id=as_code(message.in_reply_to[:8]))
    return i18n.say(
        "answers {agent}'s {what} “{words}” ({id})",
        agent=as_text(asked.sender or "?"),
        what=asked.status or i18n.say("message"),
        words=as_text(excerpt(asked.text)),
        id=as_code(asked.msg_id[:8]),
    )


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
            m.status,  # one of the statuses the message's model allows: no free text
            answered(m, rows),
            text(_when(m.at)),
            code(m.msg_id[:8]) if m.msg_id else "",
        ]
        body = quote(m.text) if m.text.strip() else "> _(no text)_"
        shown.append(" · ".join(f for f in facts if f) + "\n\n" + body)
    return "\n\n".join(shown)


def messages_table(rows: Sequence[MessageRow], *, with_task: bool = False) -> str:
    header = (["task"] if with_task else []) + ["when", "from → to", "status", "text", "answers"]
    body = [
        ([cell_code(m.task)] if with_task else [])
        + [
            cell(_when(m.at)),
            cell(f"{m.sender or '?'} → {m.to or '?'}"),
            m.status or "-",
            cell(m.text or m.problem),
            answered(m, rows, in_cell=True),
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
    if result.outcomes:
        parts.append("### " + i18n.say("Outcome") + "\n\n" + outcome_table(result.outcomes))
    if not result.tip_is_checkout:
        parts.append(f"_The checks below describe the checkout, which is not {code(result.tip)}._")
    if result.errors:
        parts.append("### Errors\n\n" + _findings(result.errors))
    if result.warnings:
        parts.append("### Warnings\n\n" + _warnings(result.warnings))
    outcomes = {o.id: o for o in result.outcomes}
    if result.tasks:
        added = "\n\n".join(_added(t, outcomes.get(t.id)) for t in result.tasks)
        parts.append("### Tasks added\n\n" + added)
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


SHOWN_COMMITS = 5


def outcome_table(outcomes: Sequence[Outcome]) -> str:
    rows = []
    for o in outcomes:
        latest = o.latest
        run = (
            f"{VERDICT_MARKS.get(latest.verdict, '⚠️')} {latest.verdict}, "
            + signed(latest, in_cell=True)
            if latest is not None
            else "-"
        )
        commits = " ".join(cell_code(c.commit[:7]) for c in o.commits[:SHOWN_COMMITS])
        if len(o.commits) > SHOWN_COMMITS:
            commits += " " + i18n.say("and {count} more", count=len(o.commits) - SHOWN_COMMITS)
        rows.append(
            [
                cell_code(o.id),
                o.state or i18n.say("not in the checkout"),
                cell(o.holder) if o.holder else "-",
                run.rstrip(", "),
                commits or "-",
                lineage(o.replaces, o.replaced_by, in_cell=True) or "-",
            ]
        )
    header = ["task", "now", "held by", "latest run", "code commits", "lineage"]
    return table([i18n.say(h) for h in header], rows)


def _findings(findings: Sequence[Finding]) -> str:
    return "\n".join(f"- {code(f.code)} {code(f.path)}: {text(f.message)}" for f in findings)


def _warnings(warnings: Sequence[Problem]) -> str:
    return "\n".join(
        f"- {code(w.code)} task {code(str(w.data.get('subject', '')))}: {text(w.message)}"
        for w in warnings
    )


def _added(added: AddedTask, outcome: Outcome | None) -> str:
    now = f"now {added.state}" if added.state else "not in the checkout"
    head = f"#### {code(added.id)} ({now}), by {text(added.author)} in {code(added.commit[:12])}"
    if added.envelope is None:
        return f"{head}\n\n⚠️ {text(added.problem)}"
    env = added.envelope
    who = f"{text(env.sender) if env.sender else '-'} → {text(env.recipient or 'anyone')}"
    deps = f", depends on {', '.join(code(d) for d in env.depends_on)}" if env.depends_on else ""
    parent = f", delegated from {code(env.parent)}" if env.parent else ""
    handed = lineage(outcome.replaces, outcome.replaced_by, in_cell=False) if outcome else ""
    summary = f"{who}, context {text(env.context_id)}{deps}{parent}"
    if handed:
        summary += f"; {handed}"
    parts = [head, quote(env.objective), summary]
    if outcome is not None and outcome.commits:
        parts.append(i18n.say("Code commits:") + "\n\n" + code_commits(outcome.commits))
    parts.append(folded("contract", contract(env)))
    return "\n\n".join(parts)


def _transitions(rows: Sequence[AddedTransition]) -> str:
    body = []
    for row in rows:
        record = row.record
        if record is None:
            body.append([cell_code(row.task), "⚠️ unreadable", "", "", cell(row.problem)])
            continue
        move = f"{row.left or '(new)'} → {record.state}"
        if row.superseded:
            move = f"~~{move}~~ (superseded)"
        body.append(
            [
                cell_code(row.task),
                move,
                cell(record.by),
                cell(_when(record.at)),
                cell(record.reason or ""),
            ]
        )
    return table(["task", "transition", "by", "at", "reason"], body)
