"""`taskfs review` and `show --format markdown` as a reviewer sees them: rendered by a
CommonMark renderer with GitHub's extensions (markdown-it-py's gfm-like preset: tables,
strikethrough, bare addresses made links), never read as raw text.

Contract text is shown as written (paths, underscores, brackets), and nothing in it becomes a
link, an image or HTML; each acceptance run says who vouches for it; the outcome table comes
first; each task shows the code commits that touched its files and what it replaced; an answer
names what it answers.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tests.helpers import check, git, send, submit, taskfs

TRICKY = (
    "Split textstats/__init__.py; see [x](http://e) and ![i](http://e/i.png), "
    "ask @alice about #12 or mail a@b.example, <img src=x onerror=alert(1)> "
    "| a *b* _c_ ~~d~~ $e$ :tada: www.example.com &amp; \\ `tick`"
)
SHOWN = [
    "textstats/__init__.py",
    "[x](http://e)",
    "![i](http://e/i.png)",
    "@alice",
    "#12",
    "a@b.example",
    "<img src=x onerror=alert(1)>",
    "| a *b* _c_ ~~d~~ $e$ :tada: www.example.com &amp; \\ `tick`",
]


class Page(HTMLParser):
    """What a rendered page holds: its tags, its visible text, and its tables' rows."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.chunks: list[str] = []
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "tr":
            self.rows.append([])
        if tag in ("td", "th"):
            self._cell = []
        if tag == "br":
            self.chunks.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        self.chunks.append(data)
        if self._cell is not None:
            self._cell.append(data)

    @property
    def text(self) -> str:
        return "".join(self.chunks)

    def named(self, *tags: str) -> list[tuple[str, dict[str, str | None]]]:
        return [(t, a) for t, a in self.tags if t in tags]


def render(markdown: str) -> Page:
    renderer = MarkdownIt("gfm-like")  # tables, strikethrough, linkify, inline HTML allowed
    return Page(renderer.render(markdown))


