"""The names of ledger files and the times in them: pure, and light enough for every command.

A status file is `<seq>-<state>-<nonce>.yaml`; evidence, message and read files are
`stamped_name(at)`, the UTC time they were made, then a nonce; a message's id is
`<task>/<file stem>`. The models of what the files hold are in `taskfs.core.records`.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from taskfs.core import ids

STATUS_NAME_RE = re.compile(r"(?P<seq>[0-9]{4,})-(?P<state>[a-z_]+)-(?P<nonce>[0-9a-z]{8})\.yaml")
STAMPED_NAME_RE = re.compile(
    r"(?P<stamp>[0-9]{8}T[0-9]{6}\.[0-9]{6}Z)-(?P<nonce>[0-9a-z]{8})\.yaml"
)
NONCE_LENGTH = 8
MSG_ID_RE = re.compile(
    r"(?P<task>[a-z0-9][a-z0-9._-]{0,63})/(?P<stem>[0-9]{8}T[0-9]{6}\.[0-9]{6}Z-[0-9a-z]{8})"
)
KEY_ID_RE = re.compile(r"[0-9a-f]{16}")
MAX_SESSION_LENGTH = 200


def status_name(seq: int, state: str) -> str:
    return f"{seq:04d}-{state}-{ids.nonce(NONCE_LENGTH)}.yaml"


def stamped_name(moment: datetime) -> str:
    """A name that sorts by the time it was made and is unique across clones."""
    stamp = moment.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    return f"{stamp}-{ids.nonce(NONCE_LENGTH)}.yaml"


def message_id(task_id: str, file_name: str) -> str:
    """The id of the message stored in `file_name` under the task's messages folder."""
    return f"{task_id}/{file_name.removesuffix('.yaml')}"


def message_location(msg_id: str) -> tuple[str, str] | None:
    """(task id, file name) of the message `msg_id` names, or None when it is no message id."""
    match = MSG_ID_RE.fullmatch(msg_id)
    if match is None:
        return None
    return match.group("task"), match.group("stem") + ".yaml"


def parse_time(value: str) -> datetime:
    """A time written by `format_time` (any ISO 8601 time with an offset) as an aware datetime."""
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def format_time(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
