"""`taskfs board --html FILE`: one self-contained page that answers a lead's morning questions.

At the top, the summary line (`5 of 9 done, 1 failed · 2 ready · 1 dead`) and a row per agent
(what it holds, has done, has failed, and when it last did anything; an agent holding nothing
is marked idle). Below, a column per state, the requests that are not tasks yet first, a card
per task with its markers (ready, blocked, dead, stale), how long it has been in its state and
how long quiet, its lineage (the task it took over, the task that took it over) and its
evidence. With a repository's web address, commits and evidence files link to it.

No network is needed to view it: the styles and the script (the context and agent filters)
are inline (`taskfs.report.board_page`), and nothing is fetched. Every value from the ledger
is HTML-escaped.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING
from urllib.parse import quote

from taskfs import i18n
from taskfs.core.lifecycle import STATES
from taskfs.report.board_page import SCRIPT, STYLE, TEMPLATE
from taskfs.report.style import STATE_COLOURS, age, duration, short_time, state_colours

if TYPE_CHECKING:
    from taskfs.api.views.board import AgentRow, Board, Card
    from taskfs.api.views.entries import EvidenceRow
    from taskfs.api.views.lineage import Link
    from taskfs.api.views.reports import TaskReport, TimelineRow
    from taskfs.core.envelope import Envelope
    from taskfs.core.intake import Intake

LABELS: dict[str, str] = {state: state.replace("_", " ") for state in STATES}
# Columns whose work is over and needs nothing: folded away with one click.
FOLDABLE = ("completed", "canceled")


def e(value: object) -> str:
    return html.escape(str(value), quote=True)


# The states that end a task badly: their card says why, from the last transition's reason.
ENDED_BADLY = ("failed", "canceled", "rejected")


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


def page(view: Board, *, title: str, generated: str, repo_url: str | None = None) -> str:
    """The board of `view` (`taskfs.api.views.board.board`)."""
    reports = [card.report for card in view.cards]
    contexts = sorted({r.task.envelope.context_id for r in reports})
    agents = sorted({a for r in reports for a in _agents(r)})
    links = Links(repo_url, view.head)
    columns = _requests(view.requests) + "\n".join(
        _column(state, [c for c in view.cards if c.state == state], view.now, links)
        for state in STATES
    )
    return TEMPLATE.format(
        lang=e(i18n.languages()[0] if i18n.languages() else "en"),
        title=e(title),
        style=STYLE + _state_css(),
        script=SCRIPT,
        generated=e(generated),
        summary=summary_line(view),
        context_label=e(i18n.say("context")),
        agent_label=e(i18n.say("agent")),
        all=e(i18n.say("all")),
        shown_template=e(i18n.say("{count} shown", count="{count}")),
        contexts=_options(contexts),
        agents=_options(agents),
        agent_rows=_agent_rows(view.agents, view.now),
        columns=columns,
    )


def summary_line(view: Board) -> str:
    """`5 of 9 done, 1 failed · 2 ready · 1 blocked · 1 dead · 1 stale · 1 request`."""
    counts = view.counts
    head = e(
        i18n.say(
            "{done} of {total} done, {failed} failed",
            done=counts.get("completed", 0),
            total=counts.get("tasks", 0),
            failed=counts.get("failed", 0),
        )
    )
    parts = [f'<span class="{"bad" if counts.get("failed") else "done"}">{head}</span>']
    words = {
        "ready": i18n.say("{count} ready", count=counts.get("ready", 0)),
        "blocked": i18n.say("{count} blocked", count=counts.get("blocked", 0)),
        "dead": i18n.say("{count} dead", count=counts.get("dead", 0)),
        "stale": i18n.say("{count} stale", count=counts.get("stale", 0)),
        "requests": i18n.say("{count} requests", count=counts.get("requests", 0)),
    }
    for key, text in words.items():
        if counts.get(key):
            bad = " bad" if key in ("dead", "stale") else ""
            parts.append(f'<span class="count-{key}{bad}">{e(text)}</span>')
    return " · ".join(parts)


def _options(values: Iterable[str]) -> str:
    return "".join(f'<option value="{e(v)}">{e(v)}</option>' for v in values)


def _agents(report: TaskReport) -> list[str]:
    env = report.task.envelope
    return [a for a in (env.sender, env.recipient, report.task.chain.holder) if a]


def _task_links(ids: Sequence[str]) -> str:
    return " ".join(f'<a href="#task-{e(i)}">{e(i)}</a>' for i in ids)


def _agent_rows(rows: Sequence[AgentRow], now: datetime) -> str:
    if not rows:
        return ""
    words = (
        i18n.say("agent"),
        i18n.say("holds"),
        i18n.say("done"),
        i18n.say("failed"),
        i18n.say("to claim"),
        i18n.say("last activity"),
    )
    head = "".join(f"<th>{e(word)}</th>" for word in words)
    body = []
    for row in rows:
        held = (
            _task_links(row.held)
            if row.held
            else f'<span class="idle-tag">{e(i18n.say("idle"))}</span>'
        )
        last = (
            f'<time datetime="{e(row.last.isoformat())}">'
            f"{e(i18n.say('{age} ago', age=age((now - row.last).total_seconds())))}</time>"
            if row.last
            else "-"
        )
        idle = " idle" if row.idle else ""
        body.append(
            f'<tr class="agent{idle}" data-agent="{e(row.name)}"><th>{e(row.name)}</th>'
            f'<td class="held">{held}</td>'
            f'<td class="done" title="{e(" ".join(row.done))}">{len(row.done)}</td>'
            f'<td class="failed">{len(row.failed)} {_task_links(row.failed)}</td>'
            f'<td class="waiting">{_task_links(row.waiting) or "-"}</td>'
            f'<td class="last">{last}</td></tr>'
        )
    return (
        f'<section class="agents" aria-label="{e(i18n.say("agents"))}"><table><thead><tr>'
        f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table></section>"
    )


def _column(state: str, cards: Sequence[Card], now: datetime, links: Links) -> str:
    body = "\n".join(_card(c, now, links) for c in sorted(cards, key=lambda c: c.id))
    # An empty column collapses to a narrow strip with its name written down the side.
    empty = " empty" if not cards else ""
    heading = (
        f'<h2><span class="dot"></span>{e(LABELS[state])} '
        f'<span class="count">{len(cards)}</span></h2>'
    )
    if state in FOLDABLE and cards:
        inner = f'<details class="fold" open><summary>{heading}</summary>\n{body}\n</details>'
    else:
        inner = f"{heading}\n{body}"
    return f'<section class="column state-{state}{empty}" data-state="{state}">{inner}\n</section>'


def _requests(requests: Sequence[Intake]) -> str:
    """The open intakes: requests that are not yet tasks, each with what it still lacks."""
    if not requests:
        return ""
    cards = []
    for intake in requests:
        missing = ", ".join(dict.fromkeys(p.field or p.code for p in intake.missing()))
        words = " ".join(intake.words()) or i18n.say("(fields only)")
        proposal = intake.pending_proposal()
        proposed = (
            i18n.say("{agent} proposed an envelope", agent=proposal.record.by) if proposal else ""
        )
        waiting = f'<p class="stale">{e(proposed)}</p>' if proposed else ""
        if intake.discovered_from is not None:
            source = intake.discovered_from
            found = e(i18n.say("found while working on"))
            waiting += f'<p class="found">{found} <a href="#task-{e(source)}">{e(source)}</a></p>'

        cards.append(
            f'<article class="card request" id="task-{e(intake.id)}" data-task="{e(intake.id)}" '
            f'data-context="" data-agents="{e(intake.requester)} {e(intake.recipient or "")}">'
            f'<header><span class="id">{e(intake.id)}</span></header>{waiting}'
            f'<p class="objective">{e(words)}</p><dl class="facts">'
            f"<dt>{e(i18n.say('from → to'))}</dt>"
            f"<dd>{e(intake.requester)} → {e(intake.recipient or i18n.say('anyone'))}</dd>"
            f"<dt>{e(i18n.say('missing'))}</dt><dd>{e(missing or '-')}</dd></dl></article>"
        )
    return (
        '<section class="column state-intake" data-state="intake">'
        f'<h2><span class="dot"></span>{e(i18n.say("requests"))} <span class="count">'
        f"{len(requests)}</span></h2>\n" + "\n".join(cards) + "\n</section>\n"
    )


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
    }
    words = {
        "ready": i18n.say("ready"),
        "blocked": i18n.say("blocked"),
        "dead": i18n.say("dead"),
        "stale": i18n.say("stale"),
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
                f'<a class="lineage lineage-{e(link.kind)}" href="#task-{e(other)}" '
                f'data-kind="{e(link.kind)}">{e(other)}</a>',
            )
        )
    return facts


def _card(card: Card, now: datetime, links: Links) -> str:
    report = card.report
    task = report.task
    env = task.envelope
    classes = "card failing" if report.failing else "card"
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
    if report.dependencies:
        deps = " ".join(_dependency(d, s) for d, s in report.dependencies)
        facts.append((e(i18n.say("depends on")), deps))
    facts += _lineage(report.replaces, before=True)
    facts += _lineage(report.replaced_by, before=False)
    if env.parent:
        facts.append(
            (e(i18n.say("delegated from")), f'<a href="#task-{e(env.parent)}">{e(env.parent)}</a>')
        )
    if report.children:
        facts.append((e(i18n.say("delegated to")), _task_links(report.children)))
    if card.follow_ups:
        facts.append((e(i18n.say("follow-ups")), _task_links(card.follow_ups)))
    envelope = links.file(f"tasks/{task.id}/envelope.yaml", i18n.say("envelope"))
    if envelope:
        facts.append((e(i18n.say("contract")), envelope))
    facts_html = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts)
    problems = "".join(f'<p class="problem">{e(p.code)}: {e(p.message)}</p>' for p in task.problems)
    return f"""<article class="{classes}" id="task-{e(task.id)}" data-task="{e(task.id)}" \
