"""`taskfs board --html FILE`, looked at the way a person would: rendered by headless Chromium
from the demo repository, with the DOM (and the computed styles) checked.

The browser test needs Chromium. It skips, saying why, only when none can be found; `.ci/run`
installs Debian's chromium and sets TASKFS_REQUIRE_CHROMIUM=1, which turns the skip into a
failure, so in CI it always runs.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import browser, demo_board
from tests.helpers import submit, taskfs

# Runs in the page after the board's own script: it reads what is laid out and how it is
# styled, works the filters, and leaves its findings in the DOM for --dump-dom.
PROBE = """<script>
(function () {
  function visible(el) {
    // checkVisibility also sees what a closed <details> hides (content-visibility).
    var box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0 &&
      el.checkVisibility({contentVisibilityAuto: true, opacityProperty: true,
                          visibilityProperty: true});
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
  var out = {columns: {}, runs: [], borders: {}, objectives: {}, endings: {}, flags: {},
             widths: {}, quiet: []};
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
    out.borders[card.dataset.task] = getComputedStyle(card).borderLeftColor;
    out.objectives[card.dataset.task] = card.querySelector(".objective").textContent;
    var ending = card.querySelector(".ending");
    if (ending && visible(ending)) { out.endings[card.dataset.task] = ending.textContent; }
    out.flags[card.dataset.task] = Array.prototype.filter.call(
      card.querySelectorAll(".flag"), visible).map(function (f) { return f.textContent; });
  });
  document.querySelectorAll(".column").forEach(function (column) {
    out.widths[column.dataset.state] = column.getBoundingClientRect().width;
  });
  out.docs = choose("filter-context", "docs");
  out.writer = choose("filter-agent", "writer");
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


def need_chromium() -> None:
    if browser.find_chromium() is not None:
        return
    why = "no chromium found (apt-get install chromium, or set TASKFS_CHROMIUM)"
    if os.environ.get("TASKFS_REQUIRE_CHROMIUM") == "1":
        pytest.fail(f"TASKFS_REQUIRE_CHROMIUM=1 but {why}")
    pytest.skip(f"{why}; .ci/run installs it and runs this test")


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


def test_the_demo_board_in_chromium_shows_each_task_in_its_column(
    demo: Path, tmp_path: Path
) -> None:
    need_chromium()
    hostile = submit(
        demo,
        id="hostile",
        objective=HOSTILE,
        filesAndInterfaces=["hostile.py"],
        acceptanceCheck={"passFailCommand": "true", "endToEndVerification": "Look at it."},
    )
    page = tmp_path / "board.html"
    result = taskfs("board", "--html", str(page), "--json")
    assert result.code == 0, result.stderr
    demo_id = next(t for t in result.json["columns"]["completed"])

    probed = tmp_path / "probed.html"
    probed.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    dom = browser.dump_dom(probed)
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    seen = json.loads(html.unescape(found.group(1)))

    assert seen["columns"] == {
        "submitted": ["docs-greeting", hostile],
        "working": ["greet-polite"],
        "input_required": ["release-notes"],
        "auth_required": [],
        "completed": [demo_id],
        "failed": [],
        "canceled": [],
        "rejected": ["translate-greeting"],
    }
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
        "translate-greeting": "rejected by builder: " + demo_board.REJECTED_REASON
    }
    assert seen["flags"]["greet-polite"] == []
    assert "check_cannot_fail" in seen["flags"][hostile]
    # Empty columns collapse to a narrow strip; full ones keep their width.
    assert seen["widths"]["failed"] < 60
    assert seen["widths"]["working"] > 200
    # The card whose latest run failed is marked red; the one whose latest run passed is not.
    assert is_red(seen["borders"]["greet-polite"])
    assert not is_red(seen["borders"][demo_id])
    # Filters by context and by agent, in the page's own script.
    assert seen["docs"] == ["docs-greeting", "release-notes"]
    assert seen["writer"] == ["docs-greeting", "release-notes"]
    assert len(seen["all"]) == 6
    assert seen["shownText"] == "6 shown"
    # Self-contained, and ledger text is shown as text, never run as HTML.
    assert seen["fetched"] == 0
    assert seen["injected"] == 0
    assert seen["objectives"][hostile] == HOSTILE


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
    assert doc == {
        "schemaVersion": 1,
        "ok": True,
        "path": str(tmp_path / "b.html"),
        "tasks": 1,
        "columns": {"submitted": ["one"]},
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
