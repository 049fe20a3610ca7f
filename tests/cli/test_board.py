"""`taskfs board --html FILE`, looked at the way a person would: rendered by headless Chromium
from the demo repository, with the DOM (and the computed styles) checked.

The browser test needs Chromium. It skips, saying why, only when none can be found; `.ci/run`
installs Debian's chromium and sets TASKFS_REQUIRE_CHROMIUM=1, which turns the skip into a
failure, so in CI it always runs.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import browser, demo_board
from tests.helpers import git, submit, taskfs

# Runs in the page after the board's own script: it reads what is laid out and how it is
# styled, works the filters and the fold of the done column, and leaves its findings in the DOM
# for --dump-dom.
PROBE = """<script>
(function () {
  function visible(el) {
    // checkVisibility also sees what a closed <details> hides (content-visibility).
    var box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0 &&
      el.checkVisibility({contentVisibilityAuto: true, opacityProperty: true,
                          visibilityProperty: true});
  }
  function texts(nodes) {
    return Array.prototype.filter.call(nodes, visible).map(function (n) {
      return n.textContent.trim();
    });
  }
  function shown() {
    return Array.prototype.filter.call(document.querySelectorAll(".card"), visible)
      .map(function (c) { return c.dataset.task; }).sort();
  }
  function choose(id, value) {
    var select = document.getElementById(id);
    select.value = value;
    select.dispatchEvent(new Event("change"));
    var found = shown();
    select.value = "";
    select.dispatchEvent(new Event("change"));
    return found;
  }
  function widths() {
    var found = {};
    document.querySelectorAll(".column").forEach(function (column) {
      var box = column.getBoundingClientRect();
      found[column.dataset.state] = {left: box.left, right: box.right, width: box.width};
    });
    return found;
  }
  var out = {columns: {}, runs: [], borders: {}, objectives: {}, endings: {}, flags: {},
             markers: {}, times: {}, lineage: {}, agents: {}};
  document.querySelectorAll(".column").forEach(function (column) {
    out.columns[column.dataset.state] = Array.prototype.filter.call(
      column.querySelectorAll(".card"), visible).map(function (c) { return c.dataset.task; });
  });
  document.querySelectorAll(".run").forEach(function (run) {
    var summary = run.querySelector("summary");
    out.runs.push({
      task: run.closest(".card").dataset.task,
      verdict: run.querySelector(".verdict").textContent,
      summary: summary.textContent,
      background: getComputedStyle(summary).backgroundColor,
      visible: visible(summary),
      outputShown: Array.prototype.some.call(run.querySelectorAll("pre"), visible)
    });
  });
  var failing = document.querySelector(".run.verdict-fail");
  failing.open = true;
  out.openedShows = Array.prototype.some.call(failing.querySelectorAll("pre"), visible);
  failing.open = false;
  document.querySelectorAll(".card").forEach(function (card) {
    var id = card.dataset.task;
    out.borders[id] = getComputedStyle(card).borderLeftColor;
    out.objectives[id] = card.querySelector(".objective").textContent;
    var ending = card.querySelector(".ending");
    if (ending && visible(ending)) { out.endings[id] = ending.textContent; }
    out.flags[id] = texts(card.querySelectorAll(".flag"));
    out.markers[id] = Array.prototype.filter.call(card.querySelectorAll(".marker"), visible)
      .map(function (m) { return m.className.replace("marker marker-", ""); });
    out.times[id] = texts(card.querySelectorAll(".times span"));
    out.lineage[id] = Array.prototype.filter.call(card.querySelectorAll("a.lineage"), visible)
      .map(function (a) {
        var target = document.querySelector(a.getAttribute("href"));
        return {kind: a.dataset.kind, to: a.textContent,
                label: a.closest("dd").previousElementSibling.textContent,
                lands: target ? target.dataset.task : null};
      });
  });
  document.querySelectorAll("tr.agent").forEach(function (row) {
    function cell(name) { return row.querySelector("td." + name); }
    out.agents[row.dataset.agent] = {
      visible: visible(row),
      idle: row.classList.contains("idle"),
      held: texts(cell("held").querySelectorAll("a")),
      done: cell("today").textContent.trim(),
      failed: texts(cell("failed").querySelectorAll("a")),
      waiting: texts(cell("waiting").querySelectorAll("a")),
      needs: cell("needs").querySelector(".count").textContent.trim(),
      next: texts(cell("next").querySelectorAll("a")),
      last: cell("last").textContent.trim()
    };
  });
  out.summary = document.getElementById("summary").textContent;
  out.widths = widths();
  out.page = {width: document.documentElement.scrollWidth, window: window.innerWidth};
  // Done work folds away to a strip, and back.
  var done = document.querySelector(".state-completed > details.fold");
  done.open = false;
  out.folded = {width: widths().completed.width, shown: shown()};
  done.open = true;
  out.docs = choose("filter-context", "docs");
  out.writer = choose("filter-agent", "writer");
  var agentFilter = document.getElementById("filter-agent");
  agentFilter.value = "helper";
  agentFilter.dispatchEvent(new Event("change"));
  out.agentRowsForHelper = texts(document.querySelectorAll("tr.agent th"));
  agentFilter.value = "";
  agentFilter.dispatchEvent(new Event("change"));
  out.all = shown();
  out.shownText = document.getElementById("shown").textContent;
  out.fetched = document.querySelectorAll("[src], link[href]").length;
  out.injected = document.querySelectorAll(".card img, .card script").length;
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""
HOSTILE = '<img src=x onerror="document.title=1"><script>document.title=2</script>'


@pytest.fixture
def demo(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The demo repository grown for the board; the cwd is inside it."""
    repo = demo_board.build()
    monkeypatch.chdir(repo)
    try:
        yield repo
    finally:
        demo_board.remove(repo)


def rgb(css: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", css)[:3])


def is_red(css: str) -> bool:
    r, g, b = rgb(css)
    return r >= 180 and g <= 90 and b <= 90


def probe(page: Path, tmp_path: Path) -> dict[str, Any]:
    """What the probe read of `page` rendered by Chromium in a 1400 px wide window."""
    probed = tmp_path / "probed.html"
    probed.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    dom = browser.dump_dom(probed, width=1400, height=900)
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    seen: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return seen


def test_the_demo_board_in_chromium_answers_what_is_stuck_who_is_idle_and_what_is_next(
    demo: Path, tmp_path: Path
) -> None:
    browser.need_chromium()
    hostile = submit(
        demo,
        id="hostile",
        objective=HOSTILE,
        filesAndInterfaces=["hostile.py"],
        acceptanceCheck={"passFailCommand": "true", "endToEndVerification": "Look at it."},
    )
    # A retry recorded the way `taskfs reassign` records its link (x-<how>From) shows as one.
    retried = submit(
        demo,
        id="greet-emoji-r1",
        objective="Greet with an emoji, this time only where the terminal says it can.",
        filesAndInterfaces=["emoji.py"],
        acceptanceCheck={
            "passFailCommand": "python3 -c 'import emoji'",
            "endToEndVerification": "greet('Ada') in a UTF-8 terminal shows a wave.",
        },
        to="helper",
        contextID="demo",
        **{"x-retriedFrom": "greet-emoji"},
    )
    page = tmp_path / "board.html"
    result = taskfs("board", "--html", str(page), "--json")
    assert result.code == 0, result.stderr
    demo_id = next(t for t in result.json["columns"]["completed"])
    seen = probe(page, tmp_path)

    assert seen["columns"] == {
        "submitted": [
            "announce-french",
            "docs-greeting",
            "greet-benchmark-r1",
            retried,
            hostile,
            "polite-docs",
        ],
        "working": ["greet-polite"],
        "input_required": ["release-notes"],
        "auth_required": [],
        "completed": [demo_id],
        "failed": ["greet-emoji"],
        "canceled": ["greet-benchmark"],
        "rejected": ["translate-greeting"],
    }
    # What is next, what is stuck: ready, blocked behind work in progress, dead behind a
    # rejected task, held by a holder gone quiet.
    assert {task: m for task, m in seen["markers"].items() if m} == {
        "announce-french": ["dead"],
        "docs-greeting": ["ready"],
        "greet-benchmark-r1": ["ready"],
        retried: ["ready"],
        hostile: ["ready"],
        "polite-docs": ["blocked"],
        "greet-polite": ["stale"],
        "release-notes": ["stale"],
    }
    assert result.json["markers"]["dead"] == ["announce-french"]
    # Every card says how long it has been in its state and how long quiet.
    for task, times in seen["times"].items():
        assert len(times) == 2, (task, times)
        assert re.fullmatch(r".+ for (<1 min|\d+ (min|h|d))", times[0]), times
        assert re.fullmatch(r"quiet for (<1 min|\d+ (min|h|d))", times[1]), times
    assert seen["times"]["greet-polite"][0].startswith("working for ")
    # Who is idle: a row per agent with what it holds, has done, has failed, waits to claim.
    agents = seen["agents"]
    assert sorted(agents) == ["builder", "helper", "planner", "writer"]
    assert agents["builder"]["held"] == ["greet-polite"]
    assert agents["builder"]["done"] == "1"
    assert agents["builder"]["failed"] == ["greet-emoji"]
    assert agents["builder"]["idle"] is False
    assert agents["helper"]["idle"] is True
    assert agents["helper"]["waiting"] == ["greet-benchmark-r1", retried]
    assert agents["writer"]["held"] == ["release-notes"]
    assert agents["planner"]["last"].endswith("ago")
    assert seen["agentRowsForHelper"] == ["helper"]  # the agent filter narrows the rows too
    # Lineage both ways, for reassign and for a retry, each link landing on its card.
    assert seen["lineage"]["greet-benchmark"] == [
        {
            "kind": "reassigned",
            "to": "greet-benchmark-r1",
            "label": "reassigned to",
            "lands": "greet-benchmark-r1",
        }
    ]
    assert seen["lineage"]["greet-benchmark-r1"] == [
        {
            "kind": "reassigned",
            "to": "greet-benchmark",
            "label": "reassigned from",
            "lands": "greet-benchmark",
        }
    ]
    assert seen["lineage"]["greet-emoji"] == [
        {"kind": "retried", "to": retried, "label": "retried as", "lands": retried}
    ]
    assert seen["lineage"][retried][0]["label"] == "retried from"
    # The summary line counts what a lead asks about first.
    assert seen["summary"].startswith("1 of 12 done, 1 failed · 4 ready · 1 blocked · 1 dead")
    assert "2 stale" in seen["summary"]
    # Every column fits a 1400 px window: nothing scrolls sideways, no column is hidden.
    assert seen["page"]["width"] <= seen["page"]["window"] == 1400
    for state, box in seen["widths"].items():
        assert box["width"] >= 30, (state, box)
        assert box["right"] <= 1400, (state, box)
    assert seen["widths"]["working"]["width"] > 130
    assert seen["widths"]["auth_required"]["width"] < 60  # empty: a strip
    # Done work folds into a strip and its cards out of sight, then back.
    assert seen["folded"]["width"] < 60
    assert demo_id not in seen["folded"]["shown"]
    assert demo_id in seen["all"]

    # A failing check is red, a passing one is not; the output stays folded until asked for.
    runs = {(r["task"], r["verdict"]): r for r in seen["runs"]}
    assert set(runs) == {("greet-polite", "fail"), (demo_id, "fail"), (demo_id, "pass")}
    assert all(r["visible"] and not r["outputShown"] for r in runs.values()), runs
    assert seen["openedShows"] is True  # a click on the summary shows the output
    assert is_red(runs["greet-polite", "fail"]["background"])
    # The demo's first run failed and the next passed: that failure is history, shown quieter
    # (neither red nor the pass's green).
    assert not is_red(runs[demo_id, "fail"]["background"])
    assert runs[demo_id, "fail"]["background"] != runs[demo_id, "pass"]["background"]
    assert not is_red(runs[demo_id, "pass"]["background"])
    # Durations are rounded for people: "0.1 s", never "0.0123456 s".
    for run in runs.values():
        assert re.search(r"· (<0\.1|\d+(\.\d)?) s ·", run["summary"]), run["summary"]
    # A card that ended badly says why; open cards carry their lint flags.
    assert seen["endings"] == {
        "translate-greeting": "rejected by builder: " + demo_board.REJECTED_REASON,
        "greet-emoji": "failed by builder: " + demo_board.FAILED_REASON,
        "greet-benchmark": "canceled by planner: reassigned to helper as greet-benchmark-r1",
    }
    assert seen["flags"]["greet-polite"] == []
    assert "check_cannot_fail" in seen["flags"][hostile]
    # The card whose latest run failed is marked red; the one whose latest run passed is not.
    assert is_red(seen["borders"]["greet-polite"])
    assert not is_red(seen["borders"][demo_id])
    # Filters by context and by agent, in the page's own script.
    docs = ["announce-french", "docs-greeting", "polite-docs", "release-notes"]
    assert seen["docs"] == docs
    assert seen["writer"] == docs
    assert len(seen["all"]) == 12
    assert seen["shownText"] == "12 shown"
    # Self-contained, and ledger text is shown as text, never run as HTML.
    assert seen["fetched"] == 0
    assert seen["injected"] == 0
    assert seen["objectives"][hostile] == HOSTILE


def test_with_a_repository_url_commits_and_evidence_link_to_it(demo: Path, tmp_path: Path) -> None:
    page = tmp_path / "board.html"
    url = "https://github.com/example/greet"
    result = taskfs("board", "--html", str(page), "--repo-url", url + ".git/", "--json")
    assert result.code == 0, result.stdout + result.stderr
    text = page.read_text()
    head = git(demo, "rev-parse", "HEAD")
    evidence = taskfs("show", "greet-polite", "--json").json["evidence"][0]
    ran_on = re.search(r'href="https://github.com/example/greet/commit/([0-9a-f]{40})"', text)
    assert ran_on, text[:500]
    assert git(demo, "cat-file", "-t", ran_on.group(1)) == "commit"
    assert f'href="{url}/blob/{head}/{evidence["path"]}"' in text
    assert f'href="{url}/blob/{head}/tasks/greet-polite/envelope.yaml"' in text
    # Without an address, no link leaves the page.
    plain = taskfs("board", "--html", "-").stdout
    assert "https://" not in plain


@pytest.mark.parametrize("url", ["github.com/x/y", "javascript:alert(1)", "https://x/y z", ""])
def test_a_repository_url_that_is_not_a_web_address_is_a_usage_error(
    repo: Path, tmp_path: Path, url: str
) -> None:
    result = taskfs("board", "--html", str(tmp_path / "b.html"), "--repo-url", url, "--json")
    assert result.code == 2
    assert result.codes == ["usage"]
    assert not (tmp_path / "b.html").exists()


def test_the_page_needs_nothing_from_the_network(repo: Path, tmp_path: Path) -> None:
    submit(repo, id="one")
    page = tmp_path / "board.html"
    assert taskfs("board", "--html", str(page)).code == 0
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert not re.search(r"https?://|\bsrc=|<link\b|@import|url\(", text)
    assert "<style>" in text
    assert "<script>" in text
    assert oct(page.stat().st_mode & 0o777) == "0o644"


def test_board_to_stdout_and_its_json(repo: Path, tmp_path: Path) -> None:
    submit(repo, id="one")
    to_stdout = taskfs("board", "--html", "-")
    assert to_stdout.code == 0
    assert to_stdout.stdout.startswith("<!DOCTYPE html>")
    assert 'data-task="one"' in to_stdout.stdout
    doc = taskfs("board", "--html", str(tmp_path / "b.html"), "--json").json
    planner_seen = doc["agents"][1].pop("lastActivity")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+\+00:00", planner_seen), planner_seen
    assert doc == {
        "schemaVersion": 1,
        "ok": True,
        "path": str(tmp_path / "b.html"),
        "tasks": 1,
        "columns": {"submitted": ["one"]},
        "markers": {"ready": ["one"]},
        "settled": {},
        "completed": {"today": 0, "thisWeek": 0},
        "needs": [],
        "agents": [
            {
                "name": "builder",
                "held": [],
                "done": [],
                "failed": [],
                "lastActivity": None,
                "needsYou": 0,
                "next": "one",
                "doneToday": 0,
                "doneThisWeek": 0,
            },
            {
                "name": "planner",
                "held": [],
                "done": [],
                "failed": [],
                "needsYou": 0,
                "next": None,
                "doneToday": 0,
                "doneThisWeek": 0,
            },
        ],
    }
    assert taskfs("board", "--html", "-", "--json").code == 2


def test_a_board_that_cannot_be_written_is_a_named_error(repo: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "board.html"
    result = taskfs("board", "--html", str(missing), "--json")
    assert result.codes == ["file_unwritable"]  # a missing folder is a typo: nothing is made
    assert result.code == 1
    assert not (tmp_path / "no").exists()
    blocked = tmp_path / "file"
    blocked.write_text("")
    result = taskfs("board", "--html", str(blocked / "board.html"), "--json")
    assert result.code == 1
    assert result.codes == ["file_unwritable"]
