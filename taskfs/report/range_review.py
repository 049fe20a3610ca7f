"""`taskfs review`: markdown for a pull request about what a range of commits did to the ledger.

The outcome table comes first (each task now, who holds it, its latest run and who vouches for
it, the code commits that touched its files, what it replaced), then the errors and warnings,
the tasks added with their contracts, the transitions, the acceptance runs and the messages.
Every piece of ledger text goes through `taskfs.report.markdown`'s escaping.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from taskfs import i18n
from taskfs.report.markdown import (
    VERDICT_MARKS,
    answered,
    cell,
    cell_code,
    code,
    code_commits,
    contract,
    count,
    evidence_list,
    folded,
    lineage,
    moment,
    origin,
    quote,
    signed,
    table,
    text,
)

if TYPE_CHECKING:
    from taskfs.api.review.added import AddedTask
    from taskfs.api.review.audit import Finding
    from taskfs.api.review.outcomes import Outcome
    from taskfs.api.review.ranges import AddedAmendment, AddedTransition, Review
    from taskfs.api.views.entries import MessageRow
    from taskfs.errors import Problem

SHOWN_COMMITS = 5


def review(result: Review) -> str:
    errors, warnings = len(result.errors), len(result.warnings)
    verdict = (
        "✅ " + i18n.say("nothing to fix")
        if result.ok and not result.warnings
        else f"{'❌' if result.errors else '⚠️'} "
        + count(errors, i18n.say("1 error"), i18n.say("{count} errors", count=errors))
        + ", "
        + count(warnings, i18n.say("1 warning"), i18n.say("{count} warnings", count=warnings))
    )
    parts = [
        "## " + i18n.say("taskfs review of {range}", range=code(result.revisions)),
        _counts(result) + f" **{verdict}**",
    ]
    if result.outcomes:
        parts.append("### " + i18n.say("Outcome") + "\n\n" + outcome_table(result.outcomes))
    if not result.tip_is_checkout:
        said = i18n.say(
            "The checks below describe the checkout, which is not {tip}.", tip=code(result.tip)
        )
        parts.append(f"_{said}_")
    if result.errors:
        parts.append("### " + i18n.say("Errors") + "\n\n" + _findings(result.errors))
    if result.warnings:
        parts.append("### " + i18n.say("Warnings") + "\n\n" + _warnings(result.warnings))
    outcomes = {o.id: o for o in result.outcomes}
    if result.tasks:
        added = "\n\n".join(_added(t, outcomes.get(t.id)) for t in result.tasks)
        parts.append("### " + i18n.say("Tasks added") + "\n\n" + added)
    if result.transitions:
        parts.append("### " + i18n.say("Transitions") + "\n\n" + _transitions(result.transitions))
    if result.evidence:
        runs = evidence_list(result.evidence, with_task=True)
        parts.append("### " + i18n.say("Acceptance runs") + "\n\n" + runs)
    if result.amendments:
        parts.append("### " + i18n.say("Amendments") + "\n\n" + _amendments(result.amendments))
    if result.messages:
        said = messages_table(result.messages, with_task=True)
        parts.append("### " + i18n.say("Messages") + "\n\n" + said)
    if result.archived:
        rows = [
            "- "
            + i18n.say(
                "{id} ({state}), archived in {commit} by {author}",
                id=code(t.id),
                state=t.state,
                commit=code(t.commit[:12]),
                author=text(t.author),
            )
            for t in result.archived
        ]
        parts.append("### " + i18n.say("Archived") + "\n\n" + "\n".join(rows))
    return "\n\n".join(parts) + "\n"


def _counts(result: Review) -> str:
    """`12 commits: 3 tasks added, 7 transitions, 2 acceptance runs, 1 message.`, and
    `, 2 tasks archived.` when the range archived some."""
    commits, tasks = result.commits, len(result.tasks)
    moves, runs, said = len(result.transitions), len(result.evidence), len(result.messages)
    counted = i18n.say(
        "{commits}: {tasks} added, {transitions}, {runs}, {messages}.",
        commits=count(commits, i18n.say("1 commit"), i18n.say("{count} commits", count=commits)),
        tasks=count(tasks, i18n.say("1 task"), i18n.say("{count} tasks", count=tasks)),
        transitions=count(
            moves, i18n.say("1 transition"), i18n.say("{count} transitions", count=moves)
        ),
        runs=count(
            runs, i18n.say("1 acceptance run"), i18n.say("{count} acceptance runs", count=runs)
        ),
        messages=count(said, i18n.say("1 message"), i18n.say("{count} messages", count=said)),
    )
    if not result.archived:
        return counted
    archived = len(result.archived)
    return counted[:-1] + i18n.say(
        ", {tasks} archived.",
        tasks=count(archived, i18n.say("1 task"), i18n.say("{count} tasks", count=archived)),
    )


def _now(state: str | None, archived: bool) -> str:
    """Where a task stands now: its state in the checkout, or the last, marked archived."""
    if state is None:
        return i18n.say("not in the checkout")
    return i18n.say("{state}, archived", state=state) if archived else state


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
                _now(o.state, o.archived),
                cell(o.holder) if o.holder else "-",
                run.rstrip(", "),
                commits or "-",
                lineage(o.replaces, o.replaced_by, in_cell=True) or "-",
            ]
        )
    header = [
        i18n.say("task"),
        i18n.say("now"),
        i18n.say("held by"),
        i18n.say("latest run"),
        i18n.say("code commits"),
        i18n.say("lineage"),
    ]
    return table(header, rows)


def messages_table(rows: Sequence[MessageRow], *, with_task: bool = False) -> str:
    header = [i18n.say("task")] if with_task else []
    header += [
        i18n.say("when"),
        i18n.say("from → to"),
        i18n.say("status"),
        i18n.say("text"),
        i18n.say("answers"),
    ]
    body = [
        ([cell_code(m.task)] if with_task else [])
        + [
            cell(moment(m.at)),
            cell(f"{m.sender or '?'} → {m.to or '?'}"),
            m.status or "-",
            cell(m.text or m.problem),
            answered(m, rows, in_cell=True),
        ]
        for m in rows
    ]
    return table(header, body)


def _findings(findings: Sequence[Finding]) -> str:
    return "\n".join(f"- {code(f.code)} {code(f.path)}: {text(f.message)}" for f in findings)


def _warnings(warnings: Sequence[Problem]) -> str:
    return "\n".join(
        f"- {code(w.code)} "
        + i18n.say(
            "task {id}: {message}",
            id=code(str(w.data.get("subject", ""))),
            message=text(w.message),
        )
        for w in warnings
    )


def _added(added: AddedTask, outcome: Outcome | None) -> str:
    now = (
        i18n.say("now {state}", state=_now(added.state, added.archived))
        if added.state
        else i18n.say("not in the checkout")
    )
    head = "#### " + i18n.say(
        "{id} ({now}), by {author} in {commit}",
        id=code(added.id),
        now=now,
        author=text(added.author),
        commit=code(added.commit[:12]),
    )
    if added.envelope is None:
        return f"{head}\n\n⚠️ {text(added.problem)}"
    env = added.envelope
    who = f"{text(env.sender) if env.sender else '-'} → {text(env.recipient or i18n.say('anyone'))}"
    deps = (
        i18n.say(", depends on {ids}", ids=", ".join(code(d) for d in env.depends_on))
        if env.depends_on
        else ""
    )
    parent = i18n.say(", delegated from {id}", id=code(env.parent)) if env.parent else ""
    handed = lineage(outcome.replaces, outcome.replaced_by, in_cell=False) if outcome else ""
    summary = i18n.say(
        "{who}, context {context}{deps}{parent}",
        who=who,
        context=text(env.context_id),
        deps=deps,
        parent=parent,
    )
    if handed:
        summary += f"; {handed}"
    parts = [head, quote(env.objective), summary]
    if added.origin is not None:
        parts.append(origin(added.origin))
    if outcome is not None and outcome.commits:
        parts.append(i18n.say("Code commits:") + "\n\n" + code_commits(outcome.commits))
    parts.append(folded(i18n.say("contract"), contract(env)))
    return "\n\n".join(parts)


def _amendments(rows: Sequence[AddedAmendment]) -> str:
    """The amendments the range added: whose, what they changed, where each stands now; the
    version they replace is the contract above (or the amendment before), kept by history."""
    body = []
    for added in rows:
        row = added.row
        if row.get("kind") == "accepted":
            what = i18n.say("accepted {file}", file=row.get("accepts", ""))
            changed, status, reason = "", "", ""
        else:
            what = i18n.say("amended")
            changed = ", ".join(row.get("changed", ()))
            status = str(row.get("status", i18n.say("unreadable")))
            reason = str(row.get("reason", ""))
        body.append(
            [
                cell_code(added.task),
                cell(what),
                cell(added.author),
                cell(changed),
                cell(status),
                cell(reason),
            ]
        )
    heads = [
        i18n.say("task"),
        i18n.say("what"),
        i18n.say("by"),
        i18n.say("changed"),
        i18n.say("now"),
        i18n.say("reason"),
    ]
    return table(heads, body)


def _transitions(rows: Sequence[AddedTransition]) -> str:
    body = []
    for row in rows:
        record = row.record
        if record is None:
            unreadable = "⚠️ " + i18n.say("unreadable")
            body.append([cell_code(row.task), unreadable, "", "", cell(row.problem)])
            continue
        move = f"{row.left or i18n.say('(new)')} → {record.state}"
        if row.superseded:
            move = f"~~{move}~~ " + i18n.say("(superseded)")
        body.append(
            [
                cell_code(row.task),
                move,
                cell(record.by),
                cell(moment(record.at)),
                cell(record.reason or ""),
            ]
        )
    header = [
        i18n.say("task"),
        i18n.say("transition"),
        i18n.say("by"),
        i18n.say("at"),
        i18n.say("reason"),
    ]
    return table(header, body)
