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
<body data-live="{live}">
<header class="top">
<h1>{title} <small>taskfs board · <span id="generated">{generated}</span></small>\
<span id="live" data-state="connecting"{live_words}></span></h1>
<p class="summary" id="summary">{summary}</p>
<p class="periods" id="periods">{periods}</p>
<div class="filters">{filters}<span id="shown" data-template="{shown_template}"></span></div>
</header>
<div id="agents">{agents}</div>
<main class="board" id="board">
{board}
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
.periods { margin: 0; color: #cbd5e1; }
.summary .count-needs { color: #fde68a; }
#live { margin-left: 12px; font-size: 12px; font-weight: normal; border-radius: 4px;
  padding: 1px 6px; }
body[data-live=""] #live { display: none; }
#live[data-state="live"] { background: #166534; color: #dcfce7; }
#live[data-state="live"]::before { content: "● "; }
#live[data-state="offline"], #live[data-state="refused"] { background: #991b1b; color: #fee2e2; }
#live[data-state="connecting"] { background: #334155; color: #e2e8f0; }
.filters label[hidden] { display: none; }
.agents td.needs, .agents td.waiting, .agents td.held { white-space: normal; min-width: 90px;
  max-width: 300px; }
.agents td.needs ul { display: inline; list-style: none; margin: 0; padding: 0; }
.agents td.needs li { display: inline-block; margin-left: 4px; white-space: nowrap; }
.agents td.needs.has-needs { background: #fef3c7; }
.agents td.needs.has-needs .count { color: #92400e; }
.agents td.failed a.settled { color: #64748b; text-decoration: line-through; }
.agents td.next a { font-weight: 600; }
.needs { list-style: none; margin: 4px 0; padding: 0; }
.needs .need { font-size: 12px; background: #fef3c7; color: #78350f; border: 1px solid #f59e0b;
  border-radius: 4px; padding: 2px 6px; margin-bottom: 2px; }
.needs .need code { font-size: 11px; background: #fffbeb; border-radius: 3px; padding: 0 3px;
  display: block; margin-top: 2px; }
.needs .need code.tool { color: #92400e; background: none; padding: 0; }
.needs .need code.tool::before { content: "MCP: "; }
.settled { margin: 4px 0; padding: 4px 6px; border-radius: 4px; font-size: 12px;
  background: #dcfce7; color: #14532d; }
.marker-settled { background: #dcfce7; color: #14532d; border-color: #16a34a; }
a.dep.settled { border-style: solid; }
nav.links { font-size: 12px; margin: 4px 0; }
nav.links a { margin-right: 2px; }
.failing-lines { background: #450a0a !important; color: #fecaca !important; }
.messages ol { margin: 4px 0; padding-left: 18px; }
.messages li { margin-bottom: 4px; overflow-wrap: anywhere; }
.messages time { color: #64748b; }
"""

SCRIPT = """(function () {
  "use strict";
  var body = document.body;
  var shownText = document.getElementById("shown");
  var wanted = {};  // filters asked for by the address, kept until their value shows up
  new URLSearchParams(location.search).forEach(function (value, name) { wanted[name] = value; });

  function selects() {
    return Array.prototype.slice.call(document.querySelectorAll("select.filter"));
  }
  function chosen() {
    var out = {};
    selects().forEach(function (select) {
      if (select.value) { out[select.dataset.filter] = select.value; }
    });
    return out;
  }
  function matches(element, asked, strict) {
    var values = {};
    try { values = JSON.parse(element.dataset.filters || "{}"); } catch (err) { values = {}; }
    return Object.keys(asked).every(function (name) {
      if (!(name in values)) { return !strict; }
      return values[name].indexOf(asked[name]) >= 0;
    });
  }
  function choose() {
    selects().forEach(function (select) {
      var name = select.dataset.filter;
      if (name in wanted && Array.prototype.some.call(select.options, function (option) {
        return option.value === wanted[name];
      })) {
        select.value = wanted[name];
        delete wanted[name];
      }
    });
  }
  function apply() {
    var asked = chosen();
    var shown = 0;
    document.querySelectorAll(".card").forEach(function (card) {
      var ok = matches(card, asked, true);
      card.hidden = !ok;
      if (ok) { shown += 1; }
    });
    document.querySelectorAll(".column").forEach(function (column) {
      column.querySelector(".count").textContent =
        column.querySelectorAll(".card:not([hidden])").length;
    });
    document.querySelectorAll("tr.agent").forEach(function (row) {
      row.hidden = !matches(row, asked, false);
    });
    shownText.textContent = shownText.dataset.template.replace("{count}", shown);
  }
  function remember() {
    // The filters live in the address: a reload or a shared link shows the same cards.
    var query = new URLSearchParams(chosen()).toString();
    try {
      history.replaceState(history.state, "", (query ? "?" + query : location.pathname) +
        location.hash);
    } catch (err) { /* a page opened from a file may not rewrite its address */ }
  }
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (!target) { return; }
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
    var latest = target.querySelector("details.latest");
    if (latest) { latest.open = true; }
    target.scrollIntoView({block: "nearest"});
  }
  selects().forEach(function (select) {
    select.addEventListener("change", function () { apply(); remember(); });
  });
  window.addEventListener("hashchange", reveal);
  document.addEventListener("click", function (event) {
    // A link to a part of the page opens it, also when the address already names it.
    var link = event.target.closest && event.target.closest('a[href^="#"]');
    if (link) { setTimeout(reveal, 0); }
  });
  choose();
  apply();
  reveal();

  // -- live: a served page swaps in the parts the server sends as the ledger moves ---------
  var live = body.dataset.live;
  if (!live) { return; }
  var status = document.getElementById("live");
  var token = "";
  var found = location.hash.match(/(?:^#|&)token=([^&]*)/);
  if (found) {
    token = decodeURIComponent(found[1]);
    try { history.replaceState(null, "", location.pathname + location.search); } catch (err) {}
  }
  function say(state) {
    status.dataset.state = state;
    status.textContent = status.dataset[state] || state;
  }
  function options(select, values) {
    var keep = select.value;
    while (select.options.length > 1) { select.remove(1); }
    values.forEach(function (value) {
      var option = document.createElement("option");
      option.value = value;
      option.textContent = value;
      select.appendChild(option);
    });
    select.value = values.indexOf(keep) >= 0 ? keep : "";
    if (keep && select.value !== keep) { wanted[select.dataset.filter] = keep; }
    select.parentElement.hidden = values.length === 0;
  }
  function replace(parts) {
    var open = {};
    document.querySelectorAll("details[id]").forEach(function (d) { open[d.id] = d.open; });
    ["summary", "periods", "agents", "board"].forEach(function (key) {
      document.getElementById(key).innerHTML = parts[key];
    });
    document.getElementById("generated").textContent = parts.generated;
    selects().forEach(function (select) {
      options(select, parts.filters[select.dataset.filter] || []);
    });
    document.querySelectorAll("details[id]").forEach(function (d) {
      if (d.id in open) { d.open = open[d.id]; }
    });
    body.dataset.version = parts.version;
    choose();
    apply();
  }
  function dispatch(block) {
    var name = "message";
    var data = [];
    block.split("\\n").forEach(function (line) {
      if (line.indexOf("event:") === 0) { name = line.slice(6).trim(); }
      else if (line.indexOf("data:") === 0) { data.push(line.slice(5).replace(/^ /, "")); }
    });
    if (name === "board" && data.length) { replace(JSON.parse(data.join("\\n"))); }
  }
  function connect() {
    var headers = {"Accept": "text/event-stream"};
    if (token) { headers.Authorization = "Bearer " + token; }
    fetch(live, {headers: headers, cache: "no-store"}).then(function (response) {
      if (!response.ok || !response.body) {
        say(response.status === 401 || response.status === 403 ? "refused" : "offline");
        setTimeout(connect, response.status === 401 ? 30000 : 2000);
        return undefined;
      }
      say("live");
      var reader = response.body.getReader();
      var decoder = new TextDecoder();
      var buffer = "";
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) { throw new Error("the stream ended"); }
          buffer += decoder.decode(chunk.value, {stream: true});
          var at = buffer.indexOf("\\n\\n");
          while (at >= 0) {
            dispatch(buffer.slice(0, at));
            buffer = buffer.slice(at + 2);
            at = buffer.indexOf("\\n\\n");
          }
          return pump();
        });
      }
      return pump();
    }).catch(function () {
      say("offline");
      setTimeout(connect, 1000);
    });
  }
  say("connecting");
  connect();
})();
"""
