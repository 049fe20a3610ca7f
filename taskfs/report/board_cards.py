"""The board's cards (`taskfs.report.board`): one per task, with its markers, its times, what
waits on it for whose decision, its dependencies as they stand, its lineage, its contract, and
links to its evidence, its messages and its history (each a folded section of the card that a
link opens).

Every value from the ledger goes through `e`: made inert for a terminal and for reading
(`taskfs.core.display.safe`: control characters and bidirectional overrides shown as their
escapes, never obeyed) and HTML-escaped, so that no title can carry markup or reorder text.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING
from urllib.parse import quote

from taskfs import i18n
from taskfs.core.display import safe
from taskfs.core.lifecycle import STATES
from taskfs.report.style import age, duration, short_time

if TYPE_CHECKING:
    from taskfs.api.messages.decisions import Decision
    from taskfs.api.views.board import Card, Dependency
    from taskfs.api.views.entries import EvidenceRow, MessageRow
    from taskfs.api.views.lineage import Link
    from taskfs.api.views.reports import TaskReport, TimelineRow
    from taskfs.core.envelope import Envelope

LABELS: dict[str, str] = {state: state.replace("_", " ") for state in STATES}
# The states that end a task badly: their card says why, from the last transition's reason.
ENDED_BADLY = ("failed", "canceled", "rejected")
FAILING_LINES = 12  # of a failing run's output, shown where the card links to its evidence


def e(value: object) -> str:
    """A value from the ledger as HTML text: inert, then escaped."""
    return html.escape(safe(str(value)), quote=True)


class Links:
    """Addresses in the repository's web view (`--repo-url`): commits, and files as the
    commit the board was drawn from holds them. Without an address, no links."""

    def __init__(self, base: str | None, head: str | None) -> None:
        self.base = base
        self.head = head

    def commit(self, sha: str, text: str) -> str:
        if not self.base or not sha:
            return f"<code>{e(text)}</code>"
        href = f"{self.base}/commit/{quote(sha)}"
        return f'<a class="commit" href="{e(href)}"><code>{e(text)}</code></a>'

    def file(self, path: str, text: str) -> str:
        if not self.base or not self.head or not path:
            return ""
        href = f"{self.base}/blob/{quote(self.head)}/{quote(path)}"
        return f'<a class="file" href="{e(href)}">{e(text)}</a>'


def anchor(task_id: str, section: str = "") -> str:
    """The id of a task's card (or of one of its sections) in the page."""
    return f"task-{task_id}" + (f"--{section}" if section else "")


def task_links(ids: Sequence[str]) -> str:
    return " ".join(f'<a href="#{e(anchor(i))}">{e(i)}</a>' for i in ids)


def count_words(counts: Mapping[str, int]) -> dict[str, str]:
    """The board's counts beside its head line, in the reader's language, in the order shown
    (the page and the terminal board show those that are not zero)."""
    return {
        "settled": i18n.say("{count} settled", count=counts.get("settled", 0)),
        "ready": i18n.say("{count} ready", count=counts.get("ready", 0)),
        "blocked": i18n.say("{count} blocked", count=counts.get("blocked", 0)),
        "dead": i18n.say("{count} dead", count=counts.get("dead", 0)),
        "stale": i18n.say("{count} stale", count=counts.get("stale", 0)),
        "requests": i18n.say("{count} requests", count=counts.get("requests", 0)),
        "needs": i18n.say("{count} waiting for a decision", count=counts.get("needs", 0)),
    }


def decision_word(kind: str) -> str:
    words = {
        "answer": i18n.say("answer"),
        "review": i18n.say("review"),
        "retry": i18n.say("retry"),
        "hand_on": i18n.say("hand on"),
        "propose": i18n.say("propose"),
        "accept": i18n.say("accept"),
    }
    return words.get(kind, kind)


