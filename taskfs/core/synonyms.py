"""The words people use for the lifecycle's states, mapped to the state they mean.

`move ID done` is refused (a state is named exactly, so that a script's typo never moves a
task somewhere unintended), and the refusal names the state meant: `completed`.
"""

from __future__ import annotations

import difflib

from taskfs.core.lifecycle import STATES

SYNONYMS: dict[str, str] = {
    "done": "completed",
    "finished": "completed",
    "finish": "completed",
    "complete": "completed",
    "closed": "completed",
    "close": "completed",
    "resolved": "completed",
    "success": "completed",
    "succeeded": "completed",
    "passed": "completed",
    "merged": "completed",
    "cancelled": "canceled",
    "cancel": "canceled",
    "aborted": "canceled",
    "abort": "canceled",
    "stopped": "canceled",
    "in_progress": "working",
    "in-progress": "working",
    "inprogress": "working",
    "doing": "working",
    "started": "working",
    "active": "working",
    "claimed": "working",
    "open": "submitted",
    "new": "submitted",
    "todo": "submitted",
    "pending": "submitted",
    "blocked": "input_required",
    "waiting": "input_required",
    "needs_input": "input_required",
    "input-required": "input_required",
    "auth-required": "auth_required",
    "error": "failed",
    "fail": "failed",
    "failure": "failed",
    "refused": "rejected",
    "reject": "rejected",
    "declined": "rejected",
    "wontfix": "rejected",
}


def meant(word: str) -> str | None:
    """The state `word` most likely means; None when it is no near miss of any."""
    key = word.strip().lower()
    if key in STATES:
        return key
    if key in SYNONYMS:
        return SYNONYMS[key]
    close = difflib.get_close_matches(key, [*STATES, *SYNONYMS], n=1, cutoff=0.7)
    return SYNONYMS.get(close[0], close[0]) if close else None
