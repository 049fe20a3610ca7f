"""`taskfs board --html FILE`: one self-contained page, columns by state, a card per task.

No network is needed to view it: the styles and the script (the context and agent filters)
are inline, and nothing is fetched. Every value from the ledger is HTML-escaped.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from taskfs.core.lifecycle import STATES
from taskfs.report.style import STATE_COLOURS, duration, short_time, state_colours

if TYPE_CHECKING:
    from taskfs.api.views.entries import EvidenceRow
    from taskfs.api.views.reports import TaskReport, TimelineRow
    from taskfs.core.intake import Intake
    from taskfs.errors import Problem

LABELS: dict[str, str] = {state: state.replace("_", " ") for state in STATES}


def e(value: object) -> str:
    return html.escape(str(value), quote=True)


# The states that end a task badly: their card says why, from the last transition's reason.
ENDED_BADLY = ("failed", "canceled", "rejected")
REASSIGNED_FROM = "x-reassignedFrom"  # taskfs.api.lifecycle.reassign


def page(
    reports: Sequence[TaskReport],
    *,
    title: str,
    generated: str,
    flags: Mapping[str, Sequence[Problem]] | None = None,
    stale: Mapping[str, str] | None = None,
    requests: Sequence[Intake] = (),
) -> str:
    """The board. `flags` are the lint warnings per task id, `stale` a line per task id whose
    holder has gone quiet (`taskfs.api.lifecycle.stale`); both are shown on the cards.
    `requests` are the open intakes, shown in a column of their own before the tasks."""
    contexts = sorted({r.task.envelope.context_id for r in reports})
    agents = sorted({a for r in reports for a in _agents(r)})
    notes = _Notes(flags or {}, stale or {})
    for r in reports:  # a reassigned task links to the task that took its work over
        source = r.task.envelope.extensions.get(REASSIGNED_FROM)
        if isinstance(source, str):
            notes.successors[source] = r.id
    columns = _requests(requests) + "\n".join(
        _column(state, [r for r in reports if r.task.state == state], notes) for state in STATES
    )
    return _TEMPLATE.format(
        title=e(title),
        style=_STYLE + _state_css(),
        script=_SCRIPT,
        count=len(reports),
        generated=e(generated),
        contexts=_options(contexts),
        agents=_options(agents),
        columns=columns,
    )


def _options(values: Iterable[str]) -> str:
    return "".join(f'<option value="{e(v)}">{e(v)}</option>' for v in values)


def _agents(report: TaskReport) -> list[str]:
    env = report.task.envelope
    return [a for a in (env.sender, env.recipient, report.task.chain.holder) if a]


class _Notes:
    def __init__(self, flags: Mapping[str, Sequence[Problem]], stale: Mapping[str, str]) -> None:
        self.flags = flags
        self.stale = stale
        self.successors: dict[str, str] = {}


def _column(state: str, reports: Sequence[TaskReport], notes: _Notes) -> str:
    cards = "\n".join(_card(r, notes) for r in sorted(reports, key=lambda r: r.id))
    # An empty column collapses to a narrow strip with its name written down the side.
    empty = " empty" if not reports else ""
    return (
        f'<section class="column state-{state}{empty}" data-state="{state}">'
        f'<h2><span class="dot"></span>{LABELS[state]} <span class="count">{len(reports)}</span>'
        f"</h2>\n{cards}\n</section>"
    )


def _requests(requests: Sequence[Intake]) -> str:
    """The open intakes: requests that are not yet tasks, each with what it still lacks."""
    if not requests:
        return ""
    cards = []
    for intake in requests:
        missing = ", ".join(dict.fromkeys(p.field or p.code for p in intake.missing()))
        words = " ".join(intake.words()) or "(fields only)"
        proposal = intake.pending_proposal()
        waiting = (
            f'<p class="stale">{e(proposal.record.by)} proposed an envelope</p>' if proposal else ""
        )
        cards.append(
            f'<article class="card request" id="task-{e(intake.id)}" data-task="{e(intake.id)}" '
            f'data-context="" data-agents="{e(intake.requester)} {e(intake.recipient or "")}">'
            f'<header><span class="id">{e(intake.id)}</span></header>{waiting}'
            f'<p class="objective">{e(words)}</p><dl class="facts"><dt>from → to</dt>'
            f"<dd>{e(intake.requester)} → {e(intake.recipient or 'anyone')}</dd>"
            f"<dt>missing</dt><dd>{e(missing or '-')}</dd></dl></article>"
        )
    return (
        '<section class="column state-intake" data-state="intake">'
        '<h2><span class="dot"></span>requests <span class="count">'
        f"{len(requests)}</span></h2>\n" + "\n".join(cards) + "\n</section>\n"
    )


def _card(report: TaskReport, notes: _Notes) -> str:
    task = report.task
    env = task.envelope
    classes = "card failing" if report.failing else "card"
    ending = _ending(report)
    lint = "".join(
        f'<li class="flag" title="{e(p.message)}">{e(p.code)}</li>'
        for p in notes.flags.get(task.id, ())
    )
    flags = f'<ul class="flags">{lint}</ul>' if lint else ""
    stale = notes.stale.get(task.id)
    stale_html = f'<p class="stale">{e(stale)}</p>' if stale else ""
    facts = [("from → to", f"{e(env.sender or '-')} → {e(env.recipient or 'anyone')}")]
    if task.chain.holder:
        facts.append(("held by", e(task.chain.holder)))
    if report.dependencies:
        facts.append(("depends on", " ".join(_dependency(d, s) for d, s in report.dependencies)))
    source = env.extensions.get(REASSIGNED_FROM)
    if isinstance(source, str):
        facts.append(("reassigned from", f'<a href="#task-{e(source)}">{e(source)}</a>'))
    if task.id in notes.successors:
        successor = notes.successors[task.id]
        facts.append(("reassigned to", f'<a href="#task-{e(successor)}">{e(successor)}</a>'))
    if env.parent:
        facts.append(("delegated from", f'<a href="#task-{e(env.parent)}">{e(env.parent)}</a>'))
    if report.children:
        links = " ".join(f'<a href="#task-{e(c)}">{e(c)}</a>' for c in report.children)
        facts.append(("delegated to", links))
    facts_html = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts)
    problems = "".join(f'<p class="problem">{e(p.code)}: {e(p.message)}</p>' for p in task.problems)
    return f"""<article class="{classes}" id="task-{e(task.id)}" data-task="{e(task.id)}" \
