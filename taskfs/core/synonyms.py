"""The words people use for the lifecycle's states, mapped to the state they mean.

`move ID done` is refused (a state is named exactly, so that a script's typo never moves a
task somewhere unintended), and the refusal names the state meant: `completed`.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

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


def meant(word: str, states: Sequence[str] = STATES) -> str | None:
    """The state among `states` (the lifecycle's, or those a listing takes: `intake` too) that
    `word` most likely means; None when it is no near miss of any."""
    key = word.strip().lower()
    if key in states:
        return key
    synonyms = {k: v for k, v in SYNONYMS.items() if v in states}
    if key in synonyms:
        return synonyms[key]
    close = difflib.get_close_matches(key, [*states, *synonyms], n=1, cutoff=0.7)
    return synonyms.get(close[0], close[0]) if close else None
