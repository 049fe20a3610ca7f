"""The archive (contract section 12, issue 31): terminal tasks taken out of the working tree in
one audited commit, kept by history, and recorded in the archive's own files.

An archive act writes `.taskfs/archive/<stamp>-<nonce>.yaml` files (as many as its tasks need,
each under the ledger's file size limit) in the same commit that removes the tasks' folders.
Each file names who archived (`by`), when (`at`), the age asked for (`olderThan`), the commit
whose tree still holds the tasks (`commit`: the archive commit's parent), and one row per task:
what the listings and the rules read of it (its projection, `Summary`, without its ownership
entries: an archived task is terminal, so it never stands in another's way). Every clone that
has the commit reads the same rows, so clones agree on what is archived; the tasks' own files
are read from `commit` when they are shown.

Values in, values out (the read model imports only the leaves). Reading and writing the files
is `taskfs.store.archive_records`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from taskfs.core.lifecycle import TERMINAL
from taskfs.readmodel.projection import Facts, Summary

FORMAT = 1
# Rows per file: each is well under 300 bytes, so a file stays far below the 1 MiB limit.
ROWS_PER_FILE = 2000
OPERATOR = "operator"  # who archives when no agent is named (the person at the terminal)
# A row's fields, in the order a file stores them.
COLUMNS = (
    "id",
    "state",
    "from",
    "to",
    "contextID",
    "holder",
    "superseded",
    "head",
    "headBy",
    "headAt",
    "length",
    "dependsOn",
    "parent",
    "command",
    "follows",
)


class Record(NamedTuple):
    """One archive file: the act and its rows."""

    by: str
    at: str
    older_than: str
    commit: str | None
    tasks: tuple[Summary, ...]


def eligible(summary: Summary, cutoff: datetime) -> bool:
    """Whether an archive with `cutoff` (now less the age asked for) takes the task: a task
    (not a request) in a terminal state, whose last transition is older than the cutoff."""
    if summary.intake or summary.archived or summary.state not in TERMINAL:
        return False
    if summary.head_at is None or summary.problems:
        return False
    return _instant(summary.head_at) <= cutoff


def ended_request(summary: Summary, ended_at: str | None, cutoff: datetime) -> bool:
    """Whether the task is a request (an intake) that ended (canceled, at `ended_at`) before
    `cutoff`: one an archive leaves in place and names. A row keeps no mark of a request, and
    `show` reads an archived one as a task: taking requests would change the archive's format
    (and what every older clone can read)."""
    if not summary.intake or summary.archived or summary.state not in TERMINAL:
        return False
    return ended_at is not None and _instant(ended_at) <= cutoff


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def as_archived(summary: Summary) -> Summary:
    """The task's row as the archive keeps it."""
    env = summary.envelope
    # The command and the link stay: a successor is told from a forged one by its contract
    # (`taskfs.core.lineage`), and a plan keeps working through an archived line.
    facts = Facts(summary.id, env.sender, env.recipient, env.context_id, env.depends_on,
                  env.parent, (), None, env.command, env.follows)  # fmt: skip
    return summary._replace(envelope=facts, overlaps=(), archived=True)


def documents(
    summaries: Sequence[Summary], *, by: str, at: str, older_than: str, commit: str | None
) -> list[str]:
    """The text of the archive files for `summaries` (one per `ROWS_PER_FILE` tasks): a YAML
    mapping whose rows are JSON arrays, which YAML reads as flow sequences."""
    out = []
    for start in range(0, len(summaries), ROWS_PER_FILE):
        head = {"archive": FORMAT, "by": by, "at": at, "olderThan": older_than, "commit": commit}
        lines = [f"{key}: {json.dumps(value)}" for key, value in head.items()]
        lines.append(f"columns: {json.dumps(list(COLUMNS))}")
        lines.append("tasks:")
        lines += [f"- {json.dumps(_row(s))}" for s in summaries[start : start + ROWS_PER_FILE]]
        out.append("\n".join(lines) + "\n")
    return out


def _row(summary: Summary) -> list[Any]:
    env = summary.envelope
    return [
        summary.id,
        summary.state,
        env.sender,
        env.recipient,
        env.context_id,
        summary.holder,
        summary.superseded,
        summary.head,
        summary.head_by,
        summary.head_at,
        summary.length,
        list(env.depends_on),
        env.parent,
        env.command,
        env.follows,
    ]


def read(data: object) -> Record:
    """The archive file `data` (as YAML loaded it); ValueError naming what is wrong."""
    if not isinstance(data, Mapping) or data.get("archive") != FORMAT:
        raise ValueError("not an archive file of this format")
    if list(data.get("columns") or ()) != list(COLUMNS):
        raise ValueError("its columns are not the archive's")
    by, at, older, commit = (data.get(k) for k in ("by", "at", "olderThan", "commit"))
    if not (isinstance(by, str) and isinstance(at, str) and isinstance(older, str)):
        raise ValueError("it does not say who archived, when and how old")
    if commit is not None and not isinstance(commit, str):
        raise ValueError("its commit is not a commit id")
    rows = data.get("tasks")
    if not isinstance(rows, list):
        raise ValueError("it holds no list of tasks")
    return Record(by, at, older, commit, tuple(_summary(row) for row in rows))


def _summary(row: object) -> Summary:
    if not isinstance(row, list) or len(row) != len(COLUMNS):
        raise ValueError("a row is not one of the archive's")
    values = dict(zip(COLUMNS, row, strict=True))
    texts = ("id", "state", "contextID", "head", "headBy", "headAt")
    maybe = ("from", "to", "holder", "parent", "follows")
    if not all(isinstance(values[k], str) for k in texts if values[k] is not None):
        raise ValueError(f"a row's text is not text: {row!r}")
    if not all(values[k] is None or isinstance(values[k], str) for k in maybe):
        raise ValueError(f"a row names an agent or task that is not text: {row!r}")
    if not isinstance(values["command"], str):
        raise ValueError(f"a row's command is not text: {row!r}")
    numbers = (values["superseded"], values["length"])
    deps = values["dependsOn"]
    if not all(type(n) is int for n in numbers) or not isinstance(deps, list):
        raise ValueError(f"a row's numbers or dependencies are not: {row!r}")
    if not isinstance(values["id"], str) or values["state"] not in TERMINAL:
        raise ValueError(f"a row is not a terminal task: {row!r}")
    facts = Facts(values["id"], values["from"], values["to"], values["contextID"] or "",
                  tuple(str(d) for d in deps), values["parent"], (), None, values["command"],
                  values["follows"])  # fmt: skip
    return Summary(
        values["id"],
        facts,
        values["state"],
        values["holder"],
        values["superseded"],
        (),
        values["head"],
        values["headBy"],
        values["length"],
        head_at=values["headAt"],
        archived=True,
        # The file's word, as its state is: a decision reads an archived task from the commit
        # the archive took it from (`taskfs.core.readiness.rests_on_words`), completion and all.
        stands=values["state"] == "completed",
    )


def latest(records: Iterable[tuple[str, Record]]) -> dict[str, tuple[Summary, str | None]]:
    """Each archived task's row and the commit holding its files, from the archive files in
    name (time) order: a task archived twice (two clones, merged) keeps the later record."""
    out: dict[str, tuple[Summary, str | None]] = {}
    for _name, record in sorted(records, key=lambda item: item[0]):
        for summary in record.tasks:
            out[summary.id] = (summary, record.commit)
    return out
