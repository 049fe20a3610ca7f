"""A check's answer as the CLI (`check`, text and `--json`) and MCP (`agent_check`,
`agent_history`) give it: the verdict, and when it failed, why, in the words of the command.

An agent reads the answer, not the evidence file: a failing check names the tail of what the
command printed (both streams, bounded, so that a long test log costs a few hundred tokens),
whether the owned files were committed (evidence from a dirty tree completes nothing), and a
task that can no longer be completed (canceled, failed, rejected) is said so.

Read from the evidence document as written (its keys, not its model): `check` answers without
loading the evidence models (issue 31).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from taskfs import i18n
from taskfs.core.lifecycle import TERMINAL

TAIL_LINES = 20
TAIL_CHARS = 2000


def tail(text: str, lines: int = TAIL_LINES, chars: int = TAIL_CHARS) -> str:
    """The last `lines` lines of `text`, at most `chars` characters of them (cut at a line
    where it can be); the last lines are where test runners put the failure and its summary."""
    kept = text.rstrip("\n").splitlines()[-lines:]
    out = "\n".join(kept)
    if len(out) <= chars:
        return out
    out = out[-chars:]
    cut = out.find("\n")
    return out[cut + 1 :] if 0 <= cut < len(out) - 1 else out


def output(record: Mapping[str, Any]) -> dict[str, str] | None:
    """The tail of each stream of the run that failed (the check's, else its end-to-end
    command's), from a check's evidence document; None when the check passed or printed
    nothing."""
    if record.get("verdict") == "pass":
        return None
    run = record
    e2e = record.get("endToEnd", {}).get("run")
    if record.get("exitCode") == 0 and not record["limits"]["timedOut"] and e2e is not None:
        run = e2e
    out = {name: tail(run.get(name) or "") for name in ("stdout", "stderr")}
    out = {name: text for name, text in out.items() if text}
    return out or None


def cannot_complete(state: str) -> bool:
    return state in TERMINAL and state != "completed"


def document(result: Any) -> dict[str, Any]:
    """`check --json` and `agent_check`'s fields about the run (`ok` is whether it passed)."""
    record = result.document
    doc: dict[str, Any] = {
        "ok": result.passed,
        "id": result.id,
        "verdict": record["verdict"],
        "evidence": result.evidence,
        "verdictSource": record["verdictSource"],
        "exitCode": record["exitCode"],
        "durationSeconds": record["durationSeconds"],
        "fresh": bool(record.get("fresh")),
        "signed": record.get("signature") is not None,
        "commit": result.commit,
        "workTree": record.get("workTree") or "clean",
        # What the command planted in git's files, and was undone (`git_settings_changed`).
        "warnings": [found.to_json() for found in result.warnings],
    }
    uncommitted = record.get("uncommitted")
    if uncommitted is not None:
        doc["uncommitted"] = list(uncommitted["paths"])
    if result.state:
        doc["state"] = result.state
    said = output(record)
    if said is not None:
        doc["output"] = said
    warnings = notices(result)
    if warnings:
        doc["notes"] = warnings
    return doc


def notices(result: Any) -> list[str]:
    """What the agent must know beside the verdict: evidence that cannot complete the task."""
    record = result.document
    found = []
    if cannot_complete(result.state):
        found.append(
            i18n.say(
                "{id} is {state}: this evidence cannot complete it",
                id=result.id,
                state=result.state,
            )
        )
    uncommitted = record.get("uncommitted")
    if record.get("workTree") == "dirty" and uncommitted is not None:
        from taskfs.core.evidence import ignore_advice
        from taskfs.core.ignores import is_build_output

        paths = list(uncommitted["paths"])
        work = [p for p in paths if not is_build_output(p)]
        if work or not paths:
            found.append(
                i18n.say(
                    "the owned files were not all committed ({paths}): commit them and check "
                    "again before completing",
                    paths=", ".join(work),
                )
            )
        outputs = [p for p in paths if is_build_output(p)]
        if outputs:
            found.append(ignore_advice(outputs))
    return found


def output_lines(record: Mapping[str, Any]) -> list[str]:
    """The failing run's output tail, indented, for the text answer."""
    return said_lines(output(record) or {})


def said_lines(said: Mapping[str, str]) -> list[str]:
    """An output's tail (`output`), stream by stream, indented, for people."""
    lines = []
    for name, text in said.items():
        lines.append(i18n.say("last lines of {stream}:", stream=name))
        lines += [f"    {line}" for line in text.splitlines()]
    return lines