def needs(decisions: Sequence[Decision]) -> str:
    """What waits on a card for whose decision, with the command and the tool that settle it."""
    if not decisions:
        return ""
    items = "".join(
        f'<li class="need need-{e(d.kind)}" data-agent="{e(d.agent)}">'
        f"<b>{e(i18n.say('needs {agent}', agent=d.agent))}</b>: {e(decision_word(d.kind))} "
        f'<code class="command">{e(d.command)}</code><code class="tool">{e(d.tool)}</code>'
        "</li>"
        for d in decisions
    )
    return f'<ul class="needs">{items}</ul>'


def card(card: Card, now: datetime, links: Links, attributes: str = "") -> str:
    """The card of a task; `attributes`: more of its element's attributes (its filter values)."""
    report = card.report
    task = report.task
    env = task.envelope
    classes = "card failing" if report.failing and card.settled_by is None else "card"
    lint = "".join(f'<li class="flag" title="{e(p.message)}">{e(p.code)}</li>' for p in card.flags)
    flags = f'<ul class="flags">{lint}</ul>' if lint else ""
    facts = [
        (
            e(i18n.say("from → to")),
            f"{e(env.sender or '-')} → {e(env.recipient or i18n.say('anyone'))}",
        )
    ]
    if task.chain.holder:
        facts.append((e(i18n.say("held by")), e(task.chain.holder)))
    if card.dependencies:
        deps = " ".join(dependency(d) for d in card.dependencies)
        facts.append((e(i18n.say("depends on")), deps))
    facts += _lineage(report.replaces, before=True)
    facts += _lineage(report.replaced_by, before=False)
    if env.parent:
        facts.append((e(i18n.say("delegated from")), task_links([env.parent])))
    if report.children:
        facts.append((e(i18n.say("delegated to")), task_links(report.children)))
    if card.follow_ups:
        facts.append((e(i18n.say("follow-ups")), task_links(card.follow_ups)))
    envelope = links.file(f"tasks/{task.id}/envelope.yaml", i18n.say("envelope"))
    if envelope:
        facts.append((e(i18n.say("contract")), envelope))
    facts_html = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts)
    problems = "".join(f'<p class="problem">{e(p.code)}: {e(p.message)}</p>' for p in task.problems)
    timeline = report.timeline()
    return f"""<article class="{classes}" id="{e(anchor(task.id))}" data-task="{e(task.id)}" \
data-state="{e(task.state)}"{attributes}>
<header><span class="id">{e(task.id)}</span>{_marks(env)}\
<span class="context">{e(env.context_id)}</span></header>
{_markers(card)}{_times(card, now)}{_ending(report)}{_settled(card)}\
{needs(card.needs)}<p class="objective">{e(env.objective)}</p>
{flags}<dl class="facts">{facts_html}</dl>
<p class="check">{e(i18n.say("check"))} <code>{e(env.acceptance_check.pass_fail_command)}</code></p>
{_nav(task.id, report, len(timeline))}
{_evidence(task.id, report.evidence, links, settled=card.settled_by is not None)}
{_messages(task.id, report.messages)}
{_contract(report)}
{_timeline(task.id, timeline)}
{problems}
</article>"""


def _marks(env: Envelope) -> str:
    """The card's priority (`P0`, as beads writes it) and labels, where its envelope has them."""
    out = ""
    if env.priority is not None:
        title = e(i18n.say("priority {level} (0 is the most urgent)", level=env.priority))
        level = env.priority
        out += f'<span class="priority priority-{level}" title="{title}">P{level}</span>'
    out += "".join(f'<span class="label">{e(label)}</span>' for label in env.labels)
    return out


