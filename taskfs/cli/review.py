"""Commands for people who review and watch the work: lint, review, graph, and `show --format
markdown` (the board is `taskfs.cli.board`). Each parses, calls the library, and renders."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from taskfs import i18n
from taskfs.cli import render
from taskfs.cli.group import cli, json_option
from taskfs.cli.output import act, open_repo
from taskfs.core import shapes
from taskfs.errors import TaskfsError

Shown = tuple[dict[str, Any], "str | Callable[[], str]"]


def show_markdown(task_id: str, as_json: bool) -> int:
    from taskfs.api.views import reports
    from taskfs.report import markdown

    def show(report: reports.TaskReport) -> Shown:
        doc, _text = render.show(report.task)
        doc["evidence"] = [row.to_json() for row in report.evidence]
        doc["codeCommits"] = [c.to_json() for c in report.code_commits]
        return doc, lambda: markdown.task(report).rstrip("\n")

    return act(as_json, lambda: reports.task_report(open_repo(), task_id, commits=True), show)


@cli.command()
@click.argument("targets", nargs=-1, metavar="[FILE|ID|RANGE]...")
@click.option("--strict", is_flag=True, help="Warnings fail too (exit status 1).")
@json_option
def lint(targets: tuple[str, ...], strict: bool, as_json: bool) -> int:
    """Weak contracts' warnings: files, task ids, those a range added (A..B), else open tasks."""
    from taskfs.api.tasks import lint as lint_api

    def call() -> lint_api.Linted:
        return lint_api.lint(_repo_or_none() if targets else open_repo(), list(targets))

    def show(result: lint_api.Linted) -> Shown:
        doc = shapes.document(
            result.ok(strict),
            checked=result.checked,
            warnings=[w.to_json() for w in result.warnings],
            errors=[p.to_json() for p in result.errors],
        )
        lines = [
            f"{w.data.get('subject')}: warning[{w.code}] {w.field}: {w.message}"
            for w in result.warnings
        ]
        lines += render.problems_text(result.errors)
        checked = (
            i18n.say("1 contract checked")
            if result.checked == 1
            else i18n.say("{count} contracts checked", count=result.checked)
        )
        count = len(result.warnings)
        warned = (
            i18n.say(", 1 warning") if count == 1 else i18n.say(", {count} warnings", count=count)
        )
        summary = checked + warned
        errors = ""
        if result.errors:
            errors = (
                i18n.say(", 1 error")
                if len(result.errors) == 1
                else i18n.say(", {count} errors", count=len(result.errors))
            )
        lines.append(summary + errors)
        return doc, "\n".join(lines)

    return act(as_json, call, show)


def _repo_or_none() -> Any:
    try:
        return open_repo()
    except TaskfsError as exc:
        if exc.codes == ["not_a_repository"]:
            return None
        raise


@cli.command()
@click.argument("rev_range", required=False, metavar="[REV_RANGE]")
@json_option
def review(rev_range: str | None, as_json: bool) -> int:
    """A markdown review of what a range did to the ledger; exit 1 on errors.

    REV_RANGE is A..B, A...B or A (meaning A..HEAD); by default the current branch against
    its upstream, else against main or master.
    """
    from taskfs.api.review import ranges as review_api
    from taskfs.report import range_review

    def show(result: review_api.Review) -> Shown:
        return _review_document(result), lambda: range_review.review(result).rstrip("\n")

    return act(as_json, lambda: review_api.review(open_repo(), rev_range), show)


def _review_document(result: Any) -> dict[str, Any]:
    return shapes.document(
        result.ok,
        range={
            "revisions": result.revisions,
            "base": result.base,
            "tip": result.tip,
            "commits": result.commits,
            "tipIsCheckout": result.tip_is_checkout,
        },
        tasks=[
            {
                "id": t.id,
                "commit": t.commit,
                "author": t.author,
                "state": t.state,
                "archived": t.archived,
                "envelope": t.envelope.to_document() if t.envelope else None,
                **({"problem": t.problem} if t.problem else {}),
            }
            for t in result.tasks
        ],
        transitions=[
            {
                "task": t.task,
                "path": t.path,
                "commit": t.commit,
                "author": t.author,
                "from": t.left,
                **(t.record.to_document() if t.record else {}),
                "superseded": t.superseded,
                **({"problem": t.problem} if t.problem else {}),
            }
            for t in result.transitions
        ],
        evidence=[row.to_json() for row in result.evidence],
        messages=[row.to_json() for row in result.messages],
        archived=[
            {"id": t.id, "commit": t.commit, "author": t.author, "state": t.state}
            for t in result.archived
        ],
        errors=[f.to_json() for f in result.errors],
        warnings=[w.to_json() for w in result.warnings],
        outcomes=[o.to_json() for o in result.outcomes],
    )


@cli.command()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["mermaid", "dot"]),
    default="mermaid",
    help="Mermaid (renders in GitHub markdown) or Graphviz DOT.",
)
@json_option
def graph(fmt: str, as_json: bool) -> int:
    """The dependsOn and delegation graph, coloured by state."""
    from taskfs.api.views import reports
    from taskfs.report import graph as graph_text

    def show(result: reports.TaskGraph) -> Shown:
        doc = shapes.document(
            True,
            nodes=[
                {"id": n.id, "state": n.state, "contextID": n.context, "archived": n.archived}
                for n in result.nodes
            ],
            edges=[{"from": e.source, "to": e.target, "kind": e.kind} for e in result.edges],
        )
        draw = graph_text.mermaid if fmt == "mermaid" else graph_text.dot
        return doc, lambda: draw(result).rstrip("\n")

    return act(as_json, lambda: reports.task_graph(open_repo()), show)
