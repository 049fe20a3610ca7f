"""Turning library results into (JSON document, text for people) pairs."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from taskfs import i18n
from taskfs.api.views import documents as views
from taskfs.api.views.checks import said_lines
from taskfs.core.shapes import document
from taskfs.errors import Problem
from taskfs.report import terminal


def submitted(results: Sequence[Any], single: bool) -> tuple[dict[str, Any], str]:
    if single and len(results) == 1:
        doc = document(True, id=results[0].id, state=results[0].state)
    else:
        doc = document(True, tasks=[{"id": r.id, "state": r.state} for r in results])
    return doc, "\n".join(r.id for r in results)


def moved(result: Any) -> tuple[dict[str, Any], str]:
    """A transition's answer; a completion's warnings on stderr too, as `check` says its own
    (whatever the output format: the document carries them as well)."""
    import sys

    from taskfs.core.display import safe

    doc = document(True, **views.moved(result))
    for found in getattr(result, "warnings", None) or ():
        sys.stderr.write(safe(f"taskfs: warning[{found.code}]: {found.message}") + "\n")
    if doc.get("already"):
        return doc, i18n.say("{id}: already completed by you; nothing changed", id=result.id)
    return doc, f"{result.id}: {result.state}"


def task_list(tasks: Iterable[Any]) -> tuple[dict[str, Any], str | Callable[[], str]]:
    rows = [views.summary(t) for t in tasks]
    if terminal.is_terminal():
        return document(True, tasks=rows), lambda: terminal.task_table(rows)
    lines = [
        f"{r['id']:<20} {r['state']:<15} {r['from'] or '-':<12} {r['to'] or '-':<12} "
        f"{r['contextID']}"
        + (f"  {terminal.priority_mark(r)}" if r.get("priority") is not None else "")
        + (f"  {','.join(r['labels'])}" if r.get("labels") else "")
        + (f"  ({r['superseded']} superseded)" if r.get("superseded") else "")
        for r in rows
    ]
    return document(True, tasks=rows), "\n".join(lines)


def nothing_ready(blocked: Sequence[Any]) -> str:
    """`ready` when nothing can be claimed: how many tasks wait, and on what."""
    if not blocked:
        return i18n.say("nothing to claim: no submitted task is offered to you")
    lines = [
        i18n.say("nothing to claim: 1 task is blocked")
        if len(blocked) == 1
        else i18n.say("nothing to claim: {count} tasks are blocked", count=len(blocked))
    ]
    lines += [
        "  " + i18n.say("{id} waits for {what}", id=task.id, what=", ".join(why))
        for task, why in blocked
    ]
    return "\n".join(lines)


def intake(answer: Any) -> tuple[dict[str, Any], str]:
    """An intake (`taskfs.api.intake.requests.Answer`) as `show` and `taskfs intake` print it."""
    from taskfs.api.views import intake as views

    accepted = getattr(answer, "accepted", None)
    envelope = getattr(answer, "envelope", None)
    doc = views.answer_document(
        answer.intake,
        answer.problems,
        submitted=answer.submitted,
        accepted=accepted,
        envelope=envelope,
    )
    text = views.text(answer.intake, answer.problems, "cli", submitted=answer.submitted, words=True)
    if envelope is not None:
        from taskfs.core import yamlio

        # What was submitted, whole: the requester sees the words it made its own.
        text += "\n" + yamlio.dump(envelope).rstrip("\n")
    return doc, text


def show(
    task: Any,
    origin: dict[str, Any] | None = None,
    amended: Sequence[dict[str, Any]] = (),
    follow_ups: Sequence[dict[str, Any]] = (),
) -> tuple[dict[str, Any], str]:
    """`show ID`; `origin`: the request it was born from (`views.intake.origin`), if any;
    `amended`: its amendments (`views.amendments.rows`); `follow_ups`: the work found while
    working on it (`queries.follow_ups`)."""
    from taskfs.api.views.intake import origin_lines
    from taskfs.core import yamlio

    doc = document(True, **views.detail(task))
    text = f"# {task.id}: {task.state}\n" + yamlio.dump(task.envelope.to_document())
    text += outcome(task)
    if amended:
        doc["amendments"] = list(amended)
        text += "\n# " + i18n.say("amendments") + "\n"
        text += "".join(f"  {amendment_line(row, task.id)}\n" for row in amended)
    if follow_ups:
        doc["followUps"] = list(follow_ups)
        text += "\n# " + i18n.say("follow-ups") + "\n"
        text += "".join(
            "  "
            + i18n.say(
                "{id} ({state}): {requester} asked {to}",
                id=f["id"],
                state=f["state"],
                requester=f["from"] or "-",
                to=f["to"] or i18n.say("anyone"),
            )
            + "\n"
            for f in follow_ups
        )
    if origin is not None:
        doc["request"] = origin
        head = "\n# " + i18n.say("request") + "\n"
        text += head + "".join(
            f"  {line}\n" for said in origin_lines(origin) for line in said.splitlines()
        )
    rows = views.evidence(task)
    if rows:
        head = "\n# " + i18n.say("evidence") + "\n"
        text += head + "\n".join(_evidence_line(row) for row in rows) + "\n"
        # Why the latest run failed, in the command's own words (whoever ran it).
        text += "".join(f"  {line}\n" for line in said_lines(rows[-1].get("output", {})))
    for found in task.problems:
        text += f"\nproblem[{found.code}]: {found.message}"
    return doc, text.rstrip("\n")


# The ends a task is given a reason for (`reason_required`, or a cancellation's words).
ENDED_WITH_A_REASON = ("failed", "rejected", "canceled")


def outcome(task: Any) -> str:
    """How a task ended, as `show` says it after the envelope: why it failed, was refused or
    canceled (who said so, when), and the artifacts its completion named. Read from its status
    files, which `--json` gives whole in `history`."""
    text = ""
    head = task.chain.head
    if task.state in ENDED_WITH_A_REASON and head is not None and head.record.reason:
        record = head.record
        line = i18n.say("by {agent} at {at}: {reason}", agent=record.by, at=record.at,
                        reason=record.reason)  # fmt: skip
        text += f"\n# {task.state}\n  {line}\n"
    made = [a for link in task.chain.links for a in link.record.artifacts or ()]
    if made:
        text += "\n# " + i18n.say("artifacts") + "\n"
        text += "".join(f"  {a.name}: {a.location}\n" for a in made)
    return text


def amendment_line(row: dict[str, Any], task_id: str) -> str:
    """One amendment (or acceptance) as `show` lists it."""
    if row["kind"] == "accepted":
        line = i18n.say(
            "{at}  {agent} accepted {file}", at=row["at"], agent=row["by"], file=row["accepts"]
        )
        return line + (": " + _status_word("void") if row.get("status") == "void" else "")
    changed = ", ".join(row.get("changed", ())) or "-"
    line = i18n.say(
        "{at}  amended by {agent} ({keys}): {status}",
        at=row["at"],
        agent=row["by"],
        keys=changed,
        status=_status_word(row["status"]),
    )
    if row.get("reason"):
        line += f"  ({row['reason']})"
    if row["status"] == "pending":
        line += "; " + i18n.say("its holder accepts it: taskfs amend {id} --accept", id=task_id)
    return f"{line}  {row['file']}"


def _status_word(status: str) -> str:
    words = {
        "in force": i18n.say("in force"),
        "pending": i18n.say("pending"),
        "lapsed": i18n.say("lapsed (not accepted before the task ended)"),
        "accepted": i18n.say("accepted"),
        "superseded": i18n.say("superseded"),
        "void": i18n.say("void (counts for nothing)"),
    }
    return words.get(status, status)


def _evidence_line(row: dict[str, Any]) -> str:
    what = (
        i18n.say(
            "check {verdict} ({source}, exit {exit_code})",
            verdict=row["verdict"],
            source=row["verdictSource"],
            exit_code=row["exitCode"],
        )
        + (" " + i18n.say("fresh") if row.get("fresh") else "")
        if row["kind"] == "check"
        else i18n.say(
            "judgement {verdict} from {source} (does not count)",
            verdict=row["verdict"],
            source=row["verdictSource"],
        )
    )
    by = " " + i18n.say("by {agent}", agent=row["by"]) if row.get("by") else ""
    kind = row["signature"]
    if kind == "valid":
        signature = i18n.say("signed by runner {runner}", runner=row.get("runner"))
    elif kind == "unsigned":
        signature = i18n.say("unsigned")
    elif kind == "unverified":
        signature = i18n.say("signed, not verified (no runner key is trusted)")
    else:
        signature = i18n.say("SIGNATURE INVALID: {note}", note=row["signatureNote"])
    if row["kind"] == "judgement" and kind == "unsigned":
        signature = i18n.say("recorded")
    return f"{row['at']}  {what}{by}  [{signature}]  {row['file']}"


def problems_text(problems: Iterable[Problem]) -> list[str]:
    return [f"  error[{p.code}]{' ' + p.field if p.field else ''}: {p.message}" for p in problems]


def validation(result: Any) -> tuple[dict[str, Any], str]:
    files = [
        {"path": f.path, "ok": f.ok, "errors": [p.to_json() for p in f.problems]}
        for f in result.files
    ]
    doc = document(result.ok, files=files, errors=[p.to_json() for p in result.problems])
    lines = []
    for report in result.files:
        if not report.ok:
            lines.append(i18n.say("{path}: invalid", path=report.path))
            lines += problems_text(report.problems)
    lines += problems_text(result.problems)
    bad = sum(1 for f in result.files if not f.ok)
    lines.append(
        i18n.say("{files} files checked, {bad} invalid", files=len(result.files), bad=bad)
        + (
            i18n.say(", {problems} problems across tasks", problems=len(result.problems))
            if result.problems
            else ""
        )
    )
    return doc, "\n".join(lines)


def log(report: Any) -> tuple[dict[str, Any], str | Callable[[], str]]:
    rows = report.timeline()
    task = getattr(report, "task", None)  # None: a request that is not a task yet
    doc = document(
        True,
        id=report.id,
        state=task.state if task is not None else report.state,
        history=views.history(task) if task is not None else [],
        timeline=[row.to_json() for row in rows],
    )
    if terminal.is_terminal():
        return doc, lambda: terminal.timeline(report.id, doc["state"], rows)
    lines = []
    for row in rows:
        mark = (
            "  " + i18n.say("(superseded by {winner})", winner=row.superseded_by)
            if row.superseded_by
            else ""
        )
        mark = mark or ("  " + i18n.say("(superseded)") if row.superseded else "")
        what = row.what if row.kind == "transition" else f"{row.kind} {row.what}"
        detail = f": {row.detail}" if row.detail else ""
        by = i18n.say("by {agent}", agent=row.actor)
        lines.append(f"{row.at}  {what:<15} {by}{detail}{mark}")
        lines += [f"  {line}" for line in terminal.row_output_lines(row)]
    return doc, "\n".join(lines)


def audit(result: Any) -> tuple[dict[str, Any], str]:
    doc = document(
        result.ok,
        findings=[f.to_json() for f in result.findings],
        notes=[f.to_json() for f in result.notes],
    )
    lines = [f"{f.path}: [{f.code}] {f.message}" for f in result.findings]
    lines += [f"{i18n.say('note:')} [{f.code}] {f.message}" for f in result.notes]
    lines.append(
        i18n.say("audit clean")
        if result.ok
        else i18n.say("{count} findings", count=len(result.findings))
    )
    return doc, "\n".join(lines)