def _nav(task_id: str, report: TaskReport, history: int) -> str:
    """Links to the card's evidence, messages and history: the lead's way in from a card."""
    latest = report.latest_evidence
    if latest is None:
        run = i18n.say("no evidence")
    elif latest.exit_code is not None:
        run = i18n.say(
            "evidence: {verdict}, exit {code}", verdict=latest.verdict, code=latest.exit_code
        )
    else:
        run = i18n.say("evidence: {verdict}", verdict=latest.verdict)
    items = [
        (anchor(task_id, "evidence"), "evidence", run),
        (
            anchor(task_id, "messages"),
            "messages",
            i18n.say("messages ({count})", count=len(report.messages)),
        ),
        (anchor(task_id, "history"), "history", i18n.say("history ({count})", count=history)),
    ]
    shown = " · ".join(
        f'<a class="to-{name}" href="#{e(target)}">{e(text)}</a>' for target, name, text in items
    )
    return f'<nav class="links">{shown}</nav>'


def _markers(card: Card) -> str:
    if not card.markers:
        return ""
    titles = {
        "ready": i18n.say("can be claimed now"),
        "blocked": i18n.say("waits for {ids}", ids=", ".join(card.waits_for))
        if card.waits_for
        else i18n.say("waits for a task that owns the same files"),
        "dead": i18n.say(
            "{ids} ended without completing and no task took its work over",
            ids=", ".join(card.dead_ends),
        ),
        "stale": card.stale,
        "settled": i18n.say("{id} took its work over and completed", id=card.settled_by or ""),
    }
    words = {
        "ready": i18n.say("ready"),
        "blocked": i18n.say("blocked"),
        "dead": i18n.say("dead"),
        "stale": i18n.say("stale"),
        "settled": i18n.say("settled"),
    }
    spans = "".join(
        f'<span class="marker marker-{m}" title="{e(titles[m])}">{e(words[m])}</span>'
        for m in card.markers
    )
    why = ""
    if "dead" in card.markers:
        why = f'<p class="why dead">{e(titles["dead"])}</p>'
    elif "blocked" in card.markers:
        why = f'<p class="why">{e(titles["blocked"])}</p>'
    return f'<p class="markers">{spans}</p>{why}'


def _settled(card: Card) -> str:
    """`A -> A-r1 done`: the failure is history."""
    if card.settled_by is None:
        return ""
    return (
        f'<p class="settled">{e(card.id)} → <a href="#{e(anchor(card.settled_by))}">'
        f"{e(card.settled_by)}</a> {e(i18n.say('done'))}</p>"
    )


def _times(card: Card, now: datetime) -> str:
    parts = []
    state = LABELS[card.state]
    if card.since is not None:
        span = age((now - card.since).total_seconds())
        parts.append(
            f'<span class="in-state" title="{e(card.since.isoformat())}">'
            f"{e(i18n.say('{state} for {age}', state=state, age=span))}</span>"
        )
    if card.last is not None:
        quiet = age((now - card.last).total_seconds())
        parts.append(
            f'<span class="quiet" title="{e(card.last.isoformat())}">'
            f"{e(i18n.say('quiet for {age}', age=quiet))}</span>"
        )
    return f'<p class="times">{" · ".join(parts)}</p>' if parts else ""


def lineage_label(link: Link, *, before: bool) -> str:
    """`reassigned from` / `reassigned to`, `retried from` / `retried as`; another way of
    handing work on reads the same way, from its key's word."""
    known = {
        ("reassigned", True): i18n.say("reassigned from"),
        ("reassigned", False): i18n.say("reassigned to"),
        ("retried", True): i18n.say("retried from"),
        ("retried", False): i18n.say("retried as"),
    }
    return known.get((link.kind, before)) or (
        i18n.say("{how} from", how=link.kind) if before else i18n.say("{how} as", how=link.kind)
    )


def _lineage(links: Sequence[Link], *, before: bool) -> list[tuple[str, str]]:
    facts = []
    for link in links:
        other = link.source if before else link.target
        facts.append(
            (
                e(lineage_label(link, before=before)),
                f'<a class="lineage lineage-{e(link.kind)}" href="#{e(anchor(other))}" '
                f'data-kind="{e(link.kind)}">{e(other)}</a>',
            )
        )
    return facts


