"""`taskfs board`'s page: what is stuck, what waits for whose decision, who is idle, what is next.

At the top, the summary line (`5 of 9 done, 1 failed · 2 ready · 1 dead`), the day's counts
(completed today and this week, the archive's included) and the filters; a row per agent (what
it holds, what needs its decision, what is next for it, what it did today, when it last acted);
below, a column per state, the requests that are not tasks yet first, a card per task
(`taskfs.report.board_cards`). With a repository's web address, commits and evidence files
link to it.

One page for both ways of showing it: `board --html` writes it whole, needing no network (the
styles and the script are inline, `taskfs.report.board_page`); `board --serve` serves the same
page, marked live, whose script swaps in the parts (`parts`) the server sends as the ledger
moves (`taskfs.report.board_live`). Every value from the ledger is made inert and
HTML-escaped (`board_cards.e`).

The filters are one table (`FILTERS`): each names the values a card (and a request, and an
agent's row) has for it. A filter with no values on the board is not shown; a new one (labels)
is one more entry.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from taskfs import i18n
from taskfs.core.display import safe
from taskfs.core.lifecycle import STATES
from taskfs.report.board_cards import (
    LABELS,
    Links,
    anchor,
    card,
    count_words,
    decision_word,
    e,
    needs,
    task_links,
)
from taskfs.report.board_page import SCRIPT, STYLE, TEMPLATE
from taskfs.report.style import STATE_COLOURS, age, state_colours

if TYPE_CHECKING:
    from taskfs.api.views.board import AgentRow, Board, Card
    from taskfs.core.intake import Intake

# Columns whose work is over and needs nothing: folded away with one click.
FOLDABLE = ("completed", "canceled")
ORDER = ("intake", *STATES)


@dataclass(frozen=True)
class Filter:
    name: str
    label: Callable[[], str]
    of_card: Callable[[Card], Iterable[str]]
    of_request: Callable[[Intake], Iterable[str]]
    of_agent: bool = False  # whether it narrows the agents' rows (by their name)


def _parties(found: Card) -> list[str]:
    task = found.report.task
    env = task.envelope
    return [a for a in (env.sender, env.recipient, task.chain.holder) if a]


def _labels(found: Card) -> list[str]:
    return list(found.report.task.envelope.labels)


FILTERS: tuple[Filter, ...] = (
    Filter(
        "agent",
        lambda: i18n.say("agent"),
        _parties,
        lambda request: [a for a in (request.requester, request.recipient) if a],
        of_agent=True,
    ),
    Filter("state", lambda: i18n.say("state"), lambda c: [c.state], lambda _request: ["intake"]),
    Filter("label", lambda: i18n.say("label"), _labels, lambda _request: []),
    Filter(
        "context",
        lambda: i18n.say("context"),
        lambda c: [c.report.task.envelope.context_id],
        lambda _request: [],
    ),
)


def page(
    view: Board, *, title: str, generated: str, repo_url: str | None = None, live: str = ""
) -> str:
    """The board of `view` (`taskfs.api.views.board.board`)."""
    return shell(parts(view, generated=generated, repo_url=repo_url), title=title, live=live)


def shell(found: Mapping[str, Any] | None, *, title: str, live: str = "") -> str:
    """The page around the board's parts (`parts`; None: a page waiting for its board);
    `live`: the address of the stream of its parts, for a served page that keeps itself
    current."""
    found = found or {
        "generated": "",
        "summary": "",
        "periods": "",
        "agents": "",
        "board": "",
        "filters": {f.name: [] for f in FILTERS},
    }
    return TEMPLATE.format(
        lang=e(i18n.languages()[0] if i18n.languages() else "en"),
        title=e(title),
        style=STYLE + _state_css(),
        script=SCRIPT,
        live=e(live),
        live_words=_live_words() if live else "",
        generated=e(found["generated"]),
        summary=found["summary"],
        periods=found["periods"],
        filters=_filters(found["filters"]),
        shown_template=e(i18n.say("{count} shown", count="{count}")),
        agents=found["agents"],
        board=found["board"],
    )


def parts(view: Board, *, generated: str, repo_url: str | None = None) -> dict[str, Any]:
    """The parts of the page that change as the ledger moves: HTML (escaped) and, for the
    filters, their values."""
    links = Links(repo_url, view.head)
    columns = _requests(view) + "\n".join(
        _column(state, [c for c in view.cards if c.state == state], view.now, links)
        for state in STATES
    )
    settled = {c.id for c in view.cards if c.settled_by is not None}
    return {
        "generated": safe(generated),
        "summary": summary_line(view),
        "periods": periods_line(view),
        "agents": _agent_rows(view.agents, view.now, settled),
        "board": columns,
        "filters": filter_values(view),
    }


def filter_values(view: Board) -> dict[str, list[str]]:
    """Each filter's values on the board, in order (states in the lifecycle's)."""
    out: dict[str, list[str]] = {}
    for found in FILTERS:
        values = {safe(v) for c in view.cards for v in found.of_card(c)}
        values |= {safe(v) for r in view.requests for v in found.of_request(r)}
        if found.of_agent:
            values |= {safe(a.name) for a in view.agents}
        if found.name == "state":
            out[found.name] = [s for s in ORDER if s in values]
        else:
            out[found.name] = sorted(values)
    return out


def _data(values: Mapping[str, Iterable[str]]) -> str:
    """An element's filter values, as the page's script reads them."""
    document = json.dumps({k: [safe(v) for v in vs] for k, vs in values.items()})
    return f' data-filters="{e(document)}"'


def _filters(values: Mapping[str, list[str]]) -> str:
    everything = e(i18n.say("all"))
    out = []
    for found in FILTERS:
        options = "".join(f'<option value="{e(v)}">{e(v)}</option>' for v in values[found.name])
        hidden = "" if values[found.name] else " hidden"
        out.append(
            f'<label class="filter-{found.name}"{hidden}>{e(found.label())} '
            f'<select class="filter" id="filter-{found.name}" data-filter="{found.name}">'
            f'<option value="">{everything}</option>{options}</select></label>'
        )
    return "".join(out)


def _live_words() -> str:
    """What the page says of its connection, in the reader's language."""
    words = {
        "live": i18n.say("live"),
        "connecting": i18n.say("connecting"),
        "offline": i18n.say("offline, reconnecting"),
        "refused": i18n.say("refused: open the address with its token"),
    }
    return "".join(f' data-{k}="{e(v)}"' for k, v in words.items())