data-context="{e(env.context_id)}" data-agents="{e(" ".join(_agents(report)))}">
<header><span class="id">{e(task.id)}</span><span class="context">{e(env.context_id)}</span>\
</header>
{ending}{stale_html}<p class="objective">{e(env.objective)}</p>
{flags}<dl class="facts">{facts_html}</dl>
<p class="check">check <code>{e(env.acceptance_check.pass_fail_command)}</code></p>
{_evidence(report.evidence)}
{_contract(report)}
{_timeline(report.timeline())}
{problems}
</article>"""


def _ending(report: TaskReport) -> str:
    """Why a task ended badly, from its last transition: `failed by builder: tests red`."""
    head = report.task.chain.head
    if head is None or head.record.state not in ENDED_BADLY:
        return ""
    record = head.record
    reason = record.reason or "no reason given"
    return (
        f'<p class="ending ending-{e(record.state)}"><b>{LABELS[record.state]}</b> by '
        f"{e(record.by)}: {e(reason)}</p>"
    )


def _dependency(dep: str, state: str | None) -> str:
    label = state or "not in the ledger"
    return (
        f'<a class="dep state-{e(state or "missing")}" href="#task-{e(dep)}" '
        f'title="{e(label)}">{e(dep)}</a>'
    )


def _contract(report: TaskReport) -> str:
    env = report.task.envelope
    check = env.acceptance_check
    rows = [
        ("output format", e(env.output_format)),
        ("tools and sources", e(env.tool_and_source_guidance)),
        ("boundaries", e(env.boundaries)),
        ("owns", " ".join(f"<code>{e(x)}</code>" for x in env.files_and_interfaces)),
        ("end-to-end verification", e(check.end_to_end_verification)),
    ]
    if check.timeout_seconds:
        rows.append(("time limit", f"{check.timeout_seconds} s"))
    if env.tools_allowed:
        rows.append(("tools requested", e(", ".join(env.tools_allowed))))
    artifacts = "".join(
        f"<dt>artifact {e(a.name)}</dt><dd><code>{e(a.location)}</code></dd>"
        for a in report.artifacts
    )
    body = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + artifacts
    return f'<details class="contract"><summary>contract</summary><dl>{body}</dl></details>'


def _evidence(rows: Sequence[EvidenceRow]) -> str:
    if not rows:
        return '<p class="no-evidence">no acceptance run recorded</p>'
    # A failure followed by a pass is history, not the news: shown quieter than the pass.
    passed_at = max((i for i, row in enumerate(rows) if row.passed), default=-1)
    runs = "".join(_run(row, i < passed_at) for i, row in reversed(list(enumerate(rows))))
    return f'<section class="evidence">{runs}</section>'


def _run(row: EvidenceRow, superseded: bool = False) -> str:
    facts = " · ".join(
        x
        for x in (
            f"exit {row.exit_code}" if row.exit_code is not None else "",
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
    commit = f"<p>commit <code>{e(row.commit[:12])}</code></p>" if row.commit else ""
    quiet = " superseded" if superseded and not row.passed else ""
    return (
        f'<details class="run verdict-{e(row.verdict)}{quiet}"><summary>'
        f'<span class="verdict">{e(row.verdict)}</span> {e(facts)}</summary>'
        f"<p><code>{e(row.command)}</code></p>{commit}{problem}"
        f"{outputs or '<p>no output</p>'}</details>"
    )


def _timeline(rows: Sequence[TimelineRow]) -> str:
    items = []
    for row in rows:
        superseded = " superseded" if row.superseded else ""
        detail = f" — {e(row.detail)}" if row.detail else ""
        items.append(
            f'<li class="kind-{row.kind}{superseded}"><time datetime="{e(row.at)}">'
            f"{e(short_time(row.at))}</time> <b>{e(row.what)}</b> {e(row.actor)}{detail}</li>"
        )
    return (
        f'<details class="timeline"><summary>timeline ({len(rows)})</summary>'
        f"<ol>{''.join(items)}</ol></details>"
    )


def _state_css() -> str:
    rules = []
    for state in STATE_COLOURS:
        fill, ink = state_colours(state)
        rules.append(
            f".state-{state} > h2 .dot, a.dep.state-{state} {{ background: {fill}; "
            f"color: {ink}; border-color: {ink}; }}\n"
            f".column.state-{state} > .card {{ border-left-color: {ink}; }}"
        )
    return "\n".join(rules) + "\n"


_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · taskfs board</title>
<style>
{style}</style>
</head>
<body>
<header class="top">
<h1>{title} <small>taskfs board · {count} tasks · {generated}</small></h1>
<div class="filters">
<label>context <select id="filter-context"><option value="">all</option>{contexts}</select></label>
<label>agent <select id="filter-agent"><option value="">all</option>{agents}</select></label>
<span id="shown"></span>
</div>
</header>
<main class="board">
{columns}
</main>
<script>
{script}</script>
</body>
</html>
"""

