"""The board's page around the cards (`taskfs.report.board`): its template, styles and script.

Everything is inline, so that the page needs nothing from the network. The columns share the
width of the window (down to a narrow minimum) so that a board of every state fits 1400 px
without hiding one; an empty or folded column shrinks to a strip with its name down the side.
"""

from __future__ import annotations

TEMPLATE = """<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · taskfs board</title>
<style>
{style}</style>
</head>
<body>
<header class="top">
<h1>{title} <small>taskfs board · {generated}</small></h1>
<p class="summary" id="summary">{summary}</p>
<div class="filters">
<label>{context_label} <select id="filter-context"><option value="">{all}</option>{contexts}\
</select></label>
<label>{agent_label} <select id="filter-agent"><option value="">{all}</option>{agents}\
</select></label>
<span id="shown" data-template="{shown_template}"></span>
</div>
</header>
{agent_rows}
<main class="board">
{columns}
</main>
<script>
{script}</script>
</body>
</html>
"""

STYLE = """
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #0f172a; background: #f1f5f9; }
a { color: #1d4ed8; }
header.top { display: flex; flex-wrap: wrap; align-items: baseline; gap: 6px 24px;
  padding: 10px 16px; background: #0f172a; color: #f8fafc; }
header.top h1 { margin: 0; font-size: 18px; }
header.top small { font-weight: normal; color: #94a3b8; margin-left: 8px; }
.summary { margin: 0; font-weight: 600; }
.summary .bad { color: #fca5a5; }
.filters label { margin-right: 12px; }
.filters select { font: inherit; padding: 2px 4px; }
#shown { color: #94a3b8; }
.agents { margin: 8px 12px 0; overflow-x: auto; }
.agents table { border-collapse: collapse; font-size: 12px; background: #fff; border-radius: 6px;
  box-shadow: 0 1px 2px rgba(15, 23, 42, .12); }
.agents th, .agents td { padding: 3px 10px; text-align: left; border-bottom: 1px solid #e2e8f0;
  white-space: nowrap; }
.agents thead th { color: #64748b; font-weight: 600; }
.agents tbody th { font-family: ui-monospace, Menlo, monospace; }
.agents td.held a, .agents td.failed a, .agents td.waiting a { margin-right: 4px; }
.agents .idle-tag { color: #92400e; background: #fef3c7; border-radius: 4px; padding: 0 4px; }
.agents td.failed a { color: #b91c1c; }
.board { display: flex; gap: 8px; padding: 8px 12px; align-items: flex-start; }
.column { flex: 1 1 0; min-width: 138px; max-width: 320px; background: #e2e8f0;
  border-radius: 8px; padding: 6px; }
.column.empty, .column:has(> details.fold:not([open])) { flex: 0 0 34px; min-width: 34px;
  opacity: 0.75; padding: 6px 3px; }
.column.empty h2, .column > details.fold:not([open]) h2 { writing-mode: vertical-rl;
  white-space: nowrap; margin: 0 auto; }
.column.empty h2 .count, .column > details.fold:not([open]) h2 .count { float: none;
  margin-top: 6px; }
.column h2 { margin: 0 0 6px; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.column h2 .dot { display: inline-block; width: 10px; height: 10px; border-radius: 50%;
  border: 1px solid; margin-right: 4px; }
.column h2 .count { float: right; color: #475569; }
details.fold { margin: 0; font-size: inherit; }
details.fold > summary { list-style: none; cursor: pointer; }
details.fold > summary::-webkit-details-marker { display: none; }
details.fold > summary h2::after { content: " ▾"; color: #64748b; }
details.fold:not([open]) > summary h2::after { content: ""; }
.card { background: #fff; border-radius: 6px; padding: 6px 8px; margin-bottom: 6px;
  border-left: 4px solid #94a3b8; box-shadow: 0 1px 2px rgba(15, 23, 42, .12); min-width: 0;
  overflow-wrap: anywhere; }
.card[hidden] { display: none; }
.board .column .card.failing { border-left: 6px solid #dc2626; }
.card header { display: flex; flex-wrap: wrap; justify-content: space-between; gap: 4px; }
.card .id { font-family: ui-monospace, Menlo, monospace; font-weight: 600; }
.card .context { font-size: 11px; background: #f1f5f9; border-radius: 4px; padding: 0 6px;
  white-space: nowrap; align-self: flex-start; }
.card .priority, .card .label { font-size: 11px; border-radius: 4px; padding: 0 5px;
  white-space: nowrap; align-self: flex-start; margin-right: 4px; }
.card .priority { background: #fee2e2; color: #991b1b; font-weight: 600; }
.card .priority-2, .card .priority-3, .card .priority-4 { background: #e2e8f0; color: #334155; }
.card .label { background: #e0e7ff; color: #3730a3; }
.card .objective { margin: 4px 0; }
.card dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 6px;
  margin: 4px 0; font-size: 12px; }
.card dt { color: #64748b; }
.card dd { margin: 0; overflow-wrap: anywhere; }
.card code, .card pre { font-family: ui-monospace, Menlo, monospace; font-size: 12px; }
.card .check { font-size: 12px; color: #64748b; margin: 4px 0; }
.card .check code { color: #0f172a; }
.card .times { font-size: 11px; color: #475569; margin: 2px 0; }
.markers { margin: 4px 0 2px; display: flex; flex-wrap: wrap; gap: 4px; }
.marker { font-size: 11px; font-weight: 700; text-transform: uppercase; letter-spacing: .04em;
  border-radius: 4px; padding: 0 5px; border: 1px solid; }
.marker-ready { background: #dcfce7; color: #14532d; border-color: #16a34a; }
.marker-blocked { background: #f1f5f9; color: #334155; border-color: #94a3b8; }
.marker-dead { background: #111827; color: #fef2f2; border-color: #111827; }
.marker-stale { background: #fef9c3; color: #713f12; border-color: #facc15; }
a.dep { display: inline-block; border: 1px solid; border-radius: 4px; padding: 0 4px;
  margin: 1px 2px 1px 0; text-decoration: none; }
a.dep.state-missing { background: #fff; color: #6b7280; border-style: dashed; }
a.lineage { font-family: ui-monospace, Menlo, monospace; }
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
.ending { margin: 4px 0; padding: 4px 6px; border-radius: 4px; font-size: 12px;
  background: #fef2f2; color: #7f1d1d; }
.ending-canceled { background: #f3f4f6; color: #374151; }
.ending-rejected { background: #fff7ed; color: #7c2d12; }
.flags { list-style: none; margin: 4px 0; padding: 0; display: flex; flex-wrap: wrap; gap: 4px; }
.flags .flag { font-size: 11px; background: #fef9c3; color: #713f12; border: 1px solid #facc15;
  border-radius: 4px; padding: 0 4px; }
.stale, .why { margin: 4px 0; padding: 4px 6px; border-radius: 4px; font-size: 12px; }
.stale { background: #fef9c3; color: #713f12; }
.why { background: #f8fafc; color: #334155; }
.why.dead { background: #f3f4f6; color: #111827; }
"""

SCRIPT = """(function () {
  var context = document.getElementById("filter-context");
  var agent = document.getElementById("filter-agent");
  var shownText = document.getElementById("shown");
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
    document.querySelectorAll("tr.agent").forEach(function (row) {
      row.hidden = Boolean(agent.value) && row.dataset.agent !== agent.value;
    });
    shownText.textContent = shownText.dataset.template.replace("{count}", shown);
  }
  context.addEventListener("change", apply);
  agent.addEventListener("change", apply);
  apply();
})();
"""