def summary_line(view: Board) -> str:
    """`5 of 9 done, 1 failed · 1 settled · 2 ready · 1 blocked · 1 dead · 1 stale · 1
    request · 2 decisions waiting`. A failure whose work another task completed counts as
    settled, not failed: the day's news is what is still broken."""
    counts = view.counts
    open_failures = counts.get("failed_open", 0)
    head = e(
        i18n.say(
            "{done} of {total} done, {failed} failed",
            done=counts.get("completed", 0),
            total=counts.get("tasks", 0),
            failed=open_failures,
        )
    )
    parts = [f'<span class="{"bad" if open_failures else "done"}">{head}</span>']
    for key, text in count_words(counts).items():
        if counts.get(key):
            bad = " bad" if key in ("dead", "stale") else ""
            parts.append(f'<span class="count-{key}{bad}">{e(text)}</span>')
    return " · ".join(parts)


def periods_line(view: Board) -> str:
    """`3 completed today · 7 this week`, the archive's included."""
    if view.periods is None:
        return ""
    today = i18n.say("{count} completed today", count=view.periods.today)
    week = i18n.say("{count} this week", count=view.periods.week)
    return f'<span class="today">{e(today)}</span> · <span class="week">{e(week)}</span>'


def _agent_rows(rows: Sequence[AgentRow], now: datetime, settled: set[str]) -> str:
    if not rows:
        return ""
    words = (
        i18n.say("agent"),
        i18n.say("holds"),
        i18n.say("needs you"),
        i18n.say("next"),
        i18n.say("done today"),
        i18n.say("this week"),
        i18n.say("failed"),
        i18n.say("to claim"),
        i18n.say("last acted"),
    )
    head = "".join(f"<th>{e(word)}</th>" for word in words)
    body = []
    for row in rows:
        held = (
            task_links(row.held)
            if row.held
            else f'<span class="idle-tag">{e(i18n.say("idle"))}</span>'
        )
        last = (
            f'<time datetime="{e(row.last.isoformat())}">'
            f"{e(i18n.say('{age} ago', age=age((now - row.last).total_seconds())))}</time>"
            if row.last
            else "-"
        )
        waiting = "".join(
            f'<li><a href="#{e(anchor(d.task))}" title="{e(d.command)} · {e(d.tool)}">'
            f"{e(decision_word(d.kind))} {e(d.task)}</a></li>"
            for d in row.needs
        )
        has = " has-needs" if row.needs else ""
        failed = " ".join(
            f'<a class="{"settled" if t in settled else "open"}" href="#{e(anchor(t))}">{e(t)}</a>'
            for t in row.failed
        )
        next_task = task_links([row.next]) if row.next else "-"
        idle = " idle" if row.idle else ""
        body.append(
            f'<tr class="agent{idle}" data-agent="{e(row.name)}"{_data({"agent": [row.name]})}>'
            f"<th>{e(row.name)}</th>"
            f'<td class="held">{held}</td>'
            f'<td class="needs{has}"><b class="count">{len(row.needs)}</b>'
            f"<ul>{waiting}</ul></td>"
            f'<td class="next">{next_task}</td>'
            f'<td class="today" title="{e(" ".join(row.done))}">{row.done_today}</td>'
            f'<td class="week">{row.done_week}</td>'
            f'<td class="failed">{len([t for t in row.failed if t not in settled])} {failed}</td>'
            f'<td class="waiting">{task_links(row.waiting) or "-"}</td>'
            f'<td class="last">{last}</td></tr>'
        )
    return (
        f'<section class="agents" aria-label="{e(i18n.say("agents"))}"><table><thead><tr>'
        f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table></section>"
    )