def _ending(report: TaskReport) -> str:
    """Why a task ended badly, from its last transition: `failed by builder: tests red`."""
    head = report.task.chain.head
    if head is None or head.record.state not in ENDED_BADLY:
        return ""
    record = head.record
    reason = record.reason or i18n.say("no reason given")
    said = i18n.say("by {agent}", agent=record.by)
    return (
        f'<p class="ending ending-{e(record.state)}"><b>'
        f"{e(LABELS[record.state])}</b> {e(said)}: {e(reason)}</p>"
    )


def dependency(dep: Dependency) -> str:
    """A dependency's chip, coloured by the state that decides for its dependents: a failed
    dependency whose retry completed reads `A → A-r1 completed`, in the colour of done."""
    shown = dep.standing_state
    label = shown or i18n.say("not in the ledger")
    text = e(dep.id)
    if dep.now is not None:
        label = i18n.say(
            "{id} {state}; now {now}: {now_state}",
            id=dep.id,
            state=dep.state or "",
            now=dep.now,
            now_state=dep.now_state or "",
        )
        text += f" → {e(dep.now)} {e(dep.now_state or '')}"
    settled = " settled" if dep.settled else ""
    return (
        f'<a class="dep state-{e(shown or "missing")}{settled}" href="#{e(anchor(dep.id))}" '
        f'data-dep="{e(dep.id)}" title="{e(label)}">{text}</a>'
    )


def _contract(report: TaskReport) -> str:
    env = report.task.envelope
    check = env.acceptance_check
    rows = [
        (i18n.say("output format"), e(env.output_format)),
        (i18n.say("tools and sources"), e(env.tool_and_source_guidance)),
        (i18n.say("boundaries"), e(env.boundaries)),
        (i18n.say("owns"), " ".join(f"<code>{e(x)}</code>" for x in env.files_and_interfaces)),
        (i18n.say("end-to-end verification"), e(check.end_to_end_verification)),
    ]
    if check.timeout_seconds:
        rows.append((i18n.say("time limit"), f"{check.timeout_seconds} s"))
    if env.tools_allowed:
        rows.append((i18n.say("tools requested"), e(", ".join(env.tools_allowed))))
    artifacts = "".join(
        f"<dt>{e(i18n.say('artifact {name}', name=a.name))}</dt>"
        f"<dd><code>{e(a.location)}</code></dd>"
        for a in report.artifacts
    )
    body = "".join(f"<dt>{e(k)}</dt><dd>{v}</dd>" for k, v in rows) + artifacts
    return (
        f'<details class="contract" id="{e(anchor(report.id, "contract"))}">'
        f"<summary>{e(i18n.say('contract'))}</summary><dl>{body}</dl></details>"
    )


def _evidence(
    task_id: str, rows: Sequence[EvidenceRow], links: Links, *, settled: bool = False
) -> str:
    target = e(anchor(task_id, "evidence"))
    if not rows:
        return (
            f'<p class="no-evidence" id="{target}">{e(i18n.say("no acceptance run recorded"))}</p>'
        )
    # A failure followed by a pass is history, not the news: shown quieter than the pass; so
    # are the failures of a task whose work another task completed (settled).
    passed_at = (
        len(rows) if settled else max((i for i, r in enumerate(rows) if r.passed), default=-1)
    )
    runs = "".join(
        _run(row, links, i < passed_at, latest=i == len(rows) - 1, at=anchor(task_id, f"run-{i}"))
        for i, row in reversed(list(enumerate(rows)))
    )
    return f'<section class="evidence" id="{target}">{runs}</section>'


def failing_lines(row: EvidenceRow) -> str:
    """The lines a failing run ended with: the tail of its stderr, else of its stdout."""
    text = row.stderr if row.stderr.strip() else row.stdout
    lines = [line for line in text.splitlines() if line.strip()]
    return "\n".join(lines[-FAILING_LINES:])