data-context="{e(env.context_id)}" data-agents="{e(" ".join(_agents(report)))}" \
data-labels="{e(" ".join(env.labels))}">
<header><span class="id">{e(task.id)}</span>{_marks(env)}\
<span class="context">{e(env.context_id)}</span></header>
{_markers(card)}{_times(card, now)}{_ending(report)}\
<p class="objective">{e(env.objective)}</p>
{flags}<dl class="facts">{facts_html}</dl>
<p class="check">{e(i18n.say("check"))} <code>{e(env.acceptance_check.pass_fail_command)}</code></p>
{_evidence(report.evidence, links)}
{_contract(report)}
{_timeline(report.timeline())}
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


def _dependency(dep: str, state: str | None) -> str:
    label = state or i18n.say("not in the ledger")
    return (
        f'<a class="dep state-{e(state or "missing")}" href="#task-{e(dep)}" '
        f'title="{e(label)}">{e(dep)}</a>'
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
        f'<details class="contract"><summary>{e(i18n.say("contract"))}</summary>'
        f"<dl>{body}</dl></details>"
    )


def _evidence(rows: Sequence[EvidenceRow], links: Links) -> str:
    if not rows:
        return f'<p class="no-evidence">{e(i18n.say("no acceptance run recorded"))}</p>'
    # A failure followed by a pass is history, not the news: shown quieter than the pass.
    passed_at = max((i for i, row in enumerate(rows) if row.passed), default=-1)
    runs = "".join(_run(row, links, i < passed_at) for i, row in reversed(list(enumerate(rows))))
    return f'<section class="evidence">{runs}</section>'