@pytest.fixture
def worked(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """On a branch: a task with the tricky objective, worked, checked (self-reported, before
    any runner key), asked about and answered; a second task checked by runner `ci`; a third
    handed on to another agent."""
    git(repo, "checkout", "-q", "-b", "feature")
    submit(
        repo,
        id="tricky",
        objective=TRICKY,
        boundaries="Leave docs/_build/ and [links](http://x) alone.",
        filesAndInterfaces=["textstats/**"],
        acceptanceCheck={
            "passFailCommand": "test -f textstats/__init__.py",
            "endToEndVerification": "python3 -c 'import textstats'",
        },
    )
    assert taskfs("claim", "tricky", "--agent", "builder").code == 0
    question = send("tricky", "builder", "planner", "Keep __all__ as it is?", status="needs_input")
    answer = ["send", "tricky", "Yes, keep it.", "--agent", "planner", "--to", "builder"]
    assert taskfs(*answer, "--in-reply-to", question).code == 0
    (repo / "textstats").mkdir()
    (repo / "textstats" / "__init__.py").write_text("__all__ = []\n")
    git(repo, "add", "textstats")
    git(repo, "commit", "-q", "-m", "textstats: a package of its own")
    check("tricky")
    assert taskfs("keys", "new", "--runner", "ci").code == 0
    submit(
        repo,
        id="signed",
        filesAndInterfaces=["src/signed.py"],
        acceptanceCheck={"passFailCommand": "true", "endToEndVerification": "n/a"},
    )
    assert taskfs("claim", "signed", "--agent", "builder").code == 0
    check("signed")
    submit(repo, id="handed", filesAndInterfaces=["src/handed.py"])
    assert taskfs("reassign", "handed", "--to", "helper", "--agent", "planner").code == 0
    return repo


def test_contract_text_renders_as_written_with_no_link_image_or_html(worked: Path) -> None:
    for args in (["review", "main..HEAD"], ["show", "tricky", "--format", "markdown"]):
        out = taskfs(*args).stdout
        page = render(out)
        assert page.named("a", "img", "script", "iframe") == [], args
        text = page.text
        for literal in SHOWN:
            assert literal in text, (args, literal)
        assert "docs/_build/ and [links](http://x) alone." in text
        # Nothing of it became emphasis or strikethrough (the page's own bold aside).
        assert not page.named("em", "s", "del")


def test_every_table_keeps_its_columns(worked: Path) -> None:
    for args in (["review", "main..HEAD"], ["show", "tricky", "--format", "markdown"]):
        out = taskfs(*args).stdout
        tables = [chunk for chunk in out.split("\n\n") if chunk.startswith("| ")]
        assert len(tables) >= 2
        for chunk in tables:
            page = render(chunk)
            assert len({len(row) for row in page.rows}) == 1, (chunk, page.rows)


def test_each_run_says_who_vouches_for_it(worked: Path) -> None:
    out = taskfs("review", "main..HEAD").stdout
    runs = render(out.split("### Acceptance runs")[1].split("### Messages")[0]).text
    tricky, signed = runs.split("✅")[1:]
    assert "self-reported by builder" in tricky
    assert "signed by runner ci" in signed
    doc = taskfs("review", "main..HEAD", "--json").json
    assert [(e["task"], e["signature"]) for e in doc["evidence"]] == [
        ("tricky", "unsigned"),
        ("signed", "valid"),
    ]
    shown = render(taskfs("show", "signed", "--format", "markdown").stdout).text
    assert "signed by runner ci" in shown


def test_the_outcome_table_comes_first_with_commits_and_lineage(worked: Path) -> None:
    out = taskfs("review", "main..HEAD").stdout
    sections = [line for line in out.splitlines() if line.startswith("### ")]
    assert sections[0] == "### Outcome"
    page = render(out.split("### Outcome")[1].split("\n### ")[0])
    header, *rows = page.rows
    assert header == ["task", "now", "held by", "latest run", "code commits", "lineage"]
    by_task = {row[0]: row for row in rows}
    assert list(by_task) == ["tricky", "signed", "handed", "handed-r1"]
    code = git(worked, "log", "-1", "--format=%h", "--abbrev=7", "--", "textstats")
    assert by_task["tricky"][1] == "working"
    assert by_task["tricky"][2] == "builder"
    assert by_task["tricky"][3] == "✅ pass, self-reported by builder"
    assert by_task["tricky"][4] == code
    assert by_task["signed"][3] == "✅ pass, 🔏 signed by runner ci"
    assert by_task["signed"][4] == "-"
    assert by_task["handed"][1] == "canceled"
    assert by_task["handed"][5] == "replaced by handed-r1 (reassigned)"
    assert by_task["handed-r1"][5] == "replaces handed (reassigned)"
    added = render(out.split("#### `tricky`")[1].split("####")[0]).text
    assert "textstats: a package of its own" in added
    doc = taskfs("review", "main..HEAD", "--json").json
    outcomes = {o["id"]: o for o in doc["outcomes"]}
    assert [c["subject"] for c in outcomes["tricky"]["codeCommits"]] == [
        "textstats: a package of its own"
    ]
    assert outcomes["handed"]["replacedBy"] == [{"id": "handed-r1", "how": "reassigned"}]
    assert outcomes["tricky"]["latestRun"]["signature"] == "unsigned"


def test_show_lists_the_code_commits_and_the_lineage(worked: Path) -> None:
    shown = taskfs("show", "tricky", "--format", "markdown").stdout
    commits = render(shown.split("#### Code commits")[1].split("####")[0]).text
    assert "textstats: a package of its own (Test User)" in commits
    assert taskfs("show", "tricky", "--format", "markdown", "--json").json["codeCommits"]
    handed = render(taskfs("show", "handed", "--format", "markdown").stdout)
    assert ["lineage", "replaced by handed-r1 (reassigned)"] in handed.rows
    quiet = taskfs("show", "signed", "--format", "markdown").stdout
    assert "No commit touched the files it owns." in quiet


def test_an_answer_names_what_it_answers(worked: Path) -> None:
    review = render(taskfs("review", "main..HEAD").stdout)
    answers = [row[-1] for row in review.rows if row and row[0] == "tricky" and len(row) == 6]
    assert answers[-1].startswith("answers builder's needs_input “Keep __all__ as it is?” (")
    shown = render(taskfs("show", "tricky", "--format", "markdown").stdout).text
    assert "answers builder's needs_input “Keep __all__ as it is?”" in shown