_STYLE = """
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #0f172a; background: #f1f5f9; }
header.top { display: flex; flex-wrap: wrap; align-items: baseline; gap: 8px 24px;
  padding: 12px 16px; background: #0f172a; color: #f8fafc; }
header.top h1 { margin: 0; font-size: 18px; }
header.top small { font-weight: normal; color: #94a3b8; margin-left: 8px; }
.filters label { margin-right: 12px; }
.filters select { font: inherit; padding: 2px 4px; }
#shown { color: #94a3b8; }
.board { display: flex; gap: 12px; padding: 12px; overflow-x: auto; align-items: flex-start; }
.column { flex: 0 0 280px; background: #e2e8f0; border-radius: 8px; padding: 8px; }
.column.empty { flex: 0 0 36px; opacity: 0.7; padding: 8px 4px; }
.column.empty h2 { writing-mode: vertical-rl; white-space: nowrap; margin: 0 auto; }
.column.empty h2 .count { float: none; margin-top: 6px; }
.column h2 { margin: 0 0 8px; font-size: 13px; text-transform: uppercase; letter-spacing: .04em; }
.column h2 .dot { display: inline-block; width: 10px; height: 10px; border-radius: 50%;
  border: 1px solid; margin-right: 6px; }
.column h2 .count { float: right; color: #475569; }
.card { background: #fff; border-radius: 6px; padding: 8px 10px; margin-bottom: 8px;
  border-left: 4px solid #94a3b8; box-shadow: 0 1px 2px rgba(15, 23, 42, .12); }
.card[hidden] { display: none; }
.board .column > .card.failing { border-left: 6px solid #dc2626; }
.card header { display: flex; justify-content: space-between; gap: 6px; }
.card .id { font-family: ui-monospace, Menlo, monospace; font-weight: 600; }
.card .context { font-size: 11px; background: #f1f5f9; border-radius: 4px; padding: 0 6px;
  white-space: nowrap; align-self: flex-start; }
.card .objective { margin: 6px 0; }
.card dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 8px; margin: 4px 0;
  font-size: 12px; }
.card dt { color: #64748b; }
.card dd { margin: 0; overflow-wrap: anywhere; }
.card code, .card pre { font-family: ui-monospace, Menlo, monospace; font-size: 12px; }
.card .check { font-size: 12px; color: #64748b; margin: 4px 0; overflow-wrap: anywhere; }
.card .check code { color: #0f172a; }
a.dep { display: inline-block; border: 1px solid; border-radius: 4px; padding: 0 4px;
  margin: 1px 2px 1px 0; text-decoration: none; }
a.dep.state-missing { background: #fff; color: #6b7280; border-style: dashed; }
details { margin: 4px 0; font-size: 12px; }
details > summary { cursor: pointer; }
.run > summary { border-radius: 4px; padding: 2px 6px; }
.run.verdict-pass > summary { background: #dcfce7; color: #14532d; }
.run.verdict-fail > summary, .run.verdict-invalid > summary { background: #dc2626; color: #fff; }
.run.superseded > summary { background: #f1f5f9; color: #64748b; }
.run .verdict { font-weight: 700; text-transform: uppercase; }
.run pre { background: #0f172a; color: #e2e8f0; padding: 6px; border-radius: 4px;
  max-height: 240px; overflow: auto; white-space: pre-wrap; }
.run h4 { margin: 6px 0 2px; font-size: 11px; color: #64748b; }
.no-evidence { font-size: 12px; color: #94a3b8; margin: 4px 0; }
.timeline ol { margin: 4px 0; padding-left: 18px; }
.timeline li.superseded { text-decoration: line-through; color: #94a3b8; }
.timeline li.kind-evidence b { text-transform: uppercase; }
.timeline time { color: #64748b; }
.problem { color: #b91c1c; font-size: 12px; }
.ending { margin: 6px 0; padding: 4px 6px; border-radius: 4px; font-size: 12px;
  background: #fef2f2; color: #7f1d1d; }
.ending-canceled { background: #f3f4f6; color: #374151; }
.ending-rejected { background: #fff7ed; color: #7c2d12; }
.flags { list-style: none; margin: 4px 0; padding: 0; display: flex; flex-wrap: wrap; gap: 4px; }
.flags .flag { font-size: 11px; background: #fef9c3; color: #713f12; border: 1px solid #facc15;
  border-radius: 4px; padding: 0 4px; }
.stale { margin: 6px 0; padding: 4px 6px; border-radius: 4px; font-size: 12px;
  background: #fef9c3; color: #713f12; }
"""

_SCRIPT = """(function () {
  var context = document.getElementById("filter-context");
  var agent = document.getElementById("filter-agent");
  function apply() {
    var shown = 0;
    document.querySelectorAll(".card").forEach(function (card) {
      var ok = (!context.value || card.dataset.context === context.value) &&
        (!agent.value || card.dataset.agents.split(" ").indexOf(agent.value) >= 0);
      card.hidden = !ok;
      if (ok) { shown += 1; }
    });
    document.querySelectorAll(".column").forEach(function (column) {
      column.querySelector(".count").textContent =
        column.querySelectorAll(".card:not([hidden])").length;
    });
    document.getElementById("shown").textContent = shown + " shown";
  }
  context.addEventListener("change", apply);
  agent.addEventListener("change", apply);
  apply();
})();
"""