def _run(row: EvidenceRow, links: Links, superseded: bool = False) -> str:
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
    return (
        f'<details class="run verdict-{e(row.verdict)}{quiet}"><summary>'
        f'<span class="verdict">{e(row.verdict)}</span> {e(facts)}</summary>'
        f"<p><code>{e(row.command)}</code></p>{commit}{file_line}{problem}"
        f"{outputs or nothing}</details>"
    )


def _what(row: TimelineRow) -> str:
    """A timeline row's state, verdict or message status; a plain message says so in the
    reader's language (the row itself, as `log --json` gives it, keeps `message`)."""
    return i18n.say("message") if row.kind == "message" and row.what == "message" else row.what


def _timeline(rows: Sequence[TimelineRow]) -> str:
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
        f'<details class="timeline"><summary>{e(label)}</summary>'
        f"<ol>{''.join(items)}</ol></details>"
    )


def _state_css() -> str:
    rules = []
    for state in STATE_COLOURS:
        fill, ink = state_colours(state)
        rules.append(
            f".state-{state} h2 .dot, a.dep.state-{state} {{ background: {fill}; "
            f"color: {ink}; border-color: {ink}; }}\n"
            f".column.state-{state} .card {{ border-left-color: {ink}; }}"
        )
    return "\n".join(rules) + "\n"
