"""Markdown for pull requests: one task (`show --format markdown`), and the pieces a review of a
range (`taskfs.report.range_review`) is made of.

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
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from taskfs import i18n
from taskfs.report.style import duration, short_time

if TYPE_CHECKING:
    from taskfs.api.views.commits import CodeCommit
    from taskfs.api.views.entries import EvidenceRow, MessageRow
    from taskfs.api.views.lineage import Link
    from taskfs.api.views.reports import TaskReport
    from taskfs.core.envelope import Envelope

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


def moment(at: str) -> str:
    return short_time(at, seconds=True)


def count(n: int, one: str, many: str) -> str:
    """`one` (said of one thing) or `many` (of any other number): the caller passes both
    through `i18n.say`, since languages count differently."""
    return one if n == 1 else many


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
    title = i18n.say("Task {id}: {state}", id=code(t.id), state=t.state)
    parts = [f"{heading} {title}", quote(env.objective), _facts(report)]
    if report.origin is not None:
        parts.append(origin(report.origin))
    parts.append(contract(env))
    sub = f"{heading}# "
    parts.append(sub + i18n.say("History") + "\n\n" + _history(report))
    parts.append(sub + i18n.say("Evidence") + "\n\n" + _evidence_summary(report.evidence))
    parts.append(sub + i18n.say("Code commits") + "\n\n" + code_commits(report.code_commits))
    if report.messages:
        parts.append(sub + i18n.say("Conversation") + "\n\n" + conversation(report.messages))
    if report.artifacts:
        parts.append(
            sub
            + i18n.say("Artifacts")
            + "\n\n"
            + "\n".join(f"- **{text(a.name)}**: {code(a.location)}" for a in report.artifacts)
        )
    if t.problems:
        parts.append(
            sub
            + i18n.say("Problems")
            + "\n\n"
            + "\n".join(f"- {code(p.code)}: {text(p.message)}" for p in t.problems)
        )
    return "\n\n".join(parts) + "\n"


def origin(said: Mapping[str, Any]) -> str:
    """The request a task was born from: who asked, who proposed, who accepted; its words."""
    from taskfs.api.views.intake import origin_lines

    how, *words = origin_lines(dict(said))
    quoted = "\n>\n".join(quote(w) for w in words)
    return f"**{text(i18n.say('Request'))}**: {text(how)}" + (f"\n\n{quoted}" if quoted else "")


def _facts(report: TaskReport) -> str:
    env = report.task.envelope
    recipient = cell(env.recipient or i18n.say("anyone"))
    rows = [
        [i18n.say("from → to"), f"{cell(env.sender) if env.sender else '-'} → {recipient}"],
        [i18n.say("context"), cell(env.context_id)],
    ]
    if report.task.chain.holder:
        rows.append([i18n.say("held by"), cell(report.task.chain.holder)])
    if report.dependencies:
        deps = ", ".join(
            f"{cell_code(d)} ({s or i18n.say('not in the ledger')})" for d, s in report.dependencies
        )
        rows.append([i18n.say("depends on"), deps])
    if env.parent:
        rows.append([i18n.say("delegated from"), cell_code(env.parent)])
    if report.children:
        children = ", ".join(cell_code(c) for c in report.children)
        rows.append([i18n.say("delegated to"), children])
    handed = lineage(report.replaces, report.replaced_by, in_cell=True)
    if handed:
        rows.append([i18n.say("lineage"), handed])
    return table(["", ""], rows)


def contract(env: Envelope) -> str:
    check = env.acceptance_check
    timeout = (
        i18n.say(" (time limit {seconds} s)", seconds=check.timeout_seconds)
        if check.timeout_seconds
        else ""
    )
    rows = [
        (i18n.say("Output format"), text(env.output_format)),
        (i18n.say("Tools and sources"), text(env.tool_and_source_guidance)),
        (i18n.say("Boundaries"), text(env.boundaries)),
        (i18n.say("Owns"), ", ".join(code(e) for e in env.files_and_interfaces)),
        (i18n.say("Acceptance check"), code(check.pass_fail_command) + timeout),
        (i18n.say("End-to-end verification"), text(check.end_to_end_verification)),
    ]
    if env.tools_allowed:
        rows.append((i18n.say("Tools requested"), ", ".join(code(x) for x in env.tools_allowed)))
    return "\n".join(f"- **{label}:** {value}" for label, value in rows)


def _history(report: TaskReport) -> str:
    rows = []
    for row in report.timeline():
        if row.kind != "transition":
            continue
        state = f"~~{row.what}~~ " + i18n.say("(superseded)") if row.superseded else row.what
        rows.append([cell(moment(row.at)), state, cell(row.actor), cell(row.detail)])
    header = [i18n.say("when"), i18n.say("state"), i18n.say("by"), i18n.say("reason")]
    return table(header, rows)


def _evidence_summary(rows: Sequence[EvidenceRow]) -> str:
    if not rows:
        return evidence_list(rows)
    passed = sum(1 for row in rows if row.verdict == "pass")
    latest = rows[-1]
    runs = count(
        len(rows),
        i18n.say("1 acceptance run"),
        i18n.say("{count} acceptance runs", count=len(rows)),
    )
    said = (
        i18n.say(
            "{runs}: {passed} passed, {failed} did not; the latest passed",
            runs=runs,
            passed=passed,
            failed=len(rows) - passed,
        )
        if latest.passed
        else i18n.say(
            "{runs}: {passed} passed, {failed} did not; the latest did not pass",
            runs=runs,
            passed=passed,
            failed=len(rows) - passed,
        )
    )
    summary = f"{said} {VERDICT_MARKS.get(latest.verdict, '⚠️')}"
    return summary + "\n\n" + evidence_list(rows)


def evidence_list(rows: Sequence[EvidenceRow], *, with_task: bool = False) -> str:
    if not rows:
        return "_" + i18n.say("No acceptance run recorded.") + "_"
    return "\n\n".join(_evidence(row, with_task) for row in rows)


def _evidence(row: EvidenceRow, with_task: bool) -> str:
    mark = VERDICT_MARKS.get(row.verdict, "⚠️")
    facts = [
        i18n.say("exit {code}", code=row.exit_code) if row.exit_code is not None else "",
        text(row.source),
        i18n.say("recorded judgement, never a passing check") if row.kind == "judgement" else "",
        duration(row.duration_seconds) if row.duration_seconds is not None else "",
        f"commit {code(row.commit[:12])}" if row.commit else "",
        "**" + i18n.say("fresh checkout") + "**" if row.fresh else "",
        text(moment(row.at)),
        signed(row),
        text(row.problem),
        "⚠️ work_uncommitted: " + ", ".join(code(p) for p in row.uncommitted)
        if row.uncommitted
        else "",
    ]
    who = f"{code(row.task)} " if with_task else ""
    head = f"{mark} {who}**{row.verdict}** {code(row.command or i18n.say('(no command)'))}"
    head += " · " + " · ".join(f for f in facts if f)
    output = "\n\n".join(
        f"{name}:\n\n{block(value)}"
        for name, value in (("stdout", row.stdout), ("stderr", row.stderr))
        if value.strip()
    )
    return head + ("\n\n" + folded(i18n.say("output"), output) if output else "")


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
            text(moment(m.at)),
            code(m.msg_id[:8]) if m.msg_id else "",
        ]
        body = quote(m.text) if m.text.strip() else "> _" + i18n.say("(no text)") + "_"
        shown.append(" · ".join(f for f in facts if f) + "\n\n" + body)
    return "\n\n".join(shown)
