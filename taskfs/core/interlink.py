"""interlink's vocabulary in taskfs's terms, and the two small decisions its tools need.

Pure: values in, values out. `taskfs.api.messages.interlink` applies them to the ledger.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from taskfs.core import layout, yamlio
from taskfs.errors import fail

# A task's opening is the first message of its conversation. One signed here has an opaque id
# like every other message (interlink de-duplicates by msg_id alone, so an id must not repeat
# across ledgers). A task without a signed opening is named by its envelope file the way an older
# message id names its file (`<task>/<file stem>`), so that `message_status`,
# `conversation_history` and `in_reply_to` treat it like any other message; openings signed
# before opening ids were opaque carry that name too, and keep it.
OPENING_STEM = "envelope"
# The keys of an envelope that name this ledger's agents (petnames, which mean nothing to a
# peer): an opening sent to a peer leaves them out; the peer's side addresses the task itself.
LOCAL_KEYS = ("from", "to")

# The envelope's own keys: a `send_message` text that is a YAML mapping with any of them is an
# envelope (a task to open), anything else is the text of a message.
ENVELOPE_KEYS = frozenset(
    {
        "objective",
        "outputFormat",
        "toolAndSourceGuidance",
        "boundaries",
        "filesAndInterfaces",
        "acceptanceCheck",
        "contextID",
    }
)
# A line that begins (after any indent) with one of the envelope's keys or its acceptance
# check's: words with one are meant as an envelope, however they were mangled on the way.
_LINE_KEYS = "|".join(sorted({*ENVELOPE_KEYS, "passFailCommand", "endToEndVerification"}))
_KEYED_LINE = re.compile(rf"^[ \t]*(?:{_LINE_KEYS})[ \t]*:(?:[ \t]|$)", re.MULTILINE)

# interlink message status -> what it does in taskfs (README: interlink's tools).
VOCABULARY: Mapping[str, str] = {
    "(no task_id, an envelope)": "opens a task: submitted",
    "(none)": "conversation: moves nothing",
    "update": "progress report: moves nothing",
    "needs_input": "working -> input_required; the answer (in_reply_to) moves it back to working",
    "result": "asks for the acceptance check; never completes the task by itself",
    "failed": "-> failed (the text is the reason)",
    "canceled": "-> canceled (cooperative: nothing is stopped by force)",
}


def opening_id(task_id: str) -> str:
    return f"{task_id}/{OPENING_STEM}"


def opening_text(envelope_file: bytes) -> str:
    """The text of a task's opening, made from its envelope file's bytes: the envelope without
    the file's schema comment and without `from` and `to` (local petnames). The same bytes
    always make the same text, so audit can match an opening against its envelope."""
    from taskfs.core import yamlio

    value = yamlio.load(envelope_file)
    if not isinstance(value, dict):
        raise yamlio.YamlError("an envelope is a mapping")
    return yamlio.dump({k: v for k, v in value.items() if k not in LOCAL_KEYS})


def opened_task(msg_id: str) -> str | None:
    """The task whose opening `msg_id` names, or None when it names no opening."""
    task_id, slash, stem = msg_id.partition("/")
    if slash and stem == OPENING_STEM and layout.is_task_id(task_id):
        return task_id
    return None


def envelope_fields(value: Any) -> dict[str, Any] | None:
    """The mapping a parsed `send_message` text holds when it is an envelope, else None."""
    if isinstance(value, dict) and ENVELOPE_KEYS & {k for k in value if isinstance(k, str)}:
        return dict(value)
    return None


def text_fields(text: str) -> dict[str, Any] | None:
    """The envelope fields words arriving at a door carry, or None for prose (YAML that is no
    envelope, or no YAML at all). Words meant as an envelope (a line begins with one of its
    keys) that are not YAML are refused with `yaml_invalid` and the line, as `new` refuses the
    file: one tab in an envelope must not turn it into a request for nothing. Prose with a
    colon stays prose; the lenient reading of words already kept is `intake.fields_of`."""
    try:
        value = yamlio.load(text.encode("utf-8", "surrogateescape"))
    except yamlio.YamlError as exc:
        if _KEYED_LINE.search(text):
            raise fail("yaml_invalid", reason=exc.reason) from None
        return None
    return envelope_fields(value)


def addressed(fields: Mapping[str, Any], sender: str, to: str) -> tuple[dict[str, Any], str | None]:
    """The envelope addressed from `sender` to `to`, or the key that says otherwise."""
    out = dict(fields)
    for key, value in (("to", to), ("from", sender)):
        if out.get(key) not in (None, value):
            return out, key
        out[key] = value
    return out, None


def sticky_task(exchanged: Iterable[tuple[datetime, str, str]]) -> str | None:
    """Reply stickiness: the task of the latest of (at, id, task) exchanged with a peer."""
    latest = max(exchanged, default=None)
    return latest[2] if latest is not None else None