def _column(state: str, cards: Sequence[Card], now: datetime, links: Links) -> str:
    body = "\n".join(
        card(c, now, links, _data({f.name: f.of_card(c) for f in FILTERS}))
        for c in sorted(cards, key=lambda c: c.id)
    )
    # An empty column collapses to a narrow strip with its name written down the side.
    empty = " empty" if not cards else ""
    heading = (
        f'<h2><span class="dot"></span>{e(LABELS[state])} '
        f'<span class="count">{len(cards)}</span></h2>'
    )
    if state in FOLDABLE and cards:
        inner = (
            f'<details class="fold" id="fold-{state}" open><summary>{heading}</summary>\n'
            f"{body}\n</details>"
        )
    else:
        inner = f"{heading}\n{body}"
    return f'<section class="column state-{state}{empty}" data-state="{state}">{inner}\n</section>'


def _requests(view: Board) -> str:
    """The open intakes: requests that are not yet tasks, each with what it still lacks and
    what waits on it for whose decision."""
    if not view.requests:
        return ""
    cards = []
    for intake in view.requests:
        missing = ", ".join(dict.fromkeys(p.field or p.code for p in intake.missing()))
        words = " ".join(intake.words()) or i18n.say("(fields only)")
        proposal = intake.pending_proposal()
        proposed = (
            i18n.say("{agent} proposed an envelope", agent=proposal.record.by) if proposal else ""
        )
        waiting = f'<p class="stale">{e(proposed)}</p>' if proposed else ""
        if intake.discovered_from is not None:
            found = e(i18n.say("found while working on"))
            link = task_links([intake.discovered_from])
            waiting += f'<p class="found">{found} {link}</p>'
        values = _data({f.name: f.of_request(intake) for f in FILTERS})
        cards.append(
            f'<article class="card request" id="{e(anchor(intake.id))}" '
            f'data-task="{e(intake.id)}" data-state="intake"{values}>'
            f'<header><span class="id">{e(intake.id)}</span></header>{waiting}'
            f"{needs(view.request_needs.get(intake.id, ()))}"
            f'<p class="objective">{e(words)}</p><dl class="facts">'
            f"<dt>{e(i18n.say('from → to'))}</dt>"
            f"<dd>{e(intake.requester)} → {e(intake.recipient or i18n.say('anyone'))}</dd>"
            f"<dt>{e(i18n.say('missing'))}</dt><dd>{e(missing or '-')}</dd></dl></article>"
        )
    return (
        '<section class="column state-intake" data-state="intake">'
        f'<h2><span class="dot"></span>{e(i18n.say("requests"))} <span class="count">'
        f"{len(view.requests)}</span></h2>\n" + "\n".join(cards) + "\n</section>\n"
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