def _run(row: EvidenceRow, links: Links, superseded: bool = False, *, latest: bool, at: str) -> str:
    facts = " · ".join(
        x
        for x in (
            i18n.say("exit {code}", code=row.exit_code) if row.exit_code is not None else "",
            row.source,
            duration(row.duration_seconds) if row.duration_seconds is not None else "",
            short_time(row.at),
        )
        if x
    )
    outputs = "".join(
        f'<h4>{name}</h4><pre class="{name}">{e(value)}</pre>'
        for name, value in (("stdout", row.stdout), ("stderr", row.stderr))
        if value.strip()
    )
    failing = ""
    if not row.passed and failing_lines(row):
        failing = (
            f"<h4>{e(i18n.say('where it failed'))}</h4>"
            f'<pre class="failing-lines">{e(failing_lines(row))}</pre>'
        )
    problem = f'<p class="problem">{e(row.problem)}</p>' if row.problem else ""
    commit = (
        f"<p>{e(i18n.say('commit'))} {links.commit(row.commit, row.commit[:12])}</p>"
        if row.commit
        else ""
    )
    evidence_file = links.file(row.path, i18n.say("evidence file"))
    file_line = f"<p>{evidence_file}</p>" if evidence_file else ""
    quiet = " superseded" if superseded and not row.passed else ""
    nothing = f"<p>{e(i18n.say('no output'))}</p>"
    mark = " latest" if latest else ""
    return (
        f'<details class="run verdict-{e(row.verdict)}{quiet}{mark}" id="{e(at)}"><summary>'
        f'<span class="verdict">{e(row.verdict)}</span> {e(facts)}</summary>'
        f"<p><code>{e(row.command)}</code></p>{commit}{file_line}{problem}{failing}"
        f"{outputs or nothing}</details>"
    )


def _messages(task_id: str, rows: Sequence[MessageRow]) -> str:
    """The messages about the task, oldest first: who to whom, what kind, what was said."""
    items = []
    for row in rows:
        who = f"{row.sender} → {row.to}" if row.to else row.sender
        kind = row.status or i18n.say("message")
        problem = f' <span class="problem">{e(row.problem)}</span>' if row.problem else ""
        items.append(
            f'<li class="message status-{e(row.status or "plain")}">'
            f'<time datetime="{e(row.at)}">{e(short_time(row.at))}</time> '
            f"<b>{e(kind)}</b> {e(who)}{problem}<br>{e(row.text)}</li>"
        )
    label = i18n.say("messages ({count})", count=len(rows))
    empty = f"<p>{e(i18n.say('no messages'))}</p>" if not rows else ""
    return (
        f'<details class="messages" id="{e(anchor(task_id, "messages"))}"><summary>{e(label)}'
        f"</summary>{empty}<ol>{''.join(items)}</ol></details>"
    )


def _what(row: TimelineRow) -> str:
    """A timeline row's state, verdict or message status; a plain message says so in the
    reader's language (the row itself, as `log --json` gives it, keeps `message`)."""
    return i18n.say("message") if row.kind == "message" and row.what == "message" else row.what


def _timeline(task_id: str, rows: Sequence[TimelineRow]) -> str:
    items = []
    for row in rows:
        superseded = " superseded" if row.superseded else ""
        detail = f" — {e(row.detail)}" if row.detail else ""
        items.append(
            f'<li class="kind-{row.kind}{superseded}"><time datetime="{e(row.at)}">'
            f"{e(short_time(row.at))}</time> <b>{e(_what(row))}</b> {e(row.actor)}{detail}</li>"
        )
    label = i18n.say("timeline ({count})", count=len(rows))
    return (
        f'<details class="timeline" id="{e(anchor(task_id, "history"))}">'
        f"<summary>{e(label)}</summary><ol>{''.join(items)}</ol></details>"
    )
